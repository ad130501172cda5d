//! `memd validate`: the daemon's own parser, every error with
//! `file:line:col`, exit 1 on any error, never a panic.

mod common;

use common::{run, stderr, stdout, Sandbox};

#[test]
fn every_example_in_config_is_valid() {
    let config = concat!(env!("CARGO_MANIFEST_DIR"), "/config");
    let out = run(&["validate", config]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert_eq!(stdout(&out), "");
    // At least 40 items across every kind.
    let summary = stderr(&out);
    let items: usize = summary
        .split(", ")
        .find_map(|part| part.strip_suffix(" item(s)"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no item count in {summary}"));
    assert!(items >= 40, "{summary}");
}

/// Finds the line reporting `file`, checks it has `file:line:col: ` and
/// the expected words, and returns it.
fn report_for(report: &str, file: &str, words: &str) -> String {
    let line = report
        .lines()
        .find(|l| l.contains(&format!("/{file}:")))
        .unwrap_or_else(|| panic!("no error for {file} in:\n{report}"));
    let after = line.split_once(&format!("/{file}:")).unwrap().1;
    let mut parts = after.splitn(3, ':');
    let line_no: u32 = parts
        .next()
        .unwrap()
        .parse()
        .unwrap_or_else(|_| panic!("line number in {line}"));
    let col: u32 = parts
        .next()
        .unwrap()
        .parse()
        .unwrap_or_else(|_| panic!("column in {line}"));
    assert!(line_no >= 1 && col >= 1, "{line}");
    assert!(
        line.to_lowercase().contains(&words.to_lowercase()),
        "`{words}` not in {line}"
    );
    line.to_string()
}

#[test]
fn broken_files_each_get_a_located_error_and_nothing_panics() {
    let sandbox = Sandbox::new();
    sandbox.write(
        "bad-yaml.yaml",
        "patterns:\n  - id: P-1\n    name: [unclosed\n    problem: x\n",
    );
    sandbox.write(
        "wrong-types.yaml",
        "patterns:\n  - id: P-2\n    name: n\n    problem: p\n    solution: s\n    times_applied: many\n",
    );
    sandbox.write(
        "missing-field.yaml",
        "anti_patterns:\n  - id: A-1\n    name: n\n    problem: p\n",
    );
    sandbox.write(
        "dup-a.yaml",
        "gotchas:\n  - id: G-1\n    title: t\n    fix: f\n",
    );
    sandbox.write(
        "dup-b.yaml",
        "gotchas:\n  - {id: G-0, title: t, fix: f}\n  - id: G-1\n    title: t2\n    fix: f2\n",
    );
    let mut bomb = String::from(
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    let mut prev = 'a';
    for name in 'b'..='j' {
        bomb.push_str(&format!("{name}: &{name} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n"));
        prev = name;
    }
    sandbox.write("bomb.yaml", bomb);
    sandbox.write(
        "invalid-utf8.yaml",
        b"gotchas:\n  - id: G-9\n    title: caf\xe9\n    fix: f\n",
    );
    let big = format!(
        "gotchas:\n{}",
        "  # padding padding padding padding padding padding padding\n".repeat(160_000)
    );
    assert!(big.len() > 9 * 1024 * 1024);
    sandbox.write("big.yaml", big);
    sandbox.write("bad.json", "{\n  \"common_mistakes\": [\"x\",]\n}\n");
    sandbox.write(
        "obs.jsonl",
        "{\"id\":\"o1\",\"type\":\"decision\",\"content\":\"c\"}\n",
    );

    let root = sandbox.root().display().to_string();
    let out = run(&["validate", &root]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "exit 1 on errors, not a panic: {}",
        stderr(&out)
    );
    let report = stdout(&out);
    report_for(&report, "bad-yaml.yaml", "");
    report_for(
        &report,
        "wrong-types.yaml",
        "`times_applied` must be a non-negative integer",
    );
    report_for(
        &report,
        "missing-field.yaml",
        "anti_pattern `A-1`: missing required field `instead`",
    );
    let dup = report_for(
        &report,
        "dup-b.yaml",
        "duplicate id `G-1`: already defined at",
    );
    assert!(dup.contains("dup-a.yaml:2:"), "{dup}");
    report_for(&report, "bomb.yaml", "");
    let utf8 = report_for(&report, "invalid-utf8.yaml", "invalid UTF-8");
    assert!(utf8.contains("invalid-utf8.yaml:3:15:"), "{utf8}");
    report_for(&report, "big.yaml", "over the 8 MiB limit");
    let json = report_for(&report, "bad.json", "");
    assert!(json.contains("bad.json:2:"), "{json}");
    report_for(&report, "obs.jsonl", "missing required field `created_at`");
    // The good items of a file with one bad item still count.
    let summary = stderr(&out);
    assert!(summary.contains("2 item(s)"), "{summary}");
}

#[test]
fn validating_single_files_and_missing_paths() {
    let sandbox = Sandbox::new();
    let good = sandbox.write("ok.yaml", "gotchas:\n  - {id: G-1, title: t, fix: f}\n");
    let out = run(&["validate", good.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = run(&["validate", "/definitely/not/here.yaml"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no such file"));
}
