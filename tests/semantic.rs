//! The semantic tier through the real daemon: the shipped model finds a
//! paraphrase that shares no word with the item, `enabled = false` gives
//! exactly the lexical results, vectors are stored so a restart embeds
//! nothing, and `explain` shows both parts of the similarity.

mod common;

use common::{Daemon, Sandbox};
use serde_json::Value;

const GOTCHAS: &str = "gotchas:
  - id: G-FLAKY
    title: Flaky tests that fail intermittently
    fix: Quarantine the unstable test and fix its ordering dependency
  - id: G-DOCKER
    title: Docker image layers bloat the image size
    fix: Order the Dockerfile so dependencies are cached before the source
  - id: G-TZ
    title: Timestamps stored in local time break across daylight saving
    fix: Store UTC and convert only for display
  - id: G-PURCHASE
    title: Automobile purchase
    fix: Purchase automobiles through the dealer order
";

/// A prompt that shares no word (after stemming) with G-PURCHASE, nor
/// with any other item.
const PARAPHRASE: &str = "buying cars";

fn hits(daemon: &Daemon, text: &str) -> Vec<(String, f64)> {
    let v = daemon.json(&["search", text, "--limit", "10"]);
    v["ok"]["hits"]
        .as_array()
        .unwrap_or_else(|| panic!("{v}"))
        .iter()
        .map(|h| {
            (
                h["id"].as_str().unwrap().to_string(),
                h["similarity"].as_f64().unwrap(),
            )
        })
        .collect()
}

fn sandbox(semantic: Option<bool>) -> Sandbox {
    let sandbox = Sandbox::new();
    if let Some(enabled) = semantic {
        std::fs::write(
            sandbox.config(),
            format!("roots = []\n[semantic]\nenabled = {enabled}\n"),
        )
        .unwrap();
    }
    sandbox.write("gotchas.yaml", GOTCHAS);
    sandbox
}

#[test]
fn a_paraphrase_with_no_shared_word_is_found_through_the_shipped_model() {
    let sandbox = sandbox(None);
    let daemon = Daemon::start(&sandbox);
    let found = hits(&daemon, PARAPHRASE);
    assert_eq!(
        found.first().map(|h| h.0.as_str()),
        Some("G-PURCHASE"),
        "{found:?}"
    );
    let status = daemon.json(&["status"]);
    assert!(
        status["ok"]["status"]["semantic"]
            .as_str()
            .is_some_and(|s| s.contains("minilm-l6-static")),
        "{status}"
    );
    // explain shows both parts: no lexical match, the meaning carries it.
    let explained = daemon.json(&["explain", "G-PURCHASE", "--task", PARAPHRASE]);
    let dims = &explained["ok"]["explanation"]["dimensions"];
    assert_eq!(dims["lexical"].as_f64(), Some(0.0), "{explained}");
    assert!(dims["cosine"].as_f64().unwrap() > 0.7, "{explained}");
    assert!(explained.to_string().contains("meaning"), "{explained}");
}

#[test]
fn with_the_tier_off_results_equal_lexical_matching() {
    let off = sandbox(Some(false));
    let daemon = Daemon::start(&off);
    assert!(
        hits(&daemon, PARAPHRASE).is_empty(),
        "no shared word: nothing"
    );
    let status = daemon.json(&["status"]);
    assert_eq!(status["ok"]["status"]["semantic"], Value::Null, "{status}");
    // Every hit and similarity is the lexical one: the same as the lexical
    // parts the tier reports when on.
    let on = sandbox(None);
    let with_tier = Daemon::start(&on);
    for text in [
        "flaky tests",
        "docker image size",
        "daylight saving time stored",
    ] {
        let lexical = hits(&daemon, text);
        assert!(!lexical.is_empty(), "{text}");
        for (id, similarity) in &lexical {
            let explained = with_tier.json(&["explain", id, "--task", text]);
            let part = explained["ok"]["explanation"]["dimensions"]["lexical"]
                .as_f64()
                .unwrap();
            assert!(
                (part - similarity).abs() < 1e-6,
                "{text} {id}: {part} vs {similarity}"
            );
        }
    }
}

#[test]
fn vectors_are_stored_so_a_restart_embeds_nothing() {
    let sandbox = sandbox(None);
    let mut daemon = Daemon::start(&sandbox);
    let before = hits(&daemon, PARAPHRASE);
    daemon.stop();
    let daemon = Daemon::start(&sandbox);
    let status = daemon.json(&["status"]);
    assert_eq!(status["ok"]["status"]["startup"]["parsed"], 0, "{status}");
    assert_eq!(
        status["ok"]["status"]["startup"]["from_store"], 1,
        "{status}"
    );
    assert_eq!(
        hits(&daemon, PARAPHRASE),
        before,
        "the stored vectors serve the same"
    );
    drop(daemon);
    // Turned off and on again: the stored records serve as they are while
    // off, and their vectors, still this model's, when back on.
    std::fs::write(
        sandbox.config(),
        "roots = []\n[semantic]\nenabled = false\n",
    )
    .unwrap();
    let mut off = Daemon::start(&sandbox);
    let status = off.json(&["status"]);
    assert_eq!(status["ok"]["status"]["startup"]["parsed"], 0, "{status}");
    off.stop();
    std::fs::write(sandbox.config(), "roots = []\n").unwrap();
    let on = Daemon::start(&sandbox);
    let status = on.json(&["status"]);
    assert_eq!(status["ok"]["status"]["startup"]["parsed"], 0, "{status}");
    assert_eq!(hits(&on, PARAPHRASE), before);
}

#[test]
fn a_model_directory_that_does_not_load_leaves_matching_lexical() {
    let sandbox = sandbox(None);
    let dir = sandbox.dir.path().join("broken-model");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("tokenizer.json"), "{ not json").unwrap();
    std::fs::write(
        sandbox.config(),
        format!(
            "roots = []\n[semantic]\nmodel = {:?}\n",
            dir.display().to_string()
        ),
    )
    .unwrap();
    let daemon = Daemon::start(&sandbox);
    assert_eq!(
        daemon.json(&["status"])["ok"]["status"]["semantic"],
        Value::Null
    );
    assert_eq!(hits(&daemon, "flaky tests")[0].0, "G-FLAKY");
    let log = std::fs::read_to_string(sandbox.dir.path().join("memd.log")).unwrap_or_default();
    assert!(log.contains("semantic model cannot be loaded"), "{log}");
}
