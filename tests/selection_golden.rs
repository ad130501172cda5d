//! What selection chooses stays what it chose (issue 32): every speed-up of
//! the query path must give the same answers for the same knowledge and
//! context. Two generated corpora (the query bench's mixed corpus and its
//! lesson-heavy team corpus), prompts as the hook asks them, `memd query`
//! tasks and session starts, with nothing learned and after learned state
//! (tag scores, filters, automatic pins); the items of every answer, in
//! order, are compared with `tests/golden/selection.txt`.
//!
//! The file is written by this test when `MEMD_BLESS=1` is set: do that
//! only for a change that means to change what is selected, and say why in
//! the commit.

#[path = "../benches/corpus/mod.rs"]
mod corpus;

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use corpus::{learn, query, vocabulary, write_corpus, Rng};
use memd::config::Config;
use memd::engine::Engine;
use memd::learning::Learned;
use memd::protocol::{Kind, Query};

const GOLDEN: &str = "tests/golden/selection.txt";

fn engine(dir: &Path) -> Engine {
    let mut engine = Engine::new(&Config::default());
    let model = memd::semantic::Model::built_in().expect("the built-in model loads");
    engine.set_model(Some(Arc::new(model)));
    engine.load_roots(&[dir.to_path_buf()]);
    engine
}

/// Each query's answer: its items' ids, in order.
fn answers(engine: &Engine, learned: &Learned, name: &str, queries: &[Query], out: &mut String) {
    let none = HashSet::new();
    for (n, q) in queries.iter().enumerate() {
        let answer = engine
            .query_excluding(learned, q, &none)
            .expect("the query is answered");
        let ids: Vec<&str> = answer.items.iter().map(|i| i.id.as_str()).collect();
        writeln!(out, "{name} {n}: {}", ids.join(" ")).unwrap();
    }
}

/// The same queries as the hook asks on a prompt, and as it asks at
/// session start.
fn variants(queries: &[Query]) -> (Vec<Query>, Vec<Query>) {
    let prompts = queries
        .iter()
        .map(|q| Query {
            task_match: true,
            ..q.clone()
        })
        .collect();
    let starts = queries
        .iter()
        .map(|q| Query {
            task: String::new(),
            task_match: false,
            kinds: vec![Kind::Experience, Kind::Lesson],
            ..q.clone()
        })
        .collect();
    (prompts, starts)
}

/// Every answer of `queries` on `engine`, before and after learning.
fn play(engine: &mut Engine, name: &str, queries: &[Query], rng: &mut Rng, out: &mut String) {
    let (prompts, starts) = variants(queries);
    let mut learned = Learned::default();
    answers(engine, &learned, &format!("{name} query"), queries, out);
    answers(engine, &learned, &format!("{name} prompt"), &prompts, out);
    learn(engine, &mut learned, rng, &prompts, 400);
    let learned = &learned;
    answers(
        engine,
        learned,
        &format!("{name} learned query"),
        queries,
        out,
    );
    answers(
        engine,
        learned,
        &format!("{name} learned prompt"),
        &prompts,
        out,
    );
    answers(
        engine,
        learned,
        &format!("{name} learned start"),
        &starts,
        out,
    );
    engine.set_decide(true);
    answers(
        engine,
        learned,
        &format!("{name} learned decided"),
        &prompts,
        out,
    );
    engine.set_decide(false);
}

#[test]
fn selection_answers_what_it_answered() {
    let mut out = String::new();

    // The mixed corpus: every kind, words of a shared vocabulary.
    let vocab = vocabulary();
    let mut rng = Rng(2_000);
    let dir = tempfile::tempdir().unwrap();
    write_corpus(dir.path(), 2_000, &mut rng, &vocab);
    let mut mixed = engine(dir.path());
    let queries: Vec<Query> = (0..60).map(|_| query(&mut rng, &vocab)).collect();
    play(&mut mixed, "mixed", &queries, &mut rng, &mut out);

    // The team corpus: lessons only, one team's narrow vocabulary.
    let mut rng = Rng(3_000 ^ 0x7ea4);
    let dir = tempfile::tempdir().unwrap();
    corpus::team::write(dir.path(), 3_000, &mut rng);
    let mut team = engine(dir.path());
    let queries: Vec<Query> = (0..60).map(|n| corpus::team::query(&mut rng, n)).collect();
    play(&mut team, "team", &queries, &mut rng, &mut out);

    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join(GOLDEN);
    if std::env::var_os("MEMD_BLESS").is_some() {
        std::fs::create_dir_all(golden.parent().unwrap()).unwrap();
        std::fs::write(&golden, &out).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&golden).expect("tests/golden/selection.txt exists");
    let changed: Vec<String> = expected
        .lines()
        .zip(out.lines())
        .filter(|(a, b)| a != b)
        .take(10)
        .map(|(a, b)| format!("  was: {a}\n  now: {b}"))
        .collect();
    assert!(
        changed.is_empty() && expected.lines().count() == out.lines().count(),
        "selection changed ({} lines before, {} now):\n{}",
        expected.lines().count(),
        out.lines().count(),
        changed.join("\n")
    );
    // The answers are not all empty: the comparison means something.
    let shown = out.lines().filter(|l| !l.ends_with(": ")).count();
    assert!(
        shown > out.lines().count() / 2,
        "{shown} answers with items"
    );
}
