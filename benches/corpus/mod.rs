//! A generated mixed corpus of knowledge files, shared by the benchmarks.

#![allow(dead_code)]

use std::fmt::Write as _;
use std::path::Path;

pub mod team;

/// SplitMix64: a small, well-known generator, so the corpus is the same on
/// every run.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Skewed towards low indices, like word frequencies.
    pub fn zipf(&mut self, n: usize) -> usize {
        let a = self.below(n);
        let b = self.below(n);
        a.min(b).min(self.below(n))
    }
}

const DOMAIN: &[&str] = &[
    "webhook",
    "idempotency",
    "retry",
    "queue",
    "database",
    "migration",
    "schema",
    "index",
    "cache",
    "socket",
    "timeout",
    "auth",
    "token",
    "session",
    "payment",
    "refund",
    "ledger",
    "export",
    "import",
    "module",
    "build",
    "test",
    "flaky",
    "parallel",
    "deploy",
    "docker",
    "config",
    "logging",
    "metrics",
    "tracing",
    "error",
    "validation",
    "route",
    "handler",
    "service",
    "plugin",
    "react",
    "component",
    "render",
    "state",
    "css",
    "layout",
    "api",
    "pagination",
    "cursor",
    "transaction",
    "lock",
    "deadlock",
    "memory",
    "leak",
];
pub const ROLES: &[&str] = &[
    "backend-engineer",
    "qa-engineer",
    "frontend-engineer",
    "devops-engineer",
];
const CATEGORIES: &[&str] = &[
    "api",
    "database",
    "testing",
    "frontend",
    "infrastructure",
    "payments",
    "webhooks",
];

/// A vocabulary of domain words plus synthetic ones.
pub fn vocabulary() -> Vec<String> {
    let mut words: Vec<String> = DOMAIN.iter().map(|w| w.to_string()).collect();
    let syllables = [
        "ka", "lo", "mi", "ter", "von", "rad", "sel", "qu", "pex", "dor", "fin", "gal",
    ];
    for i in 0..3000 {
        let mut w = String::new();
        let mut n = i;
        for _ in 0..3 {
            w.push_str(syllables[n % syllables.len()]);
            n /= syllables.len();
        }
        words.push(format!("{w}{}", i % 7));
    }
    words
}

pub fn sentence(rng: &mut Rng, vocab: &[String], words: usize) -> String {
    (0..words)
        .map(|_| vocab[rng.zipf(vocab.len())].as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Writes `items` knowledge items across files under `dir`.
pub fn write_corpus(dir: &Path, items: usize, rng: &mut Rng, vocab: &[String]) {
    const PER_FILE: usize = 500;
    let mut written = 0;
    let mut file_no = 0;
    while written < items {
        let n = PER_FILE.min(items - written);
        let kind = file_no % 20;
        let mut text = String::new();
        let id = |i: usize| format!("K{file_no}-{i}");
        match kind {
            0..=4 => {
                text.push_str("patterns:\n");
                for i in 0..n {
                    let _ = write!(
                        text,
                        "  - id: {}\n    name: {}\n    problem: {}\n    solution: {}\n    when_to_use: {}\n    category: {}\n    roles: [{}]\n    learned_from: {{ product: p{}, date: 2026-{:02}-{:02} }}\n    stack: [{}]\n    confidence: {}\n    times_applied: {}\n",
                        id(i),
                        sentence(rng, vocab, 4),
                        sentence(rng, vocab, 14),
                        sentence(rng, vocab, 16),
                        sentence(rng, vocab, 6),
                        CATEGORIES[rng.below(CATEGORIES.len())],
                        ROLES[rng.below(ROLES.len())],
                        rng.below(5),
                        1 + rng.below(11),
                        1 + rng.below(28),
                        vocab[rng.zipf(50)],
                        ["high", "medium", "low"][rng.below(3)],
                        rng.below(6),
                    );
                }
            }
            5 | 6 => {
                text.push_str("anti_patterns:\n");
                for i in 0..n {
                    let _ = write!(
                        text,
                        "  - id: {}\n    name: {}\n    problem: {}\n    instead: {}\n    roles: [{}]\n",
                        id(i),
                        sentence(rng, vocab, 4),
                        sentence(rng, vocab, 12),
                        sentence(rng, vocab, 8),
                        ROLES[rng.below(ROLES.len())],
                    );
                }
            }
            7 | 8 => {
                text.push_str("gotchas:\n");
                for i in 0..n {
                    let _ = write!(
                        text,
                        "  - id: {}\n    title: {}\n    fix: {}\n    category: {}\n",
                        id(i),
                        sentence(rng, vocab, 5),
                        sentence(rng, vocab, 10),
                        CATEGORIES[rng.below(CATEGORIES.len())],
                    );
                }
            }
            9..=11 => {
                text.push_str("lessons:\n");
                for i in 0..n {
                    let pre = match rng.below(4) {
                        0 => "{ os: [linux] }".to_string(),
                        1 => format!("{{ repos: [repo{}] }}", rng.below(10)),
                        _ => format!("{{ tags: [{}] }}", vocab[rng.zipf(50)]),
                    };
                    let _ = write!(
                        text,
                        "  - id: {}\n    text: {}\n    prerequisites: {pre}\n    pinned: {}\n",
                        id(i),
                        sentence(rng, vocab, 20),
                        rng.below(100) == 0,
                    );
                }
            }
            12..=14 => {
                text.push_str("learnings:\n");
                for i in 0..n {
                    let _ = write!(
                        text,
                        "  - learning_id: {}\n    learning_type: bugfix\n    title: {}\n    description: {}\n    keywords: [{}]\n    context: {}\n    error_type: {}\n",
                        id(i),
                        sentence(rng, vocab, 5),
                        sentence(rng, vocab, 15),
                        sentence(rng, vocab, 4).replace(' ', ", "),
                        sentence(rng, vocab, 3),
                        vocab[rng.zipf(vocab.len())],
                    );
                }
            }
            15..=17 => {
                for i in 0..n {
                    let _ = writeln!(
                        text,
                        "{{\"id\":\"{}\",\"type\":\"decision\",\"content\":\"{}\",\"agent_type\":\"{}\",\"created_at\":\"2026-11-{:02}T10:00:00Z\"}}",
                        id(i),
                        sentence(rng, vocab, 12),
                        ROLES[rng.below(ROLES.len())],
                        1 + rng.below(21),
                    );
                }
                std::fs::write(dir.join(format!("f{file_no}.jsonl")), text).unwrap();
                written += n;
                file_no += 1;
                continue;
            }
            18 => {
                text.push_str("exemplars:\n");
                for i in 0..n {
                    let _ = write!(
                        text,
                        "  - id: {}\n    kind: tweet\n    content: {}\n    performance_score: {}\n    posted_at: 2026-11-{:02}\n",
                        id(i),
                        sentence(rng, vocab, 20),
                        rng.below(500),
                        1 + rng.below(21),
                    );
                }
            }
            _ => {
                text.push_str("seeds:\n");
                for i in 0..n {
                    let _ = write!(
                        text,
                        "  - id: {}\n    hook: {}\n",
                        id(i),
                        sentence(rng, vocab, 8)
                    );
                }
            }
        }
        std::fs::write(dir.join(format!("f{file_no}.yaml")), text).unwrap();
        written += n;
        file_no += 1;
    }
}

/// Plays `sessions` sessions of a prompt each (drawn from `prompts`: the
/// same work comes back) through the engine and
/// learns from them as the daemon does: the context's session clock,
/// the match counts of the lessons shown, a verdict on each, and the
/// lessons held back aged. Returns the tag
/// scores and pins there are then.
pub fn learn(
    engine: &memd::engine::Engine,
    learned: &mut memd::learning::Learned,
    rng: &mut Rng,
    prompts: &[memd::protocol::Query],
    sessions: usize,
) -> (usize, usize) {
    let none = std::collections::HashSet::new();
    for _ in 0..sessions {
        let q = &prompts[rng.below(prompts.len())];
        let answered = engine.answer(learned, q, &none).unwrap();
        let lessons: Vec<String> = answered
            .answer
            .items
            .iter()
            .filter(|i| i.kind == memd::protocol::Kind::Lesson)
            .map(|i| i.id.clone())
            .collect();
        let owns: Vec<Vec<String>> = lessons.iter().map(|l| engine.own_tags(l)).collect();
        let held: Vec<Vec<String>> = answered
            .held_back
            .iter()
            .map(|l| engine.own_tags(l))
            .collect();
        learned.observe_session(&q.tags);
        for (lesson, own) in answered.held_back.iter().zip(&held) {
            learned.hold_back(lesson, own, &q.tags);
        }
        for (lesson, own) in lessons.iter().zip(&owns) {
            learned.shown(lesson, &q.tags);
            // A third of the lessons help nine times in ten, the others
            // three in ten: some are pinned, some filtered.
            let helps = if lesson.bytes().map(usize::from).sum::<usize>() % 3 == 0 {
                9
            } else {
                3
            };
            let raw = if rng.below(10) < helps { 1.0 } else { -1.0 };
            let shown = memd::learning::Match::among(&answered.weak, lesson);
            learned.judge(lesson, own, &q.tags, shown, raw, 1.0);
        }
    }
    // memd's coverage rule keeps topic lessons from pinning themselves;
    // for the worst case, pin every lesson the seed's rule alone would
    // (average above 0.6 over 5 or more sessions), scoped to its context.
    for q in prompts {
        let ids: Vec<String> = learned
            .tag_relevance()
            .keys()
            .map(|id| id.to_string())
            .collect();
        for id in ids {
            let e = learned.evidence(&id, &q.tags);
            if e.avg > 0.6 && e.evals >= 5.0 && !learned.is_pinned(&id, &q.tags) {
                learned.pins_entry(&id).push(memd::learning::Pin {
                    manual: false,
                    tags: q.tags.clone(),
                });
            }
        }
    }
    let scores = learned.tag_relevance().values().map(|s| s.len()).sum();
    let pins = learned.pins().values().map(|p| p.len()).sum();
    (scores, pins)
}

/// A query like a session's prompt, from one of ten repositories, each
/// with its two workspace tags (as a hook derives them).
pub fn query(rng: &mut Rng, vocab: &[String]) -> memd::protocol::Query {
    let repo = rng.below(10);
    memd::protocol::Query {
        task: {
            let words = 5 + rng.below(8);
            sentence(rng, vocab, words)
        },
        agent: Some(ROLES[rng.below(ROLES.len())].to_string()),
        product: Some(format!("p{}", rng.below(5))),
        repo: Some(format!("repo{repo}")),
        tags: vec![vocab[3 * repo].clone(), vocab[(7 * repo + 1) % 50].clone()],
        now: Some("2026-11-22T12:00:00Z".into()),
        ..memd::protocol::Query::default()
    }
}
