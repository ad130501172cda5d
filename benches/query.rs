//! Query latency through the engine on generated mixed corpora.
//!
//! `cargo bench --bench query` writes corpora of 1k, 10k and 100k items as
//! real knowledge files (every kind, 500 items a file), loads them with the
//! real loaders, then times one query at a time and prints p50 / p99 / max.
//! Pass sizes to run only some: `cargo bench --bench query -- 10000`.
//! Budget (SPEC section 10): p99 < 1 ms at 10k items, < 10 ms at 100k.

mod corpus;

use std::time::{Duration, Instant};

use corpus::{sentence, vocabulary, write_corpus, Rng, ROLES};

use memd::config::Config;
use memd::engine::Engine;
use memd::protocol::Query;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx]
}

fn bench(items: usize) {
    let vocab = vocabulary();
    let mut rng = Rng(items as u64);
    let dir = tempfile::tempdir().unwrap();
    write_corpus(dir.path(), items, &mut rng, &vocab);
    let started = Instant::now();
    let mut engine = Engine::new(&Config::default());
    engine.load_roots(&[dir.path().to_path_buf()]);
    let load = started.elapsed();
    let loaded: usize = engine.counts().items.values().sum();

    let queries: Vec<Query> = (0..200)
        .map(|_| Query {
            task: {
                let words = 5 + rng.below(8);
                sentence(&mut rng, &vocab, words)
            },
            agent: Some(ROLES[rng.below(ROLES.len())].to_string()),
            product: Some(format!("p{}", rng.below(5))),
            repo: Some(format!("repo{}", rng.below(10))),
            tags: vec![vocab[rng.zipf(50)].clone(), vocab[rng.zipf(50)].clone()],
            now: Some("2026-11-22T12:00:00Z".into()),
            ..Query::default()
        })
        .collect();
    let rounds = if items >= 100_000 { 3 } else { 15 };
    for q in queries.iter().take(20) {
        engine.query(q).unwrap();
    }
    let mut times = Vec::with_capacity(queries.len() * rounds);
    let mut chars = 0usize;
    for _ in 0..rounds {
        for q in &queries {
            let t = Instant::now();
            let answer = engine.query(q).unwrap();
            times.push(t.elapsed());
            chars += answer.block.len();
        }
    }
    times.sort();
    println!(
        "{items:>7} items ({loaded} loaded in {:.2?}): {} queries, p50 {:.3?}, p99 {:.3?}, max {:.3?}, mean block {} bytes",
        load,
        times.len(),
        percentile(&times, 0.50),
        percentile(&times, 0.99),
        times.last().unwrap(),
        chars / times.len(),
    );
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![1_000, 10_000, 100_000]
    } else {
        sizes
    };
    for items in sizes {
        bench(items);
    }
}
