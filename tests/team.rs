//! The team learns together through the repository's git (issue 35): two
//! engineers, two HOMEs, two daemons, two clones of one bare repository,
//! real git and the real binaries.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{eventually, stderr, stdout, Daemon, Sandbox};
use serde_json::Value;

const LESSONS: &str = "lessons:
  - id: L-1
    text: Run the billing database migrations inside one transaction
  - id: L-2
    text: The billing schema changes need a reviewer from the payments team
";

const PROMPT: &str = "migrate the billing database schema";

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// One engineer: a HOME, a clone, a daemon judging every item irrelevant.
struct Engineer {
    home: PathBuf,
    clone: PathBuf,
    daemon: Daemon,
    _sandbox: Sandbox,
}

fn git(home: &Path, dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("GIT_DIR")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}{}",
        dir.display(),
        stdout(&out),
        stderr(&out)
    );
    stdout(&out)
}

impl Engineer {
    fn new(top: &Path, name: &str, origin: &Path) -> Engineer {
        let home = top.join(format!("home-{name}"));
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(
            home.join(".gitconfig"),
            format!(
                "[user]\n\tname = {name}\n\temail = {name}@example.com\n[init]\n\tdefaultBranch = main\n[pull]\n\trebase = false\n"
            ),
        )
        .unwrap();
        let clone = top.join(format!("clone-{name}"));
        git(
            &home,
            top,
            &[
                "clone",
                "-q",
                &origin.display().to_string(),
                &clone.display().to_string(),
            ],
        );
        let sandbox = Sandbox::new();
        let judge = serde_json::Value::from(fixture("judge.sh")).to_string();
        std::fs::write(
            sandbox.config(),
            format!("roots = []\n[evaluator]\ncommand = [\"sh\", {judge}]\n"),
        )
        .unwrap();
        let daemon = Daemon::start_with(&sandbox, &[("HOME", home.to_str().unwrap())]);
        Engineer {
            home,
            clone,
            daemon,
            _sandbox: sandbox,
        }
    }

    fn git(&self, args: &[&str]) -> String {
        git(&self.home, &self.clone, args)
    }

    /// The lessons shown for the prompt in this clone, in `session`.
    fn shown(&self, session: &str) -> Vec<String> {
        let cwd = self.clone.display().to_string();
        let v = self.daemon.json(&[
            "query",
            "--task",
            PROMPT,
            "--cwd",
            &cwd,
            "--session",
            session,
            "--kinds",
            "lesson",
        ]);
        common::item_ids(&v)
    }

    fn memctl(&self, args: &[&str]) -> String {
        let out = self.daemon.memctl(args);
        assert!(
            out.status.success(),
            "memctl {args:?}: {}{}",
            stdout(&out),
            stderr(&out)
        );
        stdout(&out)
    }

    fn file(&self, member: &str) -> PathBuf {
        self.clone
            .join(".memd/learned")
            .join(format!("{member}@example.com.jsonl"))
    }

    /// The team's verdicts on `id` as `memctl log --team` gives them,
    /// without which of them is this engineer's.
    fn team_state(&self, id: &str) -> Vec<Value> {
        let v = self.daemon.json(&["log", id]);
        let mut lines: Vec<Value> = v["ok"]["log"][0]["team"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .map(|mut l| {
                l.as_object_mut().unwrap().remove("own");
                l
            })
            .collect();
        lines.sort_by_key(|l| l["member"].as_str().unwrap().to_string());
        lines
    }
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn two_engineers_learn_together_through_git() {
    let top = tempfile::tempdir().unwrap();
    let top = top.path();
    let origin = top.join("origin.git");
    let seed_home = top.join("home-seed");
    std::fs::create_dir_all(&seed_home).unwrap();
    std::fs::write(
        seed_home.join(".gitconfig"),
        "[user]\n\tname = seed\n\temail = seed@example.com\n[init]\n\tdefaultBranch = main\n",
    )
    .unwrap();
    git(
        &seed_home,
        top,
        &["init", "-q", "--bare", origin.to_str().unwrap()],
    );
    // The project: its knowledge, shared with the team.
    let work = top.join("billing-svc");
    git(
        &seed_home,
        top,
        &[
            "clone",
            "-q",
            origin.to_str().unwrap(),
            work.to_str().unwrap(),
        ],
    );
    std::fs::create_dir_all(work.join(".memd")).unwrap();
    std::fs::write(work.join(".memd/lessons.yaml"), LESSONS).unwrap();
    let init = Command::new(common::memctl_path())
        .args(["team", "init", "--name", "billing-svc"])
        .current_dir(&work)
        .output()
        .unwrap();
    assert!(init.status.success(), "{}", stderr(&init));
    let settings = std::fs::read_to_string(work.join(".memd/team.toml")).unwrap();
    assert!(settings.contains("name = \"billing-svc\""), "{settings}");
    let ignored = std::fs::read_to_string(work.join(".memd/learned/.gitignore")).unwrap();
    assert_eq!(ignored, "*.memd-backup-*\n");
    git(&seed_home, &work, &["add", "-A"]);
    git(
        &seed_home,
        &work,
        &["commit", "-qm", "billing-svc shares its verdicts"],
    );
    git(&seed_home, &work, &["push", "-q", "origin", "HEAD:main"]);

    let ann = Engineer::new(top, "ann", &origin);
    let bob = Engineer::new(top, "bob", &origin);

    // Bob finds L-1 irrelevant once: his own file, and not enough alone.
    assert!(bob.shown("b-1").contains(&"L-1".to_string()));
    bob.memctl(&["feedback", "L-1", "--irrelevant"]);
    assert_eq!(lines(&bob.file("bob")).len(), 1);
    assert!(bob.shown("b-2").contains(&"L-1".to_string()));

    // Ann: direct feedback, then an evaluated session, land in her file.
    assert!(ann.shown("a-1").contains(&"L-1".to_string()));
    ann.memctl(&["feedback", "L-1", "--irrelevant"]);
    ann.memctl(&[
        "session-end",
        "a-1",
        "--transcript",
        &fixture("transcript.jsonl"),
    ]);
    let evaluated = ann.memctl(&["evaluate"]);
    assert!(evaluated.contains("a-1: 2 item(s) judged"), "{evaluated}");
    let events = lines(&ann.file("ann"));
    assert!(
        events.len() >= 2
            && events.iter().any(|e| e["weight"] == 2.0)
            && events.iter().any(|e| e["weight"] == 1.0),
        "{events:?}"
    );
    for e in &events {
        let mut keys: Vec<&String> = e.as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(
            keys,
            ["event", "item", "member", "repo", "tags", "time", "verdict", "weight"],
            "{e}"
        );
        assert_eq!(e["member"], "ann@example.com");
        assert_eq!(e["repo"], "billing-svc");
    }
    // Nothing of the prompt or the transcript is in the shared file.
    let shared = std::fs::read_to_string(ann.file("ann")).unwrap();
    for secret in [
        "migrate",
        "schema",
        "Stripe",
        "webhook",
        "idempotency",
        "home-",
    ] {
        assert!(!shared.contains(secret), "{secret} in {shared}");
    }
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(ann.file("ann")).unwrap().permissions(),
    );
    assert_eq!(mode & 0o777, 0o644);

    // Ann pushes; Bob pulls, and his running daemon follows.
    ann.git(&["add", ".memd/learned"]);
    ann.git(&["commit", "-qm", "ann's verdicts"]);
    ann.git(&["push", "-q", "origin", "HEAD:main"]);
    bob.git(&["pull", "-q", "origin", "main"]);
    let mut n = 3;
    eventually("bob's daemon filters L-1 on the team's verdicts", || {
        n += 1;
        !bob.shown(&format!("b-{n}")).contains(&"L-1".to_string())
    });
    let why = bob.memctl(&[
        "explain",
        "L-1",
        "--task",
        PROMPT,
        "--cwd",
        bob.clone.to_str().unwrap(),
    ]);
    assert!(
        why.contains("filtered by the team's verdicts") && why.contains("ann@example.com"),
        "{why}"
    );

    // Both append and commit on diverged branches; the merge is clean.
    bob.git(&["add", ".memd/learned"]);
    bob.git(&["commit", "-qm", "bob's verdicts"]);
    ann.shown("a-2");
    ann.memctl(&["feedback", "L-2", "--relevant"]);
    ann.git(&["add", ".memd/learned"]);
    ann.git(&["commit", "-qm", "ann's second verdicts"]);
    ann.git(&["push", "-q", "origin", "HEAD:main"]);
    bob.git(&["pull", "-q", "--no-edit", "origin", "main"]);
    bob.git(&["push", "-q", "origin", "HEAD:main"]);
    ann.git(&["pull", "-q", "origin", "main"]);
    assert_eq!(
        std::fs::read(ann.file("bob")).unwrap(),
        std::fs::read(bob.file("bob")).unwrap()
    );
    assert_eq!(
        std::fs::read(ann.file("ann")).unwrap(),
        std::fs::read(bob.file("ann")).unwrap()
    );
    for id in ["L-1", "L-2"] {
        eventually("both compute the same team state", || {
            let a = ann.team_state(id);
            !a.is_empty() && a == bob.team_state(id)
        });
    }
    assert!(!ann.shown("a-3").contains(&"L-1".to_string()));

    // Ann compacts her own file: one snapshot line, the same evidence,
    // nobody else's file touched; Bob pulls it and computes the same.
    let before = (ann.team_state("L-1"), ann.team_state("L-2"));
    let bobs = std::fs::read(ann.file("bob")).unwrap();
    let out = ann.memctl(&["team", "compact", "--cwd", ann.clone.to_str().unwrap()]);
    assert!(
        out.contains("replaced by one snapshot of 2 item(s)"),
        "{out}"
    );
    assert_eq!(lines(&ann.file("ann")).len(), 1);
    assert_eq!(std::fs::read(ann.file("bob")).unwrap(), bobs);
    assert_eq!((ann.team_state("L-1"), ann.team_state("L-2")), before);
    ann.git(&["add", ".memd/learned"]);
    let staged = ann.git(&["status", "--porcelain"]);
    assert!(
        !staged.contains("memd-backup"),
        "the backup is not for git: {staged}"
    );
    ann.git(&["commit", "-qm", "ann compacts her verdicts"]);
    ann.git(&["push", "-q", "origin", "HEAD:main"]);
    bob.git(&["pull", "-q", "origin", "main"]);
    eventually("bob reads the snapshot as the events it replaced", || {
        (bob.team_state("L-1"), bob.team_state("L-2")) == before
            && lines(&bob.file("ann")).len() == 1
    });
    assert!(!bob.shown("b-50").contains(&"L-1".to_string()));

    // Bad lines cost nothing: reported with file and line, the rest read.
    let mut text = std::fs::read_to_string(bob.file("ann")).unwrap();
    let first = text.lines().next().unwrap().to_string();
    text.push_str("{ not an event\n");
    text.push_str(&first);
    text.push('\n');
    text.push_str(
        &first
            .replace("\"L-1\"", "\"L-404\"")
            .replace("ann@example.com\"", "mallory@example.com\""),
    );
    text.push('\n');
    std::fs::write(bob.file("ann"), text).unwrap();
    eventually("the bad lines are reported", || {
        bob.daemon.json(&["status"])["ok"]["status"]["teams"][0]["files"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["skipped"] == 3)
    });
    let status = bob.memctl(&["status"]);
    let file = bob.file("ann").display().to_string();
    let count = 1;
    for (line, what) in [
        (count + 1, "not an event"),
        (count + 2, "duplicated or forged"),
        (count + 3, "of `mallory@example.com` in"),
    ] {
        assert!(
            status.contains(&format!("{file}:{line}: ")) && status.contains(what),
            "{file}:{line} {what}: {status}"
        );
    }
    assert!(
        status.contains("your events not committed yet: 0"),
        "{status}"
    );
    assert!(!bob.shown("b-99").contains(&"L-1".to_string()));
}
