//! `memd query` end to end: the real binary on real files.

mod common;

use common::{example_config, inner, run, stderr, stdout, Sandbox};
use serde_json::Value;

const NOW: &str = "2026-11-22T12:00:00Z";

fn example_query(extra: &[&str]) -> std::process::Output {
    let config = example_config().display().to_string();
    let mut args = vec![
        "query",
        "--config",
        config.as_str(),
        "--task",
        "implement webhook idempotency",
        "--agent",
        "backend-engineer",
        "--now",
        NOW,
    ];
    args.extend_from_slice(extra);
    run(&args)
}

fn position(block: &str, needle: &str) -> usize {
    block
        .find(needle)
        .unwrap_or_else(|| panic!("`{needle}` missing from:\n{block}"))
}

#[test]
fn the_issue_example_follows_seed_000() {
    let out = example_query(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let block = stdout(&out);
    // Sections in the SPEC's order, in seed 000's format.
    let experience = position(&block, "## Your Past Experience\n- Common mistake to avoid: \"Missing Zod validation\" → Always validate input");
    let patterns = position(
        &block,
        "## Relevant Patterns (semantically matched, score >= 4/10)\n- PATTERN-014 (score: ",
    );
    let anti = position(&block, "## Anti-Patterns to Avoid\n- ANTI-004: \"Acknowledging Webhooks Before Persisting Them\" → ");
    let gotchas = position(&block, "## Gotchas\n- \"Stripe signs the raw body\" → ");
    assert!(experience < patterns && patterns < anti && anti < gotchas);
    position(
        &block,
        "- Preferred approach for API routes: \"Route → Schema → Handler → Service\"",
    );
    // The best pattern scores >= 7 and so carries its code.
    position(&block, "  Problem: \"Duplicate webhook deliveries");
    position(&block, "  Code:\n  ```\n  const inserted");
    // At most 5 patterns, 3 anti-patterns, 3 gotchas.
    let section = |start: usize| block[start..].split("\n\n").next().unwrap().to_string();
    assert!(section(patterns).matches("\n- PATTERN-").count() <= 5);
    assert!(section(anti).matches("\n- ANTI-").count() <= 3);
    assert!(section(gotchas).matches("\n- ").count() <= 3);
}

#[test]
fn json_shows_each_items_dimensions() {
    let out = example_query(&["--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let answer: Value = serde_json::from_str(&stdout(&out)).expect("valid JSON");
    assert!(answer["block"].as_str().unwrap().contains("PATTERN-014"));
    let items = answer["items"].as_array().unwrap();
    let patterns: Vec<&Value> = items.iter().filter(|i| i["kind"] == "pattern").collect();
    assert!(!patterns.is_empty() && patterns.len() <= 5);
    for p in &patterns {
        let d = &p["dimensions"];
        let sum: f64 = ["task", "product", "role", "history", "recency"]
            .iter()
            .map(|k| {
                d[k].as_f64()
                    .unwrap_or_else(|| panic!("dimension {k} in {p}"))
            })
            .sum();
        assert_eq!(sum, p["score"].as_f64().unwrap());
        assert!(sum >= 3.0);
    }
    let first = patterns[0];
    assert_eq!(first["id"], "PATTERN-014");
    assert!(first["score"].as_f64().unwrap() >= 7.0);
    assert_eq!(first["dimensions"]["task"], 3.0);
    let source = first["source"].as_str().unwrap();
    assert!(source.ends_with("patterns.yaml:4"), "{source}");
    for anti in items.iter().filter(|i| i["kind"] == "anti_pattern") {
        let d = anti["dimensions"].as_object().unwrap();
        assert!(d.contains_key("task") && d.contains_key("role") && !d.contains_key("product"));
        assert!(anti["score"].as_f64().unwrap() >= 3.0);
    }
    assert_eq!(
        items.iter().filter(|i| i["kind"] == "experience").count(),
        4
    );
}

#[test]
fn the_product_dimension_counts() {
    let without = example_query(&["--json"]);
    let with = example_query(&["--json", "--product", "payflow"]);
    let score = |out: &std::process::Output| {
        let v: Value = serde_json::from_str(&stdout(out)).unwrap();
        let p = v["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["id"] == "PATTERN-014")
            .cloned()
            .unwrap();
        (
            p["dimensions"]["product"].as_f64().unwrap(),
            p["score"].as_f64().unwrap(),
        )
    };
    assert_eq!(score(&with).0, 2.0);
    assert_eq!(score(&with).1, score(&without).1 + 2.0);
}

#[test]
fn the_block_respects_the_budget_dropping_whole_items() {
    let full = example_query(&["--json"]);
    let full: Value = serde_json::from_str(&stdout(&full)).unwrap();
    let full_items = full["items"].as_array().unwrap().len();
    let out = example_query(&["--json", "--budget", "1500"]);
    let answer: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let block = answer["block"].as_str().unwrap();
    assert!(
        block.chars().count() <= 1500,
        "{} chars",
        block.chars().count()
    );
    let kept = answer["items"].as_array().unwrap();
    assert!(!kept.is_empty() && kept.len() < full_items);
    // Every kept item is whole in the block; experience is kept first.
    assert_eq!(kept[0]["kind"], "experience");
    for item in kept
        .iter()
        .filter(|i| i["kind"] == "pattern" || i["kind"] == "anti_pattern")
    {
        assert!(block.contains(item["id"].as_str().unwrap()));
    }
}

#[test]
fn multibyte_text_is_never_cut_mid_character() {
    let sandbox = Sandbox::new();
    let mut yaml = String::from("gotchas:\n");
    for i in 0..20 {
        yaml.push_str(&format!(
            "  - id: G-{i}\n    title: \"Zeichensätze {i}: äöü ß 日本語 🚀\"\n    fix: \"Immer UTF-8 prüfen — ✓ {i}\"\n    category: encoding\n"
        ));
    }
    sandbox.write("gotchas.yaml", yaml);
    for budget in ["120", "121", "122", "123", "200", "333"] {
        let out = sandbox.query(&[
            "--task",
            "fix the encoding bug",
            "--budget",
            budget,
            "--json",
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        let answer: Value = serde_json::from_str(&stdout(&out)).unwrap();
        let block = answer["block"].as_str().unwrap();
        assert!(block.chars().count() <= budget.parse().unwrap());
        for item in answer["items"].as_array().unwrap() {
            let n = item["id"].as_str().unwrap().trim_start_matches("G-");
            assert!(
                block.contains(&format!("Immer UTF-8 prüfen — ✓ {n}")),
                "item {n} whole"
            );
        }
    }
}

#[test]
fn lessons_are_gated_by_structural_prerequisites() {
    let config = example_config().display().to_string();
    let base = [
        "query",
        "--config",
        config.as_str(),
        "--now",
        NOW,
        "--task",
        "run the integration tests",
    ];
    let outside = run(&base);
    assert!(!stdout(&outside).contains("LESSON-101"));
    let mut inside = base.to_vec();
    inside.extend(["--repo", "/home/dev/src/payflow-api"]);
    let inside = run(&inside);
    let block = stdout(&inside);
    position(&block, "## Pinned Lessons\n- Run database migrations");
}

#[test]
fn observations_follow_the_mode() {
    let sandbox = Sandbox::new();
    sandbox.write(
        "obs.jsonl",
        concat!(
            r#"{"id":"fresh","type":"decision","content":"chose redb","agent_type":"backend-engineer","created_at":"2026-11-22T11:59:00Z"}"#,
            "\n",
            r#"{"id":"day-old","type":"warning","content":"flaky socket test","created_at":"2026-11-21T12:00:00Z"}"#,
            "\n"
        ),
    );
    let ids = |mode: &str| {
        let out = sandbox.query(&[
            "--agent",
            "backend-engineer",
            "--now",
            NOW,
            "--mode",
            mode,
            "--json",
        ]);
        let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
        v["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["id"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids("conservative"), ["fresh"]);
    assert_eq!(ids("aggressive"), ["fresh", "day-old"]);
}

#[test]
fn exemplars_fall_back_to_seeds_then_to_nothing() {
    let sandbox = Sandbox::new();
    let task = ["--task", "draft a reply about retries", "--now", NOW];
    let out = sandbox.query(&task);
    assert!(out.status.success());
    assert_eq!(
        stdout(&out),
        "",
        "neither exemplars nor seeds: no block at all"
    );
    sandbox.write(
        "seeds.yaml",
        "seeds:\n  - id: S1\n    hook: Hook about Rust ownership\n    source: Rust Tips\n  - id: S2\n    hook: Why async matters for web servers\n    source: Blog Draft\n    engagement_weight: 0.9\n",
    );
    let block = stdout(&sandbox.query(&task));
    assert_eq!(
        inner(&block),
        "Relevant ideas from your notes:\n1. \"Why async matters for web servers\" (from: Blog Draft)\n2. \"Hook about Rust ownership\" (from: Rust Tips)\nDraw on these ideas to make your response more informed."
    );
    sandbox.write(
        "exemplars.yaml",
        "exemplars:\n  - id: E1\n    kind: reply\n    content: Have you tried backoff with jitter?\n    performance_score: 10\n    posted_at: 2026-11-22\n",
    );
    let block = stdout(&sandbox.query(&task));
    assert_eq!(
        inner(&block),
        "Winning patterns from your best-performing content:\n1. [ask_question] (reply): \"Have you tried backoff with jitter?\"\nUse these patterns as inspiration but don't copy them directly."
    );
    // A task that drafts nothing gets no winning patterns.
    let other = stdout(&sandbox.query(&["--task", "fix the login bug", "--now", NOW]));
    assert!(!other.contains("Winning patterns"));
}

#[test]
fn a_bad_now_is_a_clear_error() {
    let sandbox = Sandbox::new();
    let out = sandbox.query(&["--now", "yesterday"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("invalid `now`"), "{}", stderr(&out));
}

#[test]
fn experience_is_always_included_for_its_agent() {
    let config = example_config().display().to_string();
    let out = run(&[
        "query",
        "--config",
        config.as_str(),
        "--task",
        "rename a css class",
        "--agent",
        "QA Engineer",
        "--json",
    ]);
    let answer: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let ids: Vec<&str> = answer["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["kind"] == "experience")
        .map(|i| i["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "qa-engineer/mistake-1",
            "qa-engineer/mistake-2",
            "qa-engineer/approach-1"
        ]
    );
    let block = answer["block"].as_str().unwrap();
    assert!(inner(block).starts_with(
        "## Your Past Experience\n- Common mistake to avoid: \"Asserting on log output\""
    ));
    assert!(block.contains("- Preferred approach for integration tests: \"buildApp() with a real Postgres schema per file\""));
    // No agent, no experience.
    let out = run(&[
        "query",
        "--config",
        config.as_str(),
        "--task",
        "rename a css class",
        "--json",
    ]);
    assert!(!stdout(&out).contains("\"experience\""));
}

#[test]
fn kinds_restrict_the_sections() {
    let out = example_query(&["--kinds", "gotchas,anti-pattern", "--json"]);
    let answer: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let kinds: std::collections::BTreeSet<&str> = answer["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds.into_iter().collect::<Vec<_>>(),
        ["anti_pattern", "gotcha"]
    );
    let bad = example_query(&["--kinds", "widgets"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("unknown kind `widgets`"));
}
