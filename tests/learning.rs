//! Learning from use through the real daemon: feedback and its seed-001
//! arithmetic, filtering by context, tracking and effectiveness, audits,
//! log and export, and durability across a SIGKILL.

mod common;

use std::io::Write;

use common::{inner, stdout, Daemon, Sandbox};
use serde_json::Value;

const LESSONS: &str = "lessons:
  - id: L-1
    text: Run the database migrations before the integration tests
    prerequisites: { tags: [python] }
  - id: L-2
    text: Integration tests need the docker compose stack up
";

fn tag_line(entry: &Value, tag: &str) -> (f64, u64, u64) {
    let line = entry["tags"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["tag"] == tag)
        .unwrap_or_else(|| panic!("no {tag} in {entry}"));
    (
        line["score"].as_f64().unwrap(),
        line["positive"].as_u64().unwrap(),
        line["negative"].as_u64().unwrap(),
    )
}

/// The ids of the lessons on the tests' task with `tags`, in order.
fn lesson_ids(daemon: &Daemon, tags: &str) -> Vec<String> {
    common::item_ids(&lessons_on_the_test_prompt(daemon, tags))
}

/// `memctl query` for lessons on the tests' task with `tags`: its reply.
fn lessons_on_the_test_prompt(daemon: &Daemon, tags: &str) -> Value {
    daemon.json(&[
        "query",
        "--task",
        "run the integration tests",
        "--tags",
        tags,
        "--kinds",
        "lesson",
    ])
}

/// `memctl explain ID` on the tests' task in the context of `tags`.
fn explain(daemon: &Daemon, id: &str, tags: &str) -> String {
    stdout(&daemon.memctl(&[
        "explain",
        id,
        "--task",
        "run the integration tests",
        "--tags",
        tags,
    ]))
}

/// A query for lessons on the tests' task in session `id` with `tags`,
/// left open; its answer.
fn open_session(daemon: &Daemon, id: &str, tags: &str) -> Value {
    daemon.json(&[
        "query",
        "--task",
        "run the integration tests",
        "--tags",
        tags,
        "--session",
        id,
        "--kinds",
        "lesson",
    ])
}

#[test]
fn feedback_follows_the_seed_and_filters_only_its_context() {
    let sandbox = Sandbox::new();
    sandbox.write("lessons.yaml", LESSONS);
    let daemon = Daemon::start(&sandbox);
    assert!(lesson_ids(&daemon, "python").contains(&"L-1".to_string()));

    // Direct feedback weighs 2.0: -0.6, then -0.6 x 0.7 - 0.6 = -1.02.
    let first = daemon.json(&["feedback", "L-1", "--irrelevant", "--tags", "python"]);
    let (score, pos, neg) = tag_line(&first["ok"]["judged"], "python");
    assert!(
        (score + 0.6).abs() < 1e-9 && pos == 0 && neg == 1,
        "{first}"
    );
    let second = daemon.json(&["feedback", "L-1", "--irrelevant", "--tags", "python"]);
    assert!((tag_line(&second["ok"]["judged"], "python").0 + 1.02).abs() < 1e-9);

    // Two evaluations are not yet evidence: still shown.
    assert!(lesson_ids(&daemon, "python").contains(&"L-1".to_string()));
    daemon.json(&["feedback", "L-1", "--irrelevant", "--tags", "python"]);
    // Three, averaging below -0.1 over the query's tags: filtered here...
    assert!(!lesson_ids(&daemon, "python").contains(&"L-1".to_string()));
    // ...but where half the context was never judged (missing tags count
    // 0.0: -1.314/2), only 1.5 judged sessions speak for it: still shown.
    assert!(lesson_ids(&daemon, "python,github").contains(&"L-1".to_string()));
    // ...and still shown where it was not judged.
    assert!(lesson_ids(&daemon, "rust").contains(&"L-1".to_string()));
    assert!(lesson_ids(&daemon, "python").contains(&"L-2".to_string()));

    let explain = explain(&daemon, "L-1", "python");
    assert!(explain.contains("filtered"), "{explain}");
    // Made by feedback alone, the score is read in the evaluator's unit.
    assert!(
        explain.contains("average -1.314 (-0.657 in the evaluator's unit"),
        "{explain}"
    );

    // Feedback without tags applies to the tags of the query that last
    // showed the item.
    lesson_ids(&daemon, "rust");
    let v = daemon.json(&["feedback", "L-1", "--relevant"]);
    let (score, pos, _) = tag_line(&v["ok"]["judged"], "rust");
    assert!((score - 0.6).abs() < 1e-9 && pos == 1, "{v}");

    // The seed's log format.
    let log = stdout(&daemon.memctl(&["log", "L-1"]));
    assert!(log.contains("Tags:"), "{log}");
    assert!(log.contains("python  -1.314  (+0/-3)"), "{log}");
    assert!(log.contains("rust    +0.600  (+1/-0)"), "{log}");
}

#[test]
fn tracking_feeds_effectiveness_and_history() {
    let sandbox = Sandbox::new();
    sandbox.write(
        "index.yaml",
        "learnings:\n  - learning_id: T-1\n    learning_type: bugfix\n    title: Import path errors\n    description: d\n    keywords: [import, path]\n",
    );
    sandbox.write(
        "patterns.yaml",
        "patterns:\n  - {id: P-1, name: n, problem: import path errors, solution: s, confidence: high, times_applied: 1}\n",
    );
    let daemon = Daemon::start(&sandbox);
    let v = daemon.json(&["track", "T-1", "--applied", "--score", "0.5"]);
    assert_eq!(v["ok"]["tracked"]["effectiveness"], 0.5);
    let v = daemon.json(&["track", "T-1", "--applied", "--helpful"]);
    assert!((v["ok"]["tracked"]["effectiveness"].as_f64().unwrap() - 0.65).abs() < 1e-9);
    let block = stdout(&daemon.memctl(&["query", "--task", "fix the import path errors"]));
    assert!(
        block.contains("**Historical Effectiveness:** 0.65"),
        "{block}"
    );
    // Applications recorded through tracking count toward pattern history:
    // high confidence with 1 + 2 applications is proven (2 points).
    let before = daemon.json(&["explain", "P-1", "--task", "import path errors"]);
    assert_eq!(before["ok"]["explanation"]["dimensions"]["history"], 1.0);
    daemon.json(&["track", "P-1", "--applied"]);
    daemon.json(&["track", "P-1", "--applied"]);
    let after = daemon.json(&["explain", "P-1", "--task", "import path errors"]);
    assert_eq!(after["ok"]["explanation"]["dimensions"]["history"], 2.0);
    let bad = daemon.memctl(&["track", "T-1", "--score", "7"]);
    assert_eq!(bad.status.code(), Some(1));
}

#[test]
fn learned_state_and_audits_survive_a_restart_and_export_as_yaml() {
    let sandbox = Sandbox::new();
    sandbox.write("lessons.yaml", LESSONS);
    {
        let mut daemon = Daemon::start(&sandbox);
        daemon.json(&["feedback", "L-2", "--relevant", "--tags", "docker"]);
        daemon.json(&["track", "L-2", "--applied", "--helpful"]);
        let v = daemon.json(&[
            "query",
            "--task",
            "run the integration tests",
            "--session",
            "s-9",
            "--tags",
            "python",
        ]);
        assert!(!v["ok"]["answer"]["items"].as_array().unwrap().is_empty());
        let ended = daemon.json(&["session-end", "s-9", "--transcript", "/tmp/t.jsonl"]);
        assert!(ended["ok"]["session_ended"]["shown"].as_u64().unwrap() >= 1);
        daemon.stop();
    }
    let daemon = Daemon::start(&sandbox);
    let log = daemon.json(&["log", "L-2"]);
    let entry = &log["ok"]["log"][0];
    assert!((tag_line(entry, "docker").0 - 0.6).abs() < 1e-9);
    assert_eq!(entry["times_applied"], 1);
    // The session remembers what it was shown.
    let v = daemon.json(&[
        "query",
        "--task",
        "run the integration tests",
        "--session",
        "s-9",
        "--tags",
        "python",
    ]);
    assert!(
        v["ok"]["answer"]["items"].as_array().unwrap().is_empty(),
        "{v}"
    );
    let yaml = stdout(&daemon.memctl(&["export"]));
    assert!(yaml.contains("memd_export: 1"), "{yaml}");
    assert!(yaml.contains("L-2"), "{yaml}");
    assert!(yaml.contains("docker"), "{yaml}");
}

#[test]
fn every_acknowledged_feedback_survives_sigkill() {
    let sandbox = Sandbox::new();
    sandbox.write("lessons.yaml", LESSONS);
    let mut daemon = Daemon::start(&sandbox);
    let pid = daemon.child.id();
    let socket = daemon.socket.clone();
    let sender = std::thread::spawn(move || {
        let mut acknowledged = 0u64;
        for _ in 0..400 {
            let out = std::process::Command::new(common::memctl_path())
                .args([
                    "feedback",
                    "L-2",
                    "--irrelevant",
                    "--tags",
                    "kill",
                    "--socket",
                ])
                .arg(&socket)
                .output()
                .unwrap();
            if !out.status.success() {
                break;
            }
            acknowledged += 1;
        }
        acknowledged
    });
    std::thread::sleep(std::time::Duration::from_millis(400));
    let _ = std::process::Command::new("kill")
        .arg("-KILL")
        .arg(pid.to_string())
        .status();
    let _ = daemon.child.wait();
    let acknowledged = sender.join().unwrap();
    assert!(
        acknowledged > 0,
        "no feedback was acknowledged before the kill"
    );
    drop(daemon);
    let daemon = Daemon::start(&sandbox);
    let log = daemon.json(&["log", "L-2"]);
    let negatives = tag_line(&log["ok"]["log"][0], "kill").2;
    assert!(
        negatives >= acknowledged && negatives <= acknowledged + 1,
        "{acknowledged} acknowledged, {negatives} applied"
    );
}

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// Configures `command` (each argument a TOML string) as the judge.
fn judged_by(sandbox: &Sandbox, command: &[&str]) {
    let argv: Vec<String> = command
        .iter()
        .map(|a| serde_json::Value::from(*a).to_string())
        .collect();
    std::fs::write(
        sandbox.config(),
        format!("roots = []\n[evaluator]\ncommand = [{}]\n", argv.join(", ")),
    )
    .unwrap();
}

/// Configures the scripted judge `judge-by-tag.sh` with `plan` (JSON: the
/// raw scores, in order, for the sessions whose first tag is each key).
fn judged_by_tag(sandbox: &Sandbox, plan: &str) {
    let state = sandbox.dir.path().join("judge-state.json");
    judged_by(
        sandbox,
        &[
            "sh",
            &fixture("judge-by-tag.sh"),
            plan,
            &state.display().to_string(),
        ],
    );
}

/// One session: a query that shows the lessons with `tags`, then its end
/// with the fixture transcript.
fn session(daemon: &Daemon, id: &str, tags: &str) {
    let v = open_session(daemon, id, tags);
    assert!(
        !v["ok"]["answer"]["items"].as_array().unwrap().is_empty(),
        "{v}"
    );
    daemon.json(&[
        "session-end",
        id,
        "--transcript",
        &fixture("transcript.jsonl"),
    ]);
}

#[test]
fn an_external_judge_reproduces_the_seed_numbers() {
    let sandbox = Sandbox::new();
    judged_by(&sandbox, &["sh", &fixture("judge.sh")]);
    sandbox.write("lessons.yaml", LESSONS);
    let daemon = Daemon::start(&sandbox);
    session(&daemon, "s-1", "python");
    assert_eq!(
        daemon.json(&["status"])["ok"]["status"]["pending_evaluations"],
        1
    );
    let out = daemon.memctl(&["evaluate"]);
    assert!(out.status.success(), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("s-1: 2 item(s) judged"),
        "{}",
        stdout(&out)
    );
    let log = daemon.json(&["log", "L-1"]);
    let (score, _, neg) = tag_line(&log["ok"]["log"][0], "python");
    assert!((score + 0.300).abs() < 1e-9 && neg == 1, "{log}");
    session(&daemon, "s-2", "python");
    daemon.json(&["evaluate"]);
    let log = daemon.json(&["log", "L-1"]);
    assert!(
        (tag_line(&log["ok"]["log"][0], "python").0 + 0.510).abs() < 1e-9,
        "{log}"
    );
    // Nothing new: evaluating again changes nothing.
    let again = daemon.json(&["evaluate"]);
    assert_eq!(
        again["ok"]["evaluated"]["sessions"]
            .as_array()
            .map(Vec::len),
        Some(0),
        "like every command, `{{\"ok\": ...}}`: {again}"
    );
    // Re-evaluating a session on request reads its transcript again and
    // puts the new verdicts in place of the old ones: the same verdicts
    // change nothing.
    let out = daemon.memctl(&["evaluate", "--force", "s-1"]);
    assert!(out.status.success(), "{}", stdout(&out));
    let log = daemon.json(&["log", "L-1"]);
    let (score, pos, neg) = tag_line(&log["ok"]["log"][0], "python");
    assert!(
        (score + 0.510).abs() < 1e-9 && (pos, neg) == (0, 2),
        "{log}"
    );
    // Three sessions averaging below -0.1: filtered for python only.
    assert!(lesson_ids(&daemon, "python").contains(&"L-1".to_string()));
    session(&daemon, "s-3", "python");
    daemon.json(&["evaluate"]);
    assert!(!lesson_ids(&daemon, "python").contains(&"L-1".to_string()));
    // Elsewhere nothing filters it (though, written for python, it is
    // shown there only in one session of a few).
    let explain = explain(&daemon, "L-1", "rust");
    assert!(explain.contains(": kept, boost"), "{explain}");
}

#[test]
fn a_forced_evaluation_replaces_the_sessions_verdicts_in_their_place() {
    let sandbox = Sandbox::new();
    let verdict = sandbox.dir.path().join("keep-word");
    std::fs::write(&verdict, "nothing").unwrap();
    judged_by(
        &sandbox,
        &[
            "sh",
            &fixture("judge.sh"),
            &format!("@{}", verdict.display()),
        ],
    );
    sandbox.write("lessons.yaml", LESSONS);
    let mut daemon = Daemon::start(&sandbox);
    session(&daemon, "s-1", "python");
    daemon.json(&["evaluate"]);
    session(&daemon, "s-2", "python");
    daemon.json(&["evaluate"]);
    let python = |daemon: &Daemon, id: &str| {
        let log = daemon.json(&["log", id]);
        tag_line(&log["ok"]["log"][0], "python")
    };
    let (score, pos, neg) = python(&daemon, "L-1");
    assert!((score + 0.510).abs() < 1e-9 && (pos, neg) == (0, 2));
    // The judge changes its mind about L-1 in s-1: replayed in order,
    // +1 then -1 gives 0.3 * 0.7 - 0.3 = -0.09, one session each way
    // (added on top it would be -0.057 over three sessions).
    std::fs::write(&verdict, "migrations").unwrap();
    let out = daemon.memctl(&["evaluate", "--force", "s-1"]);
    assert!(out.status.success(), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("s-1: 2 item(s) judged"),
        "{}",
        stdout(&out)
    );
    let (score, pos, neg) = python(&daemon, "L-1");
    assert!(
        (score + 0.09).abs() < 1e-9 && (pos, neg) == (1, 1),
        "{score} {pos} {neg}"
    );
    // L-2 got the same verdict again: unchanged.
    let (score, pos, neg) = python(&daemon, "L-2");
    assert!((score + 0.510).abs() < 1e-9 && (pos, neg) == (0, 2));
    // The journal is stored: after a restart, forcing again with the same
    // answers changes nothing.
    daemon.stop();
    let daemon = Daemon::start(&sandbox);
    daemon.json(&["evaluate", "--force", "s-1"]);
    let (score, pos, neg) = python(&daemon, "L-1");
    assert!((score + 0.09).abs() < 1e-9 && (pos, neg) == (1, 1));
}

#[test]
fn a_failing_judge_leaves_the_session_pending_and_says_why() {
    let sandbox = Sandbox::new();
    judged_by(&sandbox, &["sh", "-c", "echo broken; exit 4"]);
    sandbox.write("lessons.yaml", LESSONS);
    let daemon = Daemon::start(&sandbox);
    session(&daemon, "s-1", "python");
    let out = daemon.memctl(&["evaluate"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("the judge failed"),
        "{}",
        stdout(&out)
    );
    assert_eq!(
        daemon.json(&["status"])["ok"]["status"]["pending_evaluations"],
        1
    );
}

#[test]
fn the_builtin_judge_finds_evidence_in_the_transcript() {
    let sandbox = Sandbox::new();
    sandbox.write(
        "gotchas.yaml",
        "gotchas:\n  - {id: G-6, title: Postgres unique violations surface as error 23505, fix: Catch code 23505 to detect duplicates, category: db}\n  - {id: G-13, title: Safari caches 301 redirects forever, fix: Clear the browser cache between redirect experiments, category: db}\n",
    );
    let daemon = Daemon::start(&sandbox);
    let v = daemon.json(&[
        "query",
        "--task",
        "fix the db",
        "--tags",
        "typescript",
        "--session",
        "b-1",
    ]);
    assert_eq!(v["ok"]["answer"]["items"].as_array().unwrap().len(), 2);
    daemon.json(&[
        "session-end",
        "b-1",
        "--transcript",
        &fixture("transcript.jsonl"),
    ]);
    daemon.json(&["evaluate"]);
    let relevant = daemon.json(&["log", "G-6"]);
    let (score, pos, _) = tag_line(&relevant["ok"]["log"][0], "typescript");
    assert!((score - 0.3).abs() < 1e-9 && pos == 1, "{relevant}");
    let irrelevant = daemon.json(&["log", "G-13"]);
    let (score, _, neg) = tag_line(&irrelevant["ok"]["log"][0], "typescript");
    assert!((score + 0.3).abs() < 1e-9 && neg == 1, "{irrelevant}");
}

#[test]
fn the_builtin_judge_reads_only_what_came_after_the_prompt_that_showed_an_item() {
    let sandbox = Sandbox::new();
    sandbox.write(
        "gotchas.yaml",
        "gotchas:\n  - {id: G-1, title: Redis cache keys go stale after a write, fix: Invalidate the cache key in the same transaction, category: cache}\n",
    );
    let daemon = Daemon::start(&sandbox);
    let shown = |task: &str| {
        let v = daemon.json(&["query", "--task", task, "--tags", "go", "--session", "p-1"]);
        v["ok"]["answer"]["items"].as_array().unwrap().len()
    };
    let line = |role: &str, text: &str| {
        let content = if role == "user" {
            serde_json::json!(text)
        } else {
            serde_json::json!([{"type": "text", "text": text}])
        };
        serde_json::json!({"type": role, "message": {"role": role, "content": content}}).to_string()
    };
    // The first prompt shows nothing; the agent's reply to it happens to
    // be all about the cache. The second prompt shows G-1, and the agent
    // only says ok: what it did before G-1 was shown is no evidence.
    assert_eq!(shown("rename the helper module"), 0);
    assert_eq!(shown("why do redis cache keys go stale"), 1);
    let transcript = sandbox.dir.path().join("p-1.jsonl");
    std::fs::write(
        &transcript,
        [
            line("user", "rename the helper module"),
            line(
                "assistant",
                "Renamed it. I also invalidate the redis cache key in the same transaction after a write, so keys never go stale.",
            ),
            line("user", "why do redis cache keys  go stale"),
            line("assistant", "ok"),
        ]
        .join("\n")
            + "\n",
    )
    .unwrap();
    daemon.json(&[
        "session-end",
        "p-1",
        "--transcript",
        transcript.to_str().unwrap(),
    ]);
    daemon.json(&["evaluate"]);
    let log = daemon.json(&["log", "G-1"]);
    let (score, pos, neg) = tag_line(&log["ok"]["log"][0], "go");
    assert!(
        (score + 0.3).abs() < 1e-9 && (pos, neg) == (0, 1),
        "judged on the work before it was shown: {log}"
    );
}

#[test]
fn a_session_that_goes_on_after_an_evaluation_has_each_item_judged_once() {
    let sandbox = Sandbox::new();
    sandbox.write(
        "gotchas.yaml",
        "gotchas:\n  - {id: G-6, title: Postgres unique violations surface as error 23505, fix: Catch code 23505 to detect duplicates, category: db}\n  - {id: G-13, title: Safari caches 301 redirects forever, fix: Clear the browser cache between redirect experiments, category: browser}\n",
    );
    let transcript = sandbox.dir.path().join("session.jsonl");
    std::fs::copy(fixture("transcript.jsonl"), &transcript).unwrap();
    let daemon = Daemon::start(&sandbox);
    let shown = |task: &str| {
        let v = daemon.json(&[
            "query",
            "--task",
            task,
            "--tags",
            "typescript",
            "--session",
            "g-1",
        ]);
        v["ok"]["answer"]["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["id"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    let end = || {
        daemon.json(&[
            "session-end",
            "g-1",
            "--transcript",
            transcript.to_str().unwrap(),
        ])
    };
    assert_eq!(shown("postgres unique violation in the db"), ["G-6"]);
    end();
    daemon.json(&["evaluate"]);
    assert_eq!(
        tag_line(&daemon.json(&["log", "G-6"])["ok"]["log"][0], "typescript"),
        (0.3, 1, 0)
    );

    // The session goes on (Codex records it after every turn): a new turn
    // about something else, and a new item shown for it.
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&transcript)
        .unwrap();
    writeln!(
        file,
        r#"{{"type":"user","message":{{"role":"user","content":"Now the marketing page: the old URL still redirects in Safari."}}}}"#
    )
    .unwrap();
    writeln!(
        file,
        r#"{{"type":"assistant","message":{{"role":"assistant","content":[{{"type":"text","text":"Safari caches 301 redirects forever, so I cleared the browser cache between redirect experiments."}}]}}}}"#
    )
    .unwrap();
    drop(file);
    assert_eq!(shown("safari redirect browser cache"), ["G-13"]);
    end();
    let report = daemon.json(&["evaluate"]);
    assert_eq!(
        report["ok"]["evaluated"]["sessions"][0]["judged"], 1,
        "only the new item: {report}"
    );
    // G-6 was judged once, on the turn it was shown for; the new text says
    // nothing of it and does not count against it.
    assert_eq!(
        tag_line(&daemon.json(&["log", "G-6"])["ok"]["log"][0], "typescript"),
        (0.3, 1, 0)
    );
    assert_eq!(
        tag_line(&daemon.json(&["log", "G-13"])["ok"]["log"][0], "typescript"),
        (0.3, 1, 0)
    );
    // What was judged is remembered across a restart: nothing is pending,
    // and the session ending once more judges nothing again.
    let mut daemon = daemon;
    daemon.stop();
    let daemon = Daemon::start(&sandbox);
    assert_eq!(
        daemon.json(&["status"])["ok"]["status"]["pending_evaluations"],
        0
    );
    daemon.json(&[
        "session-end",
        "g-1",
        "--transcript",
        transcript.to_str().unwrap(),
    ]);
    let report = daemon.json(&["evaluate"]);
    assert_eq!(
        report["ok"]["evaluated"]["sessions"][0]["judged"], 0,
        "{report}"
    );
    assert_eq!(
        tag_line(&daemon.json(&["log", "G-6"])["ok"]["log"][0], "typescript"),
        (0.3, 1, 0)
    );
}

#[test]
fn auto_pin_and_unpin_happen_at_the_seed_thresholds() {
    let sandbox = Sandbox::new();
    sandbox.write("lessons.yaml", LESSONS);
    let daemon = Daemon::start(&sandbox);
    // Tag relevance: average above 0.6 with at least 5 evaluations.
    for i in 1..=5 {
        let v = daemon.json(&["feedback", "L-2", "--relevant", "--tags", "docker"]);
        let pinned = &v["ok"]["judged"]["pinned"];
        assert_eq!(pinned.is_null(), i < 5, "after {i}: {v}");
    }
    // Auto-unpinned once the average drops below 0.2.
    let mut unpinned = false;
    for _ in 0..10 {
        let v = daemon.json(&["feedback", "L-2", "--irrelevant", "--tags", "docker"]);
        if v["ok"]["judged"]["pinned"].is_null() {
            unpinned = true;
            break;
        }
    }
    assert!(unpinned);
    // Match count: shown 15 times to sessions in a context pins it there,
    // but only with positive evidence: showings alone never pin.
    let shown = |n: usize| {
        let v = daemon.json(&[
            "query",
            "--task",
            "run the integration tests",
            "--tags",
            "ci,linux",
            "--session",
            &format!("m-{n}"),
            "--kinds",
            "lesson",
        ]);
        assert!(v.to_string().contains("L-1"), "{v}");
    };
    for n in 0..16 {
        shown(n);
    }
    let pinned = || daemon.json(&["log", "L-1"])["ok"]["log"][0]["pinned"].clone();
    daemon.recorded();
    assert!(pinned().is_null(), "{}", pinned());
    // Mixed verdicts: relevant in 14 of the context's 17 sessions (a pin
    // needs 80%), ending at 0.568, between the unpin line and the
    // relevance rule's 0.6. Filtered after three verdicts against it and
    // lifted by two for it since, it is on trial, two relevant verdicts
    // owed (one more for it than against it since the run).
    let verdicts = std::iter::repeat_n("--relevant", 11).chain([
        "--irrelevant",
        "--relevant",
        "--irrelevant",
        "--irrelevant",
        "--irrelevant",
        "--relevant",
        "--relevant",
    ]);
    for verdict in verdicts {
        daemon.json(&["feedback", "L-1", verdict, "--tags", "ci,linux"]);
    }
    assert!(pinned().is_null(), "not the relevance rule: {}", pinned());
    shown(16);
    daemon.recorded();
    assert_eq!(pinned(), "auto for [ci, linux]", "the next match pins it");
    // On trial it is a re-check, shown on a strong match only; the owed
    // verdicts confirm it, and it is kept.
    let trial = || {
        let log = daemon.json(&["log", "L-1"]);
        let line = &log["ok"]["log"][0]["tags"][0];
        (line["trial"].clone(), line["to_confirm"].clone())
    };
    assert_eq!(trial(), (true.into(), 2.into()));
    daemon.json(&["feedback", "L-1", "--relevant", "--tags", "ci,linux"]);
    assert_eq!(trial(), (true.into(), 1.into()));
    daemon.json(&["feedback", "L-1", "--relevant", "--tags", "ci,linux"]);
    assert_eq!(trial(), (false.into(), 0.into()));
    let recorder = daemon.json(&["status"])["ok"]["status"]["recorder"].clone();
    assert_eq!(
        (recorder["recorded"].as_u64(), recorder["dropped"].as_u64()),
        (Some(17), Some(0)),
        "every showing recorded once: {recorder}"
    );
    // Pinned lessons come first at session start (no task), where their
    // tags are...
    let start = |tags: &str| {
        daemon.json(&["query", "--tags", tags])["ok"]["answer"]["block"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(inner(&start("linux,ci")).starts_with("## Pinned Lessons"));
    assert!(!start("linux").contains("Pinned Lessons"));
    // ...and on a prompt they need a task match like any other lesson.
    let v = daemon.json(&[
        "query",
        "--task",
        "write the release notes",
        "--tags",
        "linux,ci",
    ]);
    assert!(!v.to_string().contains("L-1"), "{v}");
}

#[test]
fn the_seeds_worked_examples_through_the_daemon() {
    let sandbox = Sandbox::new();
    // Raw scores chosen so the EMA lands on the seed's numbers: python
    // -0.9433 once gives -0.283; github -1, -1, -0.7567 gives -0.584; acme
    // a barely positive judgement gives +0.000 with one positive eval.
    let plan = r#"{"python": [-0.9433], "github": [-1, -1, -0.7567], "acme": [0.001]}"#;
    judged_by_tag(&sandbox, plan);
    sandbox.write("lessons.yaml", LESSONS);
    let daemon = Daemon::start(&sandbox);
    for (i, tag) in ["acme", "github", "github", "github", "python"]
        .iter()
        .enumerate()
    {
        session(&daemon, &format!("w-{i}"), tag);
        let out = daemon.memctl(&["evaluate"]);
        assert!(out.status.success(), "{}", stdout(&out));
    }
    let log = daemon.json(&["log", "L-2"]);
    let entry = &log["ok"]["log"][0];
    let (python, _, _) = tag_line(entry, "python");
    let (github, _, github_neg) = tag_line(entry, "github");
    let (acme, acme_pos, _) = tag_line(entry, "acme");
    assert!((python + 0.283).abs() < 5e-4, "{python}");
    assert!((github + 0.584).abs() < 5e-4 && github_neg == 3, "{github}");
    assert!(acme.abs() < 5e-4 && acme_pos == 1, "{acme}");
    // avg = (-0.283 - 0.584 + 0) / 3 = -0.289, the seed's average. The
    // seed sums 4 evaluations and filters; an evaluation is one judged
    // session, and this context had (1 + 3 + 0) / 3 of them: thin evidence
    // here. But the lesson was judged irrelevant in two contexts (github,
    // python), and its record across all three, the five raw scores above
    // in their order under the seed's EMA, is -0.692 over 5 sessions: with
    // nothing here saying relevant, that filters it, as the seed does.
    // (Judged in python before github, its record would have filtered it
    // in github before the third session there: sessions run in the order
    // that lets each be shown.)
    let (everywhere, pos, neg) = tag_line(entry, "*");
    assert!(
        (everywhere + 0.692).abs() < 5e-4 && (pos, neg) == (1, 4),
        "{everywhere}"
    );
    assert!(!lesson_ids(&daemon, "python,github,personal").contains(&"L-2".to_string()));
    let explain = explain(&daemon, "L-2", "python,github,personal");
    assert!(
        explain.contains("average -0.289 over 1.3 judged sessions")
            && explain.contains("in every context it was judged in (3 of them, irrelevant on balance in 2): average -0.692 over 5.0 judged sessions")
            && explain.contains("filtered in every context it was judged in"),
        "{explain}"
    );
    // avg 0.000 over [acme, frontend] with 1 evaluation: not enough
    // evidence, passes.
    assert!(lesson_ids(&daemon, "acme,frontend").contains(&"L-2".to_string()));
}

#[test]
fn a_lesson_judged_where_its_own_tags_are_absent_is_filtered_wherever_they_are() {
    let sandbox = Sandbox::new();
    sandbox.write("lessons.yaml", LESSONS);
    let daemon = Daemon::start(&sandbox);
    // A Python workspace was seen, so L-1's `python` names a stack.
    open_session(&daemon, "s-py", "python");
    common::eventually("the python session counted", || {
        explain(&daemon, "L-1", "github").contains("written for another stack")
    });
    // Judged irrelevant three times in GitHub work, which lacks python:
    // that counts wherever python is absent...
    for _ in 0..3 {
        let out = daemon.memctl(&["feedback", "L-1", "--irrelevant", "--tags", "github"]);
        assert!(out.status.success(), "{}", stdout(&out));
    }
    let log = daemon.json(&["log", "L-1"]);
    let (absent, _, absent_neg) = tag_line(&log["ok"]["log"][0], "!python");
    assert!((absent + 1.314).abs() < 5e-4 && absent_neg == 3, "{log}");
    let explain = explain(&daemon, "L-1", "acme,frontend");
    assert!(
        explain.contains("where its own tags were absent ([!python])")
            && explain.contains("filtered where its own tags were absent"),
        "{explain}"
    );
    assert!(!lesson_ids(&daemon, "acme,frontend").contains(&"L-1".to_string()));
    // ...but not where python is.
    assert!(lesson_ids(&daemon, "python,acme").contains(&"L-1".to_string()));
}

/// L-1 as the prompt "run the integration tests" in a Python workspace
/// shows it (in an agent's `session`, if given), or `None`.
fn l1_on_the_test_prompt(daemon: &Daemon, session: Option<&str>) -> Option<Value> {
    let mut args = vec![
        "query",
        "--task",
        "run the integration tests",
        "--tags",
        "python",
        "--kinds",
        "lesson",
    ];
    if let Some(session) = session {
        args.extend(["--session", session]);
    }
    let v = daemon.json(&args);
    v["ok"]["answer"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["id"] == "L-1")
        .cloned()
}

#[test]
fn a_filtered_lesson_comes_back_after_the_prompts_it_was_held_back_from() {
    let sandbox = Sandbox::new();
    sandbox.write("lessons.yaml", LESSONS);
    let daemon = Daemon::start(&sandbox);
    for _ in 0..3 {
        daemon.json(&["feedback", "L-1", "--irrelevant", "--tags", "python"]);
    }
    let prompt = |session: &str| l1_on_the_test_prompt(&daemon, Some(session)).is_some();
    // Queries without a session (people looking) do not count.
    for _ in 0..10 {
        assert!(!lesson_ids(&daemon, "python").contains(&"L-1".to_string()));
    }
    // Three irrelevant judged sessions wait 3 x 3 = 9 prompts of agents'
    // sessions.
    l1_comes_back_after(&daemon, 9);
    // Judged again: out again, for longer; and the count survives a restart.
    daemon.json(&["feedback", "L-1", "--irrelevant", "--tags", "python"]);
    assert!(!prompt("s-7"));
    drop(daemon);
    let daemon = Daemon::start(&sandbox);
    let log = daemon.json(&["log", "L-1"]);
    assert!(log.to_string().contains("\"held\":1"), "{log}");
}

#[test]
fn a_filtered_lesson_mostly_judged_relevant_comes_back_sooner() {
    let sandbox = Sandbox::new();
    sandbox.write("lessons.yaml", LESSONS);
    let daemon = Daemon::start(&sandbox);
    // Four relevant, then two irrelevant: the seed's EMA (weight 2) 1.520,
    // 0.464, then -0.275, -0.138 in the evaluator's unit: filtered.
    for verdict in ["--relevant"; 4].into_iter().chain(["--irrelevant"; 2]) {
        feedback_python(&daemon, "L-1", verdict);
    }
    let filtered = explain(&daemon, "L-1", "python");
    assert!(filtered.contains(": filtered"), "{filtered}");
    assert!(filtered.contains("held back from 3 prompts"), "{filtered}");
    // Two more for it than against it: it waits the least, 3 prompts, not
    // the 18 of six judged sessions.
    l1_comes_back_after(&daemon, 3);
}

#[test]
fn a_filtered_lesson_its_record_is_for_is_re_checked_on_a_weaker_match() {
    let sandbox = Sandbox::new();
    sandbox.write("lessons.yaml", LESSONS);
    let daemon = Daemon::start(&sandbox);
    let weaker = "run the migrations in the docker compose stack";
    // Filtered on its latest verdicts, for it on balance (four relevant,
    // two irrelevant, as above), and held back from its 3 prompts.
    for verdict in ["--relevant"; 4].into_iter().chain(["--irrelevant"; 2]) {
        feedback_python(&daemon, "L-1", verdict);
    }
    l1_comes_back_after(&daemon, 3);
    // A match worth 2 points re-checks it: not only the strongest band.
    let explained = explain_on(&daemon, "L-1", weaker);
    assert!(explained.contains("band 2"), "{explained}");
    assert!(
        explained.contains("on a task match of 2 points (memd: not only 3, as its own record in this context has more verdicts for it than against it)"),
        "{explained}"
    );
    assert!(shown_on(&daemon, weaker, Some("s-weak")).contains(&("L-1".to_string(), 2.0)));

    // Against it on balance (one relevant, three irrelevant): only a match
    // worth 3 points re-checks it.
    let sandbox = Sandbox::new();
    sandbox.write("lessons.yaml", LESSONS);
    let daemon = Daemon::start(&sandbox);
    for verdict in ["--relevant", "--irrelevant", "--irrelevant", "--irrelevant"] {
        feedback_python(&daemon, "L-1", verdict);
    }
    l1_comes_back_after(&daemon, 6);
    let explained = explain_on(&daemon, "L-1", weaker);
    assert!(
        explained.contains(
            "seed 001's outcome: on probation, and the prompt's task match is below 3 points"
        ),
        "{explained}"
    );
    assert!(!shown_on(&daemon, weaker, Some("s-weak"))
        .iter()
        .any(|(id, _)| id == "L-1"));
}

/// L-1, filtered, is held back from the test prompt in `prompts` agents'
/// sessions (`s-0`, `s-1`, ...), then shown on probation in the next.
fn l1_comes_back_after(daemon: &Daemon, prompts: usize) {
    let prompt = |session: &str| l1_on_the_test_prompt(daemon, Some(session)).is_some();
    for i in 0..prompts {
        assert!(!prompt(&format!("s-{i}")), "shown after {i} prompts");
    }
    let held = format!("\"held\":{prompts}");
    common::eventually("the held-back prompts to be recorded", || {
        daemon.json(&["log", "L-1"]).to_string().contains(&held)
    });
    assert!(
        prompt(&format!("s-{prompts}")),
        "on probation after {prompts} prompts held back"
    );
    let explain = explain(daemon, "L-1", "python");
    assert!(explain.contains("on probation"), "{explain}");
}

/// Direct feedback on `id` with the python tag.
fn feedback_python(daemon: &Daemon, id: &str, verdict: &str) {
    let out = daemon.memctl(&["feedback", id, verdict, "--tags", "python"]);
    assert!(out.status.success(), "{}", stdout(&out));
}

#[test]
fn a_filtered_lesson_judged_relevant_once_stays_a_re_check_until_confirmed() {
    let sandbox = Sandbox::new();
    sandbox.write("lessons.yaml", LESSONS);
    let daemon = Daemon::start(&sandbox);
    let feedback = |daemon: &Daemon, verdict: &str| feedback_python(daemon, "L-1", verdict);
    // Weight 2: -0.6, 0.18, -0.474, -0.932: filtered over 4 sessions.
    for verdict in ["--irrelevant", "--relevant", "--irrelevant", "--irrelevant"] {
        feedback(&daemon, verdict);
    }
    assert!(
        explain(&daemon, "L-1", "python").contains("filtered on its own record in this context")
    );
    // Relevant once: -0.652 + 0.6 = -0.052, over the line, but on trial.
    feedback(&daemon, "--relevant");
    let log = daemon.json(&["log", "L-1"]);
    let line = &log["ok"]["log"][0]["tags"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["tag"] == "python")
        .unwrap()
        .clone();
    assert!(
        (line["score"].as_f64().unwrap() + 0.052).abs() < 5e-4,
        "{log}"
    );
    assert_eq!(line["trial"], true, "{log}");
    // Shown as a re-check, not as a kept lesson; and so after a restart.
    let item = l1_on_the_test_prompt(&daemon, None).expect("a strong match re-checks it");
    assert_eq!(item["dimensions"]["probation"], 1.0, "{item}");
    drop(daemon);
    let daemon = Daemon::start(&sandbox);
    let explained = explain(&daemon, "L-1", "python");
    assert!(explained.contains("on trial"), "{explained}");
    assert!(stdout(&daemon.memctl(&["log", "L-1"])).contains("on trial"));
    // A second relevant verdict leaves the two since the run against it
    // even: still on trial, one more owed.
    feedback(&daemon, "--relevant");
    let explained = explain(&daemon, "L-1", "python");
    assert!(
        explained.contains("on trial")
            && explained.contains("one more relevant verdict confirms it"),
        "{explained}"
    );
    // Confirmed by a third: kept.
    feedback(&daemon, "--relevant");
    let explained = explain(&daemon, "L-1", "python");
    assert!(explained.contains("kept, boost"), "{explained}");
    let item = l1_on_the_test_prompt(&daemon, None).expect("kept and matching");
    assert_eq!(item["dimensions"]["probation"], 0.0, "{item}");
}

#[test]
fn a_noisy_judge_leaves_a_share_of_the_seeds_boost() {
    let sandbox = Sandbox::new();
    sandbox.write("lessons.yaml", LESSONS);
    let daemon = Daemon::start(&sandbox);
    let feedback = |id: &str, verdict: &str| feedback_python(&daemon, id, verdict);
    let boost = |explained: &str| -> f64 {
        let at = explained.find("kept, boost ").expect(explained) + "kept, boost ".len();
        explained[at..]
            .split([':', ' ', '\n'])
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    // Weight 2, relevant once: 0.6, 0.3 in the evaluator's unit; the
    // seed's boost 0.3 / 3 x 0.01.
    feedback("L-1", "--relevant");
    let explained = explain(&daemon, "L-1", "python");
    assert!((boost(&explained) - 0.001).abs() < 1e-6, "{explained}");
    // The judge then contradicts itself on L-2: 10 relevant verdicts
    // and 2 irrelevant ones, 132 pairs of which 40 disagree (wrong about
    // 19% of the time).
    for verdict in ["--irrelevant", "--irrelevant"]
        .into_iter()
        .chain(["--relevant"; 10])
    {
        feedback("L-2", verdict);
    }
    let explained = explain(&daemon, "L-1", "python");
    let share = 0.7865;
    assert!(
        (boost(&explained) - 0.001 * share).abs() < 1e-5,
        "{explained}"
    );
    assert!(
        explained.contains(
            "seed 001's times 0.79, the share of its score's spread the judge's noise leaves"
        ),
        "{explained}"
    );
}

/// A daemon whose judge is `judge-scripted.sh`, and the log of its runs.
fn scripted_judge() -> (Sandbox, Daemon, std::path::PathBuf) {
    let sandbox = Sandbox::new();
    let runs = sandbox.dir.path().join("judge-runs");
    judged_by(
        &sandbox,
        &[
            "sh",
            &fixture("judge-scripted.sh"),
            &runs.display().to_string(),
        ],
    );
    sandbox.write("lessons.yaml", LESSONS);
    let daemon = Daemon::start(&sandbox);
    (sandbox, daemon, runs)
}

/// The sessions the judge ran for, in order.
fn judge_runs(runs: &std::path::Path) -> Vec<String> {
    judge_log(runs)
        .into_iter()
        .filter(|l| !l.starts_with("ITEMS "))
        .collect()
}

/// Every line of the judge's log: its runs and `ITEMS <session> <ids>`.
fn judge_log(runs: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(runs)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn a_failing_session_is_judged_once_a_run_and_never_holds_up_the_others() {
    let (_sandbox, daemon, runs) = scripted_judge();
    // All end within the same second; the failing one sorts first.
    for id in ["a-fail", "b-good", "c-good"] {
        session(&daemon, id, "python");
    }
    let out = daemon.memctl(&["evaluate"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let mut ran = judge_runs(&runs);
    ran.sort();
    assert_eq!(ran, ["a-fail", "b-good", "c-good"], "one judge run each");
    let progress = common::stderr(&out);
    for id in ["a-fail", "b-good", "c-good"] {
        assert_eq!(
            progress.matches(&format!("] {id}\n")).count(),
            1,
            "{id} once in the progress: {progress}"
        );
    }
    let text = stdout(&out);
    assert!(text.contains("the judge failed"), "{text}");
    assert!(text.contains("b-good: 2 item(s) judged"), "{text}");
    assert!(text.contains("c-good: 2 item(s) judged"), "{text}");
    // The failing one is still pending, for the next run; only it.
    assert_eq!(
        daemon.json(&["status"])["ok"]["status"]["pending_evaluations"],
        1
    );
    daemon.memctl(&["evaluate"]);
    assert_eq!(judge_runs(&runs).len(), 4);
}

#[test]
fn a_session_whose_transcript_is_gone_is_skipped_for_good() {
    let (sandbox, daemon, runs) = scripted_judge();
    session(&daemon, "a-good", "python");
    open_session(&daemon, "b-gone", "python");
    let gone = sandbox.dir.path().join("gone.jsonl");
    daemon.json(&[
        "session-end",
        "b-gone",
        "--transcript",
        gone.to_str().unwrap(),
    ]);
    session(&daemon, "c-good", "python");
    let out = daemon.memctl(&["evaluate"]);
    let text = stdout(&out);
    assert!(
        text.contains("b-gone") && text.contains("is gone; skipped, nothing judged"),
        "{text}"
    );
    assert!(text.contains("c-good: 2 item(s) judged"), "{text}");
    let mut ran = judge_runs(&runs);
    ran.sort();
    assert_eq!(ran, ["a-good", "c-good"]);
    // A final state: not pending, not tried again.
    assert_eq!(
        daemon.json(&["status"])["ok"]["status"]["pending_evaluations"],
        0
    );
    let again = daemon.json(&["evaluate"]);
    assert_eq!(
        again["ok"]["evaluated"]["sessions"]
            .as_array()
            .map(Vec::len),
        Some(0),
        "{again}"
    );
}

#[test]
fn a_judge_that_leaves_items_out_has_them_kept_pending() {
    let (_sandbox, daemon, runs) = scripted_judge();
    // `{}`: not an answer; nothing applied, the session stays pending.
    session(&daemon, "a-empty", "python");
    let out = daemon.memctl(&["evaluate"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("a-empty"), "{}", stdout(&out));
    assert_eq!(
        daemon.json(&["status"])["ok"]["status"]["pending_evaluations"],
        1
    );
    // One of two items, and an id it was never shown.
    session(&daemon, "b-half", "python");
    let out = daemon.memctl(&["evaluate"]);
    let text = stdout(&out);
    assert!(
        text.contains("the judge answered for 1 of 2 item(s); 1 stay pending: L-2"),
        "{text}"
    );
    assert!(text.contains("not shown, ignored: NOT-SHOWN"), "{text}");
    let l1 = daemon.json(&["log", "L-1"]);
    assert_eq!(tag_line(&l1["ok"]["log"][0], "python").2, 1, "{l1}");
    let l2 = daemon.json(&["log", "L-2"]);
    assert!(
        l2["ok"]["log"][0]["tags"].as_array().unwrap().is_empty(),
        "{l2}"
    );
    // Both sessions wait for what was left out; L-1 is never judged twice.
    assert_eq!(
        daemon.json(&["status"])["ok"]["status"]["pending_evaluations"],
        2
    );
    // Next run: only L-2 is sent, and now judged; L-1 is not judged twice.
    let out = daemon.memctl(&["evaluate"]);
    let text = stdout(&out);
    assert!(text.contains("b-half: 1 item(s) judged"), "{text}");
    let l1 = daemon.json(&["log", "L-1"]);
    assert_eq!(tag_line(&l1["ok"]["log"][0], "python").2, 1, "{l1}");
    let l2 = daemon.json(&["log", "L-2"]);
    assert_eq!(tag_line(&l2["ok"]["log"][0], "python").2, 1, "{l2}");
    assert_eq!(
        daemon.json(&["status"])["ok"]["status"]["pending_evaluations"],
        1,
        "only the session whose judge answers {{}}"
    );
    let log = judge_log(&runs);
    assert!(log.contains(&"ITEMS b-half L-2".to_string()), "{log:?}");
}

#[test]
fn a_lesson_without_tags_is_written_for_the_stack_its_text_names() {
    let sandbox = Sandbox::new();
    sandbox.write(
        "lessons.yaml",
        "lessons:
  - id: L-GO
    text: In go services, run the integration tests with the race detector on
  - id: L-PY
    text: In python services, run the integration tests against a clean database
  - id: L-ANY
    text: Integration tests need a clean database
",
    );
    let daemon = Daemon::start(&sandbox);
    session(&daemon, "s-go", "go");
    session(&daemon, "s-py", "python");
    daemon.recorded();
    assert!(explain(&daemon, "L-GO", "python").contains("name [go], workspaces memd has seen"));
    // Its text names `go`, a workspace seen, and nothing of Python's: in
    // a Python workspace it is written for another stack; the lesson
    // whose text names Python is not, nor one that names no stack.
    for other in ["L-PY", "L-ANY"] {
        assert!(
            !explain(&daemon, other, "python").contains("written for another stack"),
            "{other}"
        );
    }
    assert!(!explain(&daemon, "L-GO", "go").contains("written for another stack"));
    assert!(explain(&daemon, "L-PY", "go").contains("name [python], workspaces memd has seen"));
    // In a Go workspace the Go lesson leads; the Python one, where it is
    // a candidate, comes last.
    let ids = lesson_ids(&daemon, "go");
    assert_eq!(ids[..2], ["L-GO", "L-ANY"], "{ids:?}");
}

#[test]
fn a_lesson_for_another_stack_is_a_candidate_only_where_a_lesson_that_helped_turned() {
    let sandbox = Sandbox::new();
    sandbox.write(
        "lessons.yaml",
        "lessons:
  - id: L-GO
    text: Run the integration tests with the race detector on
    tags: [go]
  - id: L-ANY
    text: Integration tests need a clean database
",
    );
    let daemon = Daemon::start(&sandbox);
    // Before any workspace had `go`, the tag says nothing: the better
    // match leads.
    assert_eq!(lesson_ids(&daemon, "python"), ["L-GO", "L-ANY"]);
    // Once a session in a Go workspace was seen, `go` names a stack: a
    // Python workspace does not get the lesson written for it, in any of
    // its sessions, while nothing there shows a change.
    session(&daemon, "s-go", "go");
    let explain = |tags: &str| explain(&daemon, "L-GO", tags);
    common::eventually("the Go session counted", || {
        explain("python").contains("name [go], workspaces memd has seen")
    });
    assert_eq!(lesson_ids(&daemon, "go"), ["L-GO", "L-ANY"]);
    for n in 0..6 {
        session(&daemon, &format!("s-py-{n}"), "python");
        assert_eq!(lesson_ids(&daemon, "python"), ["L-ANY"], "session {n}");
    }
    let why = explain("python");
    assert!(
        why.contains("a candidate only on a prompt that shows a change here")
            && why.contains("this one does not")
            && why.contains("the prompt shows no change here: not a candidate"),
        "{why}"
    );
    // L-ANY helps here three times: still no change.
    for _ in 0..3 {
        daemon.json(&["feedback", "L-ANY", "--relevant", "--tags", "python"]);
    }
    assert_eq!(lesson_ids(&daemon, "python"), ["L-ANY"]);
    // Then it no longer does, until its own record here filters it: what
    // helped on the prompt's topic turned, so the lesson written for
    // another stack is a candidate on it.
    turn_l_any(&daemon);
    assert_eq!(lesson_ids(&daemon, "python"), ["L-GO"]);
    let why = explain("python");
    assert!(
        why.contains("this one does (L-ANY had been judged relevant here at least 3 times and is now filtered here)")
            && why.contains("seed 001's outcome: a candidate"),
        "{why}"
    );
    // Another Python repository saw no change: not there.
    assert_eq!(lesson_ids(&daemon, "python,flask"), ["L-ANY"]);
    assert!(explain("python,flask").contains("this one does not"));
}

#[test]
fn a_lesson_filtered_before_a_change_is_re_checked_once_on_a_prompt_that_shows_it() {
    let sandbox = Sandbox::new();
    sandbox.write(
        "lessons.yaml",
        "lessons:
  - id: L-OLD
    text: Run the integration tests in a fresh container
  - id: L-ANY
    text: Run the integration tests against a clean database
",
    );
    let daemon = Daemon::start(&sandbox);
    let feedback = |id: &str, verdict: &str| {
        daemon.json(&["feedback", id, verdict, "--tags", "python"]);
    };
    // L-OLD did not help here; L-ANY did, three times.
    for _ in 0..3 {
        feedback("L-OLD", "--irrelevant");
        feedback("L-ANY", "--relevant");
    }
    assert_eq!(lesson_ids(&daemon, "python"), ["L-ANY"]);
    // Two sessions hold L-OLD back: its evidence ages.
    for n in 0..2 {
        open_session(&daemon, &format!("s-{n}"), "python");
    }
    daemon.recorded();
    assert_eq!(lesson_ids(&daemon, "python"), ["L-ANY"]);
    let why = explain(&daemon, "L-OLD", "python");
    assert!(why.contains("filtered by what was learned"), "{why}");
    // Then L-ANY no longer helps, until its own record filters it: the
    // prompt shows a change, and what filters L-OLD is older than it.
    turn_l_any_then_see_l_old_re_checked(&daemon);
    let why = explain(&daemon, "L-OLD", "python");
    assert!(
        why.contains("a candidate, on probation: filtered here, but the prompt shows a change here (L-ANY had been judged relevant here at least 3 times and is now filtered here, 0 prompts held back since its latest verdict), and what filters this one is older (2 prompts held back"),
        "{why}"
    );
    // Re-checked once: its verdict is newer than the change.
    feedback("L-OLD", "--irrelevant");
    assert!(lesson_ids(&daemon, "python").is_empty());
    let why = explain(&daemon, "L-OLD", "python");
    assert!(why.contains("filtered by what was learned"), "{why}");
    // Another context saw no change: no re-check there on one.
    let why = explain(&daemon, "L-OLD", "python,flask");
    assert!(!why.contains("the prompt shows a change here"), "{why}");
}

/// L-ANY judged irrelevant with the python tag until the test prompt no
/// longer shows it: its own record filters it, a change in that context
/// once it had helped there.
fn turn_l_any(daemon: &Daemon) {
    let mut verdicts = 0;
    while lesson_ids(daemon, "python").contains(&"L-ANY".to_string()) {
        assert!(verdicts < 6, "L-ANY still shown after {verdicts} verdicts");
        daemon.json(&["feedback", "L-ANY", "--irrelevant", "--tags", "python"]);
        verdicts += 1;
    }
}

/// [`turn_l_any`]; then the test prompt shows L-OLD alone, as a re-check.
fn turn_l_any_then_see_l_old_re_checked(daemon: &Daemon) {
    turn_l_any(daemon);
    let v = lessons_on_the_test_prompt(daemon, "python");
    assert_eq!(common::item_ids(&v), ["L-OLD"]);
    assert_eq!(
        v["ok"]["answer"]["items"][0]["dimensions"]["probation"],
        1.0
    );
}

#[test]
fn lessons_filtered_before_a_change_are_re_checked_on_a_two_point_match_that_shows_it() {
    // Still waiting (filtered), and on probation with its wait over.
    re_checked_on_a_two_point_match_after_a_change(false);
    re_checked_on_a_two_point_match_after_a_change(true);
}

/// L-OLD, which the test prompt matches at 2 task points, and L-ANY, at 3.
const OLD_AND_ANY: &str = "lessons:
  - id: L-OLD
    text: Seed the fixtures before the integration tests
  - id: L-ANY
    text: Run the integration tests against a clean database
";

/// L-OLD, filtered here on verdicts older than a change that L-ANY shows,
/// matched by the prompt at 2 task points, still waiting or (`on_probation`)
/// on probation: re-checked once on the prompt that shows the change.
fn re_checked_on_a_two_point_match_after_a_change(on_probation: bool) {
    let sandbox = Sandbox::new();
    sandbox.write("lessons.yaml", OLD_AND_ANY);
    let daemon = Daemon::start(&sandbox);
    let feedback = |id: &str, verdict: &str| {
        daemon.json(&["feedback", id, verdict, "--tags", "python"]);
    };
    let band = |id: &str| {
        let why = explain(&daemon, id, "python");
        let at = why.find("(band ").expect("a task band");
        why[at + 6..at + 7].parse::<u8>().unwrap()
    };
    // The test prompt matches L-OLD at 2 task points, L-ANY at 3.
    assert_eq!((band("L-OLD"), band("L-ANY")), (2, 3));
    hold_l_old_back(&daemon, on_probation);
    let why = explain(&daemon, "L-OLD", "python");
    let held = if on_probation {
        "on probation, and the prompt's task match is below 3 points"
    } else {
        "filtered by what was learned"
    };
    assert!(why.contains(held), "{why}");
    assert_eq!(lesson_ids(&daemon, "python"), ["L-ANY"]);
    // Then L-ANY no longer helps, until its own record filters it: the
    // prompt shows a change, and L-OLD, whose evidence is older, is
    // re-checked on the match that counts its wait.
    turn_l_any_then_see_l_old_re_checked(&daemon);
    let why = explain(&daemon, "L-OLD", "python");
    let held = if on_probation {
        "on probation here, its wait over but the prompt's task match below 3 points"
    } else {
        "filtered here"
    };
    assert!(
        why.contains(&format!("a candidate, on probation: {held}, but the prompt shows a change here (L-ANY had been judged relevant here at least 3 times and is now filtered here")),
        "{why}"
    );
    // Re-checked once: its verdict is newer than the change.
    feedback("L-OLD", "--irrelevant");
    assert!(lesson_ids(&daemon, "python").is_empty());
    // Another context saw no change: no re-check there.
    let why = explain(&daemon, "L-OLD", "python,flask");
    assert!(!why.contains("the prompt shows a change here"), "{why}");
}

/// L-OLD judged irrelevant here three times, L-ANY relevant three times;
/// still waiting (not `on_probation`), L-OLD did not help on three more
/// verdicts: it waits longer. Then sessions hold L-OLD back, its evidence
/// aging, until its wait is over where it goes on probation (a 2-point
/// match is too weak to re-check a record against it), or for two
/// sessions while it still waits.
fn hold_l_old_back(daemon: &Daemon, on_probation: bool) {
    let feedback = |id: &str, verdict: &str| {
        daemon.json(&["feedback", id, verdict, "--tags", "python"]);
    };
    for _ in 0..3 {
        feedback("L-OLD", "--irrelevant");
        feedback("L-ANY", "--relevant");
    }
    if !on_probation {
        for _ in 0..3 {
            feedback("L-OLD", "--irrelevant");
        }
    }
    let mut sessions = 0;
    let waited = |sessions: usize| {
        if on_probation {
            explain(daemon, "L-OLD", "python").contains("on probation")
        } else {
            sessions == 2
        }
    };
    while !waited(sessions) {
        assert!(
            sessions < 12,
            "L-OLD still waiting after {sessions} sessions"
        );
        open_session(daemon, &format!("s-{sessions}"), "python");
        daemon.recorded();
        sessions += 1;
    }
}

#[test]
fn a_re_check_on_a_two_point_match_is_set_with_the_lessons_for_another_stack() {
    let sandbox = Sandbox::new();
    sandbox.write(
        "lessons.yaml",
        format!(
            "{OLD_AND_ANY}  - id: L-GO
    text: Run the integration tests with the race detector on
    tags: [go]
"
        ),
    );
    let daemon = Daemon::start(&sandbox);
    session(&daemon, "s-go", "go");
    common::eventually("the Go session counted", || {
        explain(&daemon, "L-GO", "python").contains("name [go], workspaces memd has seen")
    });
    // L-OLD did not help here, L-ANY did: L-OLD is on probation, and a
    // 2-point match is too weak to re-check it.
    hold_l_old_back(&daemon, true);
    assert_eq!(lesson_ids(&daemon, "python"), ["L-ANY"]);
    // Then L-ANY no longer helps, until its own record filters it: the
    // prompt shows a change. L-GO, written for another stack, is a
    // candidate on it at 3 task points, and L-OLD is re-checked at 2:
    // L-OLD comes after L-GO, by band, not before it as a re-check would.
    turn_l_any(&daemon);
    assert_eq!(lesson_ids(&daemon, "python"), ["L-GO", "L-OLD"]);
    let why = explain(&daemon, "L-OLD", "python");
    assert!(
        why.contains("re-checked once, its verdict then decides; on a match below 3 points, it is set with the lessons written for another stack"),
        "{why}"
    );
    let why = explain(&daemon, "L-GO", "python");
    assert!(
        why.contains("after every re-check of a filtered one on a match of 3 points (a re-check on a weaker match is set with it, by band)"),
        "{why}"
    );
}

/// A lesson about the compose stack, and one about image digests whose
/// prompts mention the stack only in passing.
const PASSING: &str = "lessons:
  - id: L-2
    text: Integration tests need the docker compose stack up
  - id: L-3
    text: Pin the base image digest in the release pipeline
";
/// A prompt about digests that matches L-2 only in passing (task band 1).
const DIGEST_PROMPT: &str = "pin the base image digest in the release pipeline stack";
/// A prompt on L-2's own topic (task band 3).
const STACK_PROMPT: &str = "bring the stack up";

/// `memctl explain ID` on `task` with the python tag.
fn explain_on(daemon: &Daemon, id: &str, task: &str) -> String {
    stdout(&daemon.memctl(&["explain", id, "--task", task, "--tags", "python"]))
}

/// The lessons (id and task band) a query on `task` with the python tag
/// shows, in session `session` if given.
fn shown_on(daemon: &Daemon, task: &str, session: Option<&str>) -> Vec<(String, f64)> {
    let mut args = vec![
        "query", "--task", task, "--tags", "python", "--kinds", "lesson",
    ];
    if let Some(s) = session {
        args.extend(["--session", s]);
    }
    daemon.json(&args)["ok"]["answer"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["id"].as_str().unwrap().to_string(),
                i["dimensions"]["task_band"].as_f64().unwrap_or(0.0),
            )
        })
        .collect()
}

#[test]
fn a_verdict_on_a_prompt_that_matched_only_in_passing_counts_only_for_such_prompts() {
    let sandbox = Sandbox::new();
    // The judge finds the digest lesson relevant, the stack one not.
    judged_by(&sandbox, &["sh", &fixture("judge.sh"), "digest"]);
    sandbox.write("lessons.yaml", PASSING);
    let daemon = Daemon::start(&sandbox);
    for n in 1..=3 {
        let id = format!("s-{n}");
        let shown = shown_on(&daemon, DIGEST_PROMPT, Some(&id));
        assert!(shown.contains(&("L-2".to_string(), 1.0)), "{shown:?}");
        daemon.json(&[
            "session-end",
            &id,
            "--transcript",
            &fixture("transcript.jsonl"),
        ]);
        daemon.json(&["evaluate"]);
    }
    // Three sessions judged it irrelevant where it matched in passing: held
    // back from such prompts...
    let ids = |task| -> Vec<String> {
        shown_on(&daemon, task, None)
            .into_iter()
            .map(|(id, _)| id)
            .collect()
    };
    assert_eq!(ids(DIGEST_PROMPT), ["L-3"]);
    // ...but not from a prompt on its own topic, where nothing was judged.
    assert_eq!(ids(STACK_PROMPT), ["L-2"]);
    let weak = explain_on(&daemon, "L-2", DIGEST_PROMPT);
    assert!(weak.contains("matches it only in passing"), "{weak}");
    assert!(
        weak.contains("filtered on its own record in this context"),
        "{weak}"
    );
    let strong = explain_on(&daemon, "L-2", STACK_PROMPT);
    assert!(strong.contains(": kept"), "{strong}");
    assert!(
        !strong.contains("this prompt matches it only in passing"),
        "{strong}"
    );
    // Its record over every showing is below the line: shown on its topic
    // as a re-check, until a strong match's verdict.
    assert!(strong.contains("it is a re-check"), "{strong}");
    // The log lists the weak-match evidence, in the seed's format.
    let log = stdout(&daemon.memctl(&["log", "L-2"]));
    let words = log.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("~python -0.657 (+0/-3)"), "{log}");
    assert!(words.contains("~@python -0.657 (+0/-3)"), "{log}");
    assert!(log.contains("@context: its own record"), "{log}");
    assert!(
        log.contains("~tag: on prompts it matched only in passing"),
        "{log}"
    );
    // Feedback without tags speaks of the showing it follows: after a
    // showing on its own topic, it counts for every prompt.
    shown_on(&daemon, STACK_PROMPT, None);
    let v = daemon.json(&["feedback", "L-2", "--irrelevant"]);
    let judged = common::tag_names(&v["ok"]["judged"]);
    assert!(
        judged.contains(&"python".to_string()) && judged.contains(&"~python".to_string()),
        "{v}"
    );
}

#[test]
fn a_lesson_its_passing_matches_turn_against_is_re_checked_on_its_own_topic() {
    let sandbox = Sandbox::new();
    sandbox.write("lessons.yaml", PASSING);
    let daemon = Daemon::start(&sandbox);
    // Feedback speaks of the showing it follows (weight 2.0).
    let judge = |task: &str, verdict: &str| {
        assert!(shown_on(&daemon, task, None)
            .iter()
            .any(|(id, _)| id == "L-2"));
        daemon.json(&["feedback", "L-2", verdict]);
    };
    // Relevant three times on its own topic: the seed's score 1.314, 1.0
    // in the evaluator's unit, on strong matches and over every showing.
    for _ in 0..3 {
        judge(STACK_PROMPT, "--relevant");
    }
    let kept = explain_on(&daemon, "L-2", STACK_PROMPT);
    assert!(kept.contains(": kept, boost"), "{kept}");
    // Then irrelevant twice where it matched in passing: over every
    // showing the seed's 0.320, then -0.376 (in the evaluator's unit
    // 0.320 / 1.520 = 0.21, then -0.376 / 1.664 = -0.226, below the seed's
    // -0.1); its record on strong matches still 1.314 (1.0).
    judge(DIGEST_PROMPT, "--irrelevant");
    assert!(explain_on(&daemon, "L-2", STACK_PROMPT).contains(": kept, boost"));
    judge(DIGEST_PROMPT, "--irrelevant");
    let log = stdout(&daemon.memctl(&["log", "L-2"]));
    let words = log.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("~@python -0.376 (+3/-2)"), "{log}");
    assert!(words.contains(" @python +1.314 (+3/-0)"), "{log}");
    // On its own topic it is now a re-check: still shown where it matches
    // best, after the lessons that are kept, until a strong match's
    // verdict tells a drift from prompts it was not about.
    let probation = |daemon: &Daemon| {
        daemon.json(&[
            "query",
            "--task",
            STACK_PROMPT,
            "--tags",
            "python",
            "--kinds",
            "lesson",
        ])["ok"]["answer"]["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["id"] == "L-2")
            .map(|i| i["dimensions"]["probation"].clone())
    };
    assert_eq!(probation(&daemon), Some(1.0.into()));
    let explained = explain_on(&daemon, "L-2", STACK_PROMPT);
    assert!(
        explained.contains("over every showing (`~@python` in memctl log"),
        "{explained}"
    );
    assert!(explained.contains("is below -0.1"), "{explained}");
    assert!(
        explained
            .contains("its next judged session on a prompt that matches it well settles which"),
        "{explained}"
    );
    assert!(
        explained.contains("over 5.0 judged sessions"),
        "{explained}"
    );
    // Judged relevant there: over every showing 0.337 / 1.765 = 0.19,
    // over the line, but one verdict lifted it there: on trial, still a
    // re-check.
    judge(STACK_PROMPT, "--relevant");
    let on_trial = explain_on(&daemon, "L-2", STACK_PROMPT);
    assert!(on_trial.contains("over every showing"), "{on_trial}");
    assert!(on_trial.contains("is on trial"), "{on_trial}");
    assert!(on_trial.contains("it is still a re-check"), "{on_trial}");
    assert_eq!(probation(&daemon), Some(1.0.into()));
    // Relevant again: as many for it since the run against it as
    // against it, still on trial; a third confirms it, kept.
    judge(STACK_PROMPT, "--relevant");
    let even = explain_on(&daemon, "L-2", STACK_PROMPT);
    assert!(even.contains("is on trial"), "{even}");
    assert_eq!(probation(&daemon), Some(1.0.into()));
    judge(STACK_PROMPT, "--relevant");
    let kept = explain_on(&daemon, "L-2", STACK_PROMPT);
    assert!(kept.contains(": kept, boost"), "{kept}");
    assert!(!kept.contains("over every showing"), "{kept}");
    assert_ne!(probation(&daemon), Some(1.0.into()));
}

/// A prompt about digests that matches L-2 and L-4 of the test below
/// only in passing.
const DOCKER_DIGEST: &str = "pin the base image digest in docker";

#[test]
fn two_lessons_that_helped_re_checked_on_a_prompt_show_a_change() {
    let sandbox = Sandbox::new();
    sandbox.write(
        "lessons.yaml",
        "lessons:
  - id: L-2
    text: Integration tests need the docker compose stack up
  - id: L-4
    text: Bring the stack up in docker before the integration tests run
  - id: L-3
    text: Pin the base image digest in the release pipeline
  - id: L-GO
    text: Bring the stack up with the race detector on for integration tests
    tags: [go]
",
    );
    let daemon = Daemon::start(&sandbox);
    // A Go workspace was seen: in a Python one, L-GO is written for another
    // stack, a candidate only on a prompt that shows a change.
    session(&daemon, "s-go", "go");
    daemon.recorded();
    let ids = |task| -> Vec<String> {
        shown_on(&daemon, task, None)
            .into_iter()
            .map(|(id, _)| id)
            .collect()
    };
    // Feedback speaks of the showing it follows.
    let judge = |id: &str, task: &str, verdict: &str| {
        let shown = shown_on(&daemon, task, None);
        assert!(
            shown.iter().any(|(s, _)| s == id),
            "{id} on {task}: {shown:?}"
        );
        daemon.json(&["feedback", id, verdict]);
    };
    // Both helped here three times on their topic...
    for id in ["L-2", "L-4"] {
        for _ in 0..3 {
            judge(id, STACK_PROMPT, "--relevant");
        }
    }
    assert_eq!(ids(STACK_PROMPT), ["L-4", "L-2"]);
    // ...then L-2 did not, twice, where it matched in passing: its record
    // over every showing filters it, and on its topic it is a re-check.
    // One lesson re-checked shows no change (the judge's errors, or
    // prompts on another topic, turn one as readily).
    for _ in 0..2 {
        judge("L-2", DOCKER_DIGEST, "--irrelevant");
    }
    let go = |daemon: &Daemon| explain_on(daemon, "L-GO", STACK_PROMPT);
    assert!(
        explain_on(&daemon, "L-2", STACK_PROMPT).contains("it is a re-check"),
        "{}",
        explain_on(&daemon, "L-2", STACK_PROMPT)
    );
    assert!(go(&daemon).contains("this one does not"), "{}", go(&daemon));
    assert!(!ids(STACK_PROMPT).contains(&"L-GO".to_string()));
    // L-4 too: two lessons that had helped here are re-checked on the
    // prompt, which shows a change, and L-GO is a candidate on it.
    for _ in 0..2 {
        judge("L-4", DOCKER_DIGEST, "--irrelevant");
    }
    let why = go(&daemon);
    assert!(
        why.contains("had each been judged relevant here at least 3 times and are now re-checked here, their records over every showing filtering them")
            && why.contains("(L-2 and L-4 had each"),
        "{why}"
    );
    assert!(ids(STACK_PROMPT).contains(&"L-GO".to_string()));
    // Another Python repository saw no change: not there.
    let elsewhere = stdout(&daemon.memctl(&[
        "explain",
        "L-GO",
        "--task",
        STACK_PROMPT,
        "--tags",
        "python,flask",
    ]));
    assert!(elsewhere.contains("this one does not"), "{elsewhere}");
}

#[test]
fn feedback_without_tags_speaks_of_the_showing_it_follows() {
    let sandbox = Sandbox::new();
    sandbox.write("lessons.yaml", PASSING);
    let daemon = Daemon::start(&sandbox);
    let lines = |daemon: &Daemon| common::tag_names(&daemon.json(&["log", "L-2"])["ok"]["log"][0]);
    // Shown in passing: the feedback counts for such prompts only.
    assert!(shown_on(&daemon, DIGEST_PROMPT, None).contains(&("L-2".to_string(), 1.0)));
    daemon.json(&["feedback", "L-2", "--irrelevant"]);
    let mut tags = lines(&daemon);
    tags.sort();
    assert_eq!(tags, ["~*", "~@python", "~python"]);
    // Shown on its topic: for every prompt.
    assert!(shown_on(&daemon, STACK_PROMPT, None).contains(&("L-2".to_string(), 3.0)));
    daemon.json(&["feedback", "L-2", "--relevant"]);
    let mut tags = lines(&daemon);
    tags.sort();
    assert_eq!(
        tags,
        ["*", "@python", "python", "~*", "~@python", "~python"]
    );
    // memd's own names are not workspace tags.
    let out = daemon.memctl(&[
        "feedback",
        "L-2",
        "--relevant",
        "--tags",
        "~python,*,@python",
    ]);
    assert!(!out.status.success(), "{out:?}");
    let err = common::stderr(&out);
    assert!(err.contains("memd's own evidence"), "{err}");
}

#[test]
fn feedback_pins_and_unpins_on_the_seeds_own_score() {
    let sandbox = Sandbox::new();
    sandbox.write("lessons.yaml", LESSONS);
    let daemon = Daemon::start(&sandbox);
    // Relevant, relevant, relevant, irrelevant, relevant by feedback
    // (weight 2.0): the seed's score is 0.600, 1.020, 1.314, 0.320, then
    // 0.824 at the fifth judged session, above 0.6: pinned there (in the
    // evaluator's unit it would be 0.412, and it would not be).
    let verdicts = [
        "--relevant",
        "--relevant",
        "--relevant",
        "--irrelevant",
        "--relevant",
    ];
    for (i, verdict) in verdicts.iter().enumerate() {
        let v = daemon.json(&["feedback", "L-2", verdict, "--tags", "docker"]);
        assert_eq!(
            v["ok"]["judged"]["pinned"].is_null(),
            i < 4,
            "after {}: {v}",
            i + 1
        );
    }
    let log = daemon.json(&["log", "L-2"]);
    let (score, pos, neg) = tag_line(&log["ok"]["log"][0], "docker");
    assert!(
        (score - 0.82386).abs() < 1e-5 && (pos, neg) == (4, 1),
        "{log}"
    );
    // One irrelevant verdict more: 0.824 x 0.7 - 0.6 = -0.023, below 0.2.
    let v = daemon.json(&["feedback", "L-2", "--irrelevant", "--tags", "docker"]);
    assert!(v["ok"]["judged"]["pinned"].is_null(), "{v}");
    assert!(daemon.json(&["log", "L-2"])["ok"]["log"][0]["pinned"].is_null());
}

#[test]
fn a_pinned_lesson_is_filtered_at_session_start_by_its_verdicts() {
    let sandbox = Sandbox::new();
    let plan = r#"{"python": [-1, -1, -1, -1, -1]}"#;
    judged_by_tag(&sandbox, plan);
    sandbox.write(
        "lessons.yaml",
        "lessons:\n  - id: L-PIN\n    text: Run the integration tests against a fresh database\n    pinned: true\n",
    );
    let daemon = Daemon::start(&sandbox);
    // Sessions that start in python: the lesson, pinned in its file, is
    // shown at the start of each and judged irrelevant. Seed 001 puts
    // pinned lessons through the tag filter too: after the third verdict
    // (-0.657 over 3 judged sessions) it is no longer shown.
    let mut shown = Vec::new();
    for i in 0..5 {
        let id = format!("p-{i}");
        let start = daemon.json(&["query", "--tags", "python", "--session", &id]);
        shown.push(start.to_string().contains("L-PIN"));
        daemon.json(&[
            "session-end",
            &id,
            "--transcript",
            &fixture("transcript.jsonl"),
        ]);
        let out = daemon.memctl(&["evaluate"]);
        assert!(out.status.success(), "{}", stdout(&out));
    }
    assert_eq!(shown, [true, true, true, false, false]);
    let log = daemon.json(&["log", "L-PIN"]);
    let (python, _, neg) = tag_line(&log["ok"]["log"][0], "python");
    assert!((python + 0.657).abs() < 5e-4 && neg == 3, "{log}");
    let why = stdout(&daemon.memctl(&["explain", "L-PIN", "--tags", "python"]));
    assert!(why.contains("filtered"), "{why}");
    // Judged relevant again by hand until its score is back over the line:
    // on trial, it still owes verdicts before it is kept again, but seed
    // 001's filter keeps it, and the seed shows a pinned lesson its filter
    // keeps at the start of each session.
    let on_trial = |daemon: &Daemon| {
        let log = daemon.json(&["log", "L-PIN"]);
        log["ok"]["log"][0]["tags"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["tag"] == "python" && t["trial"] == true)
    };
    for _ in 0..3 {
        if on_trial(&daemon) {
            break;
        }
        feedback_python(&daemon, "L-PIN", "--relevant");
    }
    assert!(on_trial(&daemon), "{}", daemon.json(&["log", "L-PIN"]));
    let start = daemon.json(&["query", "--tags", "python", "--session", "p-trial"]);
    assert!(start.to_string().contains("L-PIN"), "{start}");
    let why = stdout(&daemon.memctl(&["explain", "L-PIN", "--tags", "python"]));
    assert!(
        why.contains("on probation: pinned") && why.contains("session start"),
        "{why}"
    );
    assert!(on_trial(&daemon), "a showing alone does not confirm it");
}

#[test]
fn verdicts_from_one_repository_do_not_filter_a_lesson_in_another_sharing_its_language() {
    let sandbox = Sandbox::new();
    sandbox.write("lessons.yaml", LESSONS);
    let daemon = Daemon::start(&sandbox);
    // Judged irrelevant in one python repository, seven times over: the
    // `python` tag holds the verdicts too, enough for seed 001's line in
    // any context that has it (-0.92 over 3.5 judged sessions in one that
    // also has a tag of its own without a verdict).
    for _ in 0..7 {
        daemon.json(&[
            "feedback",
            "L-1",
            "--irrelevant",
            "--tags",
            "python,billing",
        ]);
    }
    assert!(!lesson_ids(&daemon, "python,billing").contains(&"L-1".to_string()));
    // Another python repository, where it was never judged: the verdicts
    // order it but do not filter it.
    assert!(lesson_ids(&daemon, "python,search").contains(&"L-1".to_string()));
    let why = explain(&daemon, "L-1", "python,search");
    assert!(
        why.contains("never judged in this context") && why.contains("kept"),
        "{why}"
    );
    // Judged there too, on its own verdicts it is filtered there.
    for _ in 0..3 {
        daemon.json(&["feedback", "L-1", "--irrelevant", "--tags", "python,search"]);
    }
    assert!(!lesson_ids(&daemon, "python,search").contains(&"L-1".to_string()));
}

#[test]
fn a_repository_with_three_judged_sessions_decides_on_its_own_record() {
    let sandbox = Sandbox::new();
    sandbox.write("lessons.yaml", LESSONS);
    let daemon = Daemon::start(&sandbox);
    // Two repositories on one stack. Irrelevant three times in one, then
    // relevant six times in the other: `python` and `django` hold the
    // second's verdicts last (+0.80), so the average over the first's tags
    // is +0.32 and kept it there; its own record there is -0.66 over 3.
    let search = "python,django,search";
    let billing = "python,django,billing";
    for _ in 0..3 {
        daemon.json(&["feedback", "L-1", "--irrelevant", "--tags", search]);
    }
    for _ in 0..6 {
        daemon.json(&["feedback", "L-1", "--relevant", "--tags", billing]);
    }
    assert!(!lesson_ids(&daemon, search).contains(&"L-1".to_string()));
    let why = explain(&daemon, "L-1", search);
    assert!(
        why.contains("filtered on its own record in this context"),
        "{why}"
    );
    assert!(
        why.contains("its own record in this context (`@django,python,search` in memctl log): average -1.314 (-0.657 in the evaluator's unit"),
        "{why}"
    );
    assert!(lesson_ids(&daemon, billing).contains(&"L-1".to_string()));
    // The record is kept like any tag's, in the log and across a restart.
    let log = daemon.json(&["log", "L-1"]);
    assert!(log.to_string().contains("@django,python,search"), "{log}");
    drop(daemon);
    let daemon = Daemon::start(&sandbox);
    assert!(!lesson_ids(&daemon, search).contains(&"L-1".to_string()));
    assert!(lesson_ids(&daemon, billing).contains(&"L-1".to_string()));
}

#[test]
fn two_irrelevant_verdicts_filter_in_their_repository_once_the_judge_is_read() {
    let sandbox = Sandbox::new();
    sandbox.write(
        "lessons.yaml",
        format!(
            "{LESSONS}  - id: L-3
    text: Integration tests read their fixtures from the testdata directory
"
        ),
    );
    let daemon = Daemon::start(&sandbox);
    let search = "python,django,search";
    let feedback = |id: &str, verdict: &str, tags: &str| {
        daemon.json(&["feedback", id, verdict, "--tags", tags]);
    };
    feedback("L-1", "--irrelevant", search);
    feedback("L-1", "--irrelevant", search);
    // Until memd has read how often the judge contradicts itself, the
    // seed's three sessions.
    assert!(lesson_ids(&daemon, search).contains(&"L-1".to_string()));
    // 220 pairs of verdicts on one item in one context, 20 of them
    // disagreeing: a judge wrong about one time in twenty, by whom 10 of
    // the 24 verdicts found a lesson relevant (0.41 of lessons, read
    // through its error).
    for i in 0..11 {
        let verdict = if i == 0 { "--irrelevant" } else { "--relevant" };
        feedback("L-2", verdict, "go,cli");
        feedback("L-3", "--irrelevant", "go,cli");
    }
    assert!(!lesson_ids(&daemon, search).contains(&"L-1".to_string()));
    let why = explain(&daemon, "L-1", search);
    assert!(
        why.contains("filtered on its own record in this context after 2 judged session(s), before the seed's 3")
            && why.contains("about 5%")
            && why.contains("less than half the 0.41 it had before them"),
        "{why}"
    );
    // Never judged in another repository on the same stack: shown there.
    assert!(lesson_ids(&daemon, "python,django,billing").contains(&"L-1".to_string()));
    // One relevant verdict here lifts it over the line, onto trial as a
    // record the seed's rule filtered is: a re-check, shown on the test
    // prompt, until two more confirm it.
    feedback("L-1", "--relevant", search);
    assert!(lesson_ids(&daemon, search).contains(&"L-1".to_string()));
    let why = explain(&daemon, "L-1", search);
    assert!(
        why.contains("on trial") && why.contains("2 more relevant verdict"),
        "{why}"
    );
    feedback("L-1", "--relevant", search);
    feedback("L-1", "--relevant", search);
    let why = explain(&daemon, "L-1", search);
    assert!(why.contains("kept, boost"), "{why}");
}

#[test]
fn verdicts_from_contexts_that_predict_each_other_filter_a_lesson_judged_once_here() {
    let sandbox = Sandbox::new();
    let mut yaml = LESSONS.to_string();
    for i in 0..30 {
        yaml.push_str(&format!(
            "  - id: F-{i}\n    text: Feature flag {i} keeps its default in staging\n"
        ));
    }
    sandbox.write("lessons.yaml", yaml);
    let daemon = Daemon::start(&sandbox);
    let (billing, shop, search) = (
        "python,django,billing",
        "python,django,shop",
        "python,django,search",
    );
    let feedback = |id: &str, relevant: bool, tags: &str| {
        let verdict = if relevant {
            "--relevant"
        } else {
            "--irrelevant"
        };
        daemon.json(&["feedback", id, verdict, "--tags", tags]);
    };
    // L-1 shown in the billing repository and judged irrelevant there,
    // then judged irrelevant once in search.
    let shown = open_session(&daemon, "b-1", billing);
    assert!(
        common::item_ids(&shown).contains(&"L-1".to_string()),
        "{shown}"
    );
    feedback("L-1", false, billing);
    feedback("L-1", false, search);
    // Until memd has seen how often contexts agree: kept in search (one
    // judged session of its own there).
    assert!(lesson_ids(&daemon, search).contains(&"L-1".to_string()));
    // Thirty lessons judged twice in billing and twice in shop: ten
    // relevant, ten irrelevant, ten with one wrong verdict in shop (120
    // pairs within a repository, 20 disagreeing; 240 across the two, 40
    // disagreeing, as often as within one: a lesson helps in both or in
    // neither).
    for i in 0..30 {
        let id = format!("F-{i}");
        let (b, s) = match i % 3 {
            0 => ([true, true], [true, true]),
            1 => ([false, false], [false, false]),
            _ => ([true, true], [true, false]),
        };
        for (tags, verdicts) in [(billing, b), (shop, s)] {
            for v in verdicts {
                feedback(&id, v, tags);
            }
        }
    }
    let status = daemon.json(&["status"]);
    let judge = &status["ok"]["status"]["judge"];
    assert_eq!(judge["pairs_across"], 240 + 2, "{judge}");
    assert!(
        judge["relevance_differs"].as_f64().unwrap() < 0.01,
        "{judge}"
    );
    let line = stdout(&daemon.memctl(&["status"]));
    assert!(
        line.contains("a lesson's relevance differs between two contexts 0% of the time"),
        "{line}"
    );
    // Billing's verdict speaks for search: filtered there.
    assert!(!lesson_ids(&daemon, search).contains(&"L-1".to_string()));
    let why = explain(&daemon, "L-1", search);
    assert!(
        why.contains(
            "filtered on its verdicts in every context it was judged in, read for this one"
        ) && why.contains("0 relevant and 1 irrelevant here, 0 and 1 in 1 other context(s)")
            && why.contains("about 0%"),
        "{why}"
    );
    // Never judged in shop: billing's verdict does not filter it there.
    assert!(lesson_ids(&daemon, shop).contains(&"L-1".to_string()));
    // One verdict in all: kept.
    feedback("L-2", false, search);
    assert!(lesson_ids(&daemon, search).contains(&"L-2".to_string()));
    // Judged relevant twice in search since: on balance relevant there.
    feedback("L-1", true, search);
    feedback("L-1", true, search);
    assert!(lesson_ids(&daemon, search).contains(&"L-1".to_string()));
}

#[test]
fn a_pin_by_hand_shows_a_lesson_at_session_start_until_unpinned() {
    let sandbox = Sandbox::new();
    sandbox.write("lessons.yaml", LESSONS);
    let daemon = Daemon::start(&sandbox);
    let start = |session: &str| -> Vec<String> {
        let v = daemon.json(&[
            "query",
            "--tags",
            "python",
            "--session",
            session,
            "--kinds",
            "lesson",
        ]);
        common::item_ids(&v)
    };
    assert!(start("s-0").is_empty(), "nothing is pinned yet");
    let pinned = daemon.json(&["pin", "L-1", "--tags", "python"]);
    assert_eq!(pinned["ok"]["judged"]["pinned"], "manual for [python]");
    assert_eq!(start("s-1"), ["L-1"]);
    // Not where a query lacks the tag.
    let elsewhere = daemon.json(&[
        "query",
        "--tags",
        "go",
        "--session",
        "s-2",
        "--kinds",
        "lesson",
    ]);
    assert!(elsewhere["ok"]["answer"]["items"]
        .as_array()
        .unwrap()
        .is_empty());
    let unpinned = daemon.json(&["unpin", "L-1", "--tags", "python"]);
    assert!(unpinned["ok"]["judged"]["pinned"].is_null(), "{unpinned}");
    assert!(start("s-3").is_empty());
    // An unknown item is refused.
    let out = daemon.memctl(&["pin", "L-404"]);
    assert!(!out.status.success());
}

#[test]
fn a_project_lessons_own_tags_count_where_they_were_absent() {
    let sandbox = Sandbox::new();
    let repo = sandbox.dir.path().join("svc");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(repo.join(".memd")).unwrap();
    std::fs::write(
        repo.join(".memd/lessons.yaml"),
        "lessons:\n  - id: L-GO\n    text: Close the response body in every handler\n    tags: [golang]\n",
    )
    .unwrap();
    let daemon = Daemon::start(&sandbox);
    let cwd = repo.display().to_string();
    // A context with the tag, so memd knows it as a workspace tag.
    daemon.json(&[
        "query",
        "--task",
        "close the body",
        "--cwd",
        &cwd,
        "--tags",
        "golang",
        "--session",
        "s-1",
    ]);
    // The recorder counts the session's context, and so its tags, on a
    // thread of its own: the verdict waits until golang is one memd knows.
    daemon.recorded();
    let judged = daemon.json(&["feedback", "L-GO", "--irrelevant", "--tags", "python"]);
    let tags = common::tag_names(&judged["ok"]["judged"]);
    assert!(
        tags.contains(&"!golang".to_string()),
        "the project lesson's own tag, absent here, carries the verdict: {tags:?}"
    );
}

#[test]
fn a_judge_that_contradicts_itself_lowers_the_filter_line() {
    let sandbox = Sandbox::new();
    sandbox.write("lessons.yaml", LESSONS);
    let mut daemon = Daemon::start(&sandbox);
    let judge = |v: &Value| v["ok"]["status"]["judge"].clone();
    assert_eq!(judge(&daemon.json(&["status"]))["filter_line"], -0.1);

    // Eleven verdicts on L-2 in one context, six relevant and five not:
    // 110 pairs of them, 60 disagreeing, more than a coin's 55.
    for i in 0..11 {
        let verdict = if i % 2 == 0 {
            "--relevant"
        } else {
            "--irrelevant"
        };
        daemon.json(&["feedback", "L-2", verdict, "--tags", "go"]);
    }
    // Three irrelevant verdicts on L-1: -0.657 in the evaluator's unit,
    // below the seed's line, far above this judge's.
    for _ in 0..3 {
        daemon.json(&["feedback", "L-1", "--irrelevant", "--tags", "python"]);
    }
    let j = judge(&daemon.json(&["status"]));
    assert_eq!(
        (j["pairs"].as_u64(), j["disagreeing"].as_u64()),
        (Some(116), Some(60)),
        "{j}"
    );
    assert_eq!(j["error"].as_f64(), Some(0.5), "{j}");
    let line = j["filter_line"].as_f64().unwrap();
    assert!(line < -0.8, "{j}");

    assert!(lesson_ids(&daemon, "python").contains(&"L-1".to_string()));
    let explain = explain(&daemon, "L-1", "python");
    assert!(
        explain.contains(&format!(
            "kept, above the line {line:.3} (seed 001's -0.1, lowered"
        )),
        "{explain}"
    );
    let status = stdout(&daemon.memctl(&["status"]));
    assert!(status.contains("60 of 116 pairs of verdicts on one item in one context disagree, as from a judge wrong 50.0% of the time"), "{status}");
    // `memctl doctor` calls such a judge a coin.
    let home = sandbox.dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let out = std::process::Command::new(common::memctl_path())
        .args(["doctor", "--json", "--socket"])
        .arg(&daemon.socket)
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_STATE_HOME", home.join(".local/state"))
        .output()
        .unwrap();
    let doctor: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let check = doctor
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "judge")
        .cloned()
        .unwrap_or_default();
    assert_eq!(check["ok"], false, "{doctor}");
    assert!(
        check["detail"]
            .as_str()
            .unwrap_or_default()
            .starts_with("60 of 116 pairs of verdicts on one lesson in one repository disagree, as often as coin flips would (a judge wrong 50% of the time)"),
        "{check}"
    );

    // The line is read again from the store after a restart.
    daemon.stop();
    let daemon = Daemon::start(&sandbox);
    assert_eq!(
        judge(&daemon.json(&["status"]))["filter_line"].as_f64(),
        Some(line)
    );
    assert!(lesson_ids(&daemon, "python").contains(&"L-1".to_string()));
}
