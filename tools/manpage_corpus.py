#!/usr/bin/env python3
"""Builds the relevance bench's second knowledge set from real technical
writing nobody on this project wrote: the documented pitfalls, notes and
examples in the manual pages of well-known tools (git, OpenSSH, curl,
OpenSSL, coreutils, findutils, PostgreSQL's psql, the Linux system calls and
C library, ...), as Debian ships them.

The text is not committed (each page keeps its own licence); this script
makes it again from the pages installed on the machine, in memd's own
formats, into DIR:

    python3 tools/manpage_corpus.py DIR

Pages come from benches/relevance/manpages/pages.txt. Each kept section's
paragraphs become items, by what the section is:

- BUGS, CAVEATS, WARNINGS, SECURITY, LIMITATIONS, RESTRICTIONS,
  COMPATIBILITY, PORTABILITY: gotchas (the first sentence is the title,
  the paragraph the fix);
- NOTES, and every paragraph of the FAQ and guide pages (gitfaq, giteveryday,
  gitworkflows): lessons;
- EXAMPLES: patterns (the prose is the problem and the solution, the
  command lines the code).

An item's id is the page and section and the paragraph's number in it
(`find.1-examples-3`), so labels stay valid while the pages do; DIR/SOURCES.tsv
names each item's page, section and Debian package with its version, and
the bench warns when the package versions differ from those the labels
were made on (benches/relevance/manpages/packages.tsv).

Needs `man` (man-db) and the packages that ship the pages: on Debian 12,
git-man, manpages, manpages-dev, openssh-client, curl, openssl, findutils,
coreutils, postgresql-client and the rest named in packages.tsv.
"""

import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LISTS = os.path.join(HERE, "..", "benches", "relevance", "manpages")

GOTCHA = {"BUGS", "CAVEATS", "WARNINGS", "WARNING", "SECURITY", "SECURITY CONSIDERATIONS",
          "LIMITATIONS", "RESTRICTIONS", "COMPATIBILITY", "PORTABILITY", "KNOWN ISSUES",
          "KNOWN BUGS"}
LESSON = {"NOTES", "NOTE"}
PATTERN = {"EXAMPLES", "EXAMPLE"}
# Guides whose every section is advice.
GUIDES = {"gitfaq.7", "giteveryday.7", "gitworkflows.7"}
SKIP_IN_GUIDES = {"NAME", "SYNOPSIS", "SEE ALSO", "GIT", "AUTHOR", "AUTHORS", "REPORTING BUGS"}

SECTION = re.compile(r"^[A-Z][A-Z0-9 ,/()&'-]*$")
MIN_WORDS = 12
MAX_CHARS = 1200


def render(page):
    env = dict(os.environ, MANWIDTH="2000", MAN_KEEP_FORMATTING="", LC_ALL="C.UTF-8")
    name, _, section = page.rpartition(".")
    out = subprocess.run(["man", "-P", "cat", section, name], capture_output=True,
                         text=True, env=env, timeout=60)
    return out.stdout


def blocks(lines):
    """Runs of non-blank lines, each as (indent of its first line, lines)."""
    run = []
    for line in lines + [""]:
        if line.strip():
            run.append(line.rstrip())
        elif run:
            yield len(run[0]) - len(run[0].lstrip()), run
            run = []


def one_line(text):
    text = text.replace("\u2010", "-").replace("\u00ad", "")
    return re.sub(r"\s+", " ", text).strip()


def first_sentence(text, words=16):
    m = re.match(r"(.+?[.!?:])(\s|$)", text)
    head = m.group(1) if m else text
    w = head.split()
    return " ".join(w[:words]) + ("..." if len(w) > words else "")


def is_code(indent, run, base):
    first = run[0].strip()
    if first.startswith(("$ ", "# ", "% ", "git ", "$")) and not first.endswith("."):
        return True
    return indent > base + 2 and not re.search(r"[a-z]{3,}[.,;:]( |$)", " ".join(run))


def items_of(page, text):
    """(kind, section, n, fields) for the page's kept paragraphs."""
    tool = page.rpartition(".")[0]
    sections = {}
    order = []
    current = None
    for line in text.split("\n"):
        if line and not line[0].isspace() and SECTION.match(line.strip()) and len(line) < 50:
            current = line.strip()
            if current not in sections:
                order.append(current)
                sections[current] = []
            continue
        if current is not None:
            sections[current].append(line)
    out = []
    for name in order:
        if page in GUIDES and name not in SKIP_IN_GUIDES:
            kind = "lesson"
        elif name in GOTCHA:
            kind = "gotcha"
        elif name in LESSON:
            kind = "lesson"
        elif name in PATTERN:
            kind = "pattern"
        else:
            continue
        runs = list(blocks(sections[name]))
        if not runs:
            continue
        base = min(indent for indent, _ in runs)
        n = 0
        if kind == "pattern":
            # An example: prose, then the command lines that follow it.
            prose, code = [], []

            def flush():
                nonlocal n
                words = " ".join(prose).split()
                if len(words) >= 6 and code:
                    n += 1
                    text = one_line(" ".join(prose))[:MAX_CHARS]
                    out.append(("pattern", name, n, {
                        "name": f"{tool}: {first_sentence(text, 12)}",
                        "problem": text,
                        "solution": text,
                        "code": "\n".join(c.strip() for c in code)[:MAX_CHARS],
                    }))
                prose.clear()
                code.clear()

            for indent, run in runs:
                if is_code(indent, run, base):
                    code.extend(run)
                else:
                    if code:
                        flush()
                    prose.extend(l.strip() for l in run)
            flush()
            continue
        for indent, run in runs:
            text = one_line(" ".join(l.strip() for l in run))
            if len(text.split()) < MIN_WORDS or is_code(indent, run, base):
                continue
            text = re.sub(r"^[\u2022*-]\s+", "", text)[:MAX_CHARS]
            n += 1
            if kind == "gotcha":
                out.append(("gotcha", name, n, {
                    "title": f"{tool}: {first_sentence(text)}",
                    "fix": text,
                }))
            else:
                out.append(("lesson", name, n, {"text": f"{tool}: {text}"}))
    return out


def package_of(page):
    name, _, section = page.rpartition(".")
    out = subprocess.run(["man", "-w", section, name], capture_output=True, text=True)
    path = out.stdout.strip()
    owner = subprocess.run(["dpkg", "-S", path], capture_output=True, text=True).stdout
    pkg = owner.split(":")[0].strip() if owner else "?"
    ver = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", pkg],
                         capture_output=True, text=True).stdout.strip() or "?"
    return pkg, ver


def yaml_string(text):
    # A JSON string is a YAML double-quoted scalar; controls are dropped.
    return json.dumps("".join(c for c in text if c == "\n" or c >= " "), ensure_ascii=False)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    pages = [l.strip() for l in open(os.path.join(LISTS, "pages.txt")) if l.strip()]
    by_kind = {"gotcha": [], "lesson": [], "pattern": []}
    sources = []
    packages = {}
    for page in pages:
        text = render(page)
        if not text:
            print(f"missing page: {page}", file=sys.stderr)
            continue
        found = items_of(page, text)
        if not found:
            continue
        pkg, ver = package_of(page)
        packages[pkg] = ver
        for kind, section, n, fields in found:
            slug = re.sub(r"[^a-z0-9]+", "-", section.lower()).strip("-")
            item_id = f"{page}-{slug}-{n}"
            by_kind[kind].append((item_id, fields))
            sources.append((item_id, kind, page, section, pkg))
    keys = {"gotcha": "gotchas", "lesson": "lessons", "pattern": "patterns"}
    for kind, entries in by_kind.items():
        with open(os.path.join(out_dir, f"{keys[kind]}.yaml"), "w") as f:
            f.write(f"{keys[kind]}:\n")
            for item_id, fields in entries:
                f.write(f"  - id: {yaml_string(item_id)}\n")
                for k, v in fields.items():
                    f.write(f"    {k}: {yaml_string(v)}\n")
    with open(os.path.join(out_dir, "SOURCES.tsv"), "w") as f:
        f.write("id\tkind\tpage\tsection\tpackage\n")
        for row in sources:
            f.write("\t".join(row) + "\n")
    with open(os.path.join(out_dir, "PACKAGES.tsv"), "w") as f:
        for pkg in sorted(packages):
            f.write(f"{pkg}\t{packages[pkg]}\n")
    counts = {k: len(v) for k, v in by_kind.items()}
    print(f"{sum(counts.values())} items {counts} from {len(packages)} packages into {out_dir}")


if __name__ == "__main__":
    main()
