//! Query latency through the engine on generated mixed corpora.
//!
//! `cargo bench --bench query` writes corpora of 1k, 10k and 100k items as
//! real knowledge files (every kind, 500 items a file), loads them with the
//! real loaders, then times one query at a time and prints p50 / p99 / max.
//! Pass sizes to run only some: `cargo bench --bench query -- 10000`;
//! `rounds=N` times each query N times (15, 3 at 100k).
//! The semantic tier is on, with the built-in model, as in the daemon by
//! default; `-- lexical` turns it off. `-- cold` writes 64 MiB before each
//! timed query, so the query finds the caches as a prompt after a pause
//! finds the daemon's (the daemon's own timing, `memctl status`, is read
//! that way); `-- idle` sleeps 2 ms before each instead, as the daemon
//! waits between prompts. `-- shown` leaves out of each prompt's answer
//! what another prompt showed, as the daemon leaves out what a session has
//! already been shown.
//! Budget (SPEC section 10): p99 < 1 ms at 10k items, < 10 ms at 100k.
//!
//! `-- project` loads the knowledge as the queries' project's own rather
//! than global.
//!
//! `-- team` times a second corpus instead (`corpus::team`, issue 32):
//! lessons only, written by one product team with a narrow vocabulary
//! shared across them, tags on every lesson, five pinned; prompts as the
//! prompt hook sends them (the repository's tags, a session, only what the
//! task is about).
//!
//! Each size is timed twice: with nothing learned, then after
//! [`LEARNED_SESSIONS`] sessions played through the engine (each query's
//! lessons shown, counted for the match-count pin and judged relevant or
//! not at random, the lessons held back aged), so tag scores, evidence
//! elsewhere, filters, probation and scoped pins are all on the query path.
//! The prompts are then timed in a repository without a team and in one
//! whose team shares its verdicts (50 members x 5,000 events, issue 35).

mod corpus;

use std::collections::HashSet;
use std::time::{Duration, Instant};

use corpus::{learn, query, vocabulary, write_corpus, Rng};

use memd::config::Config;
use memd::engine::Engine;
use memd::learning::Learned;
use memd::protocol::Query;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx]
}

/// Sessions played to build learned state before the second timing.
const LEARNED_SESSIONS: usize = 3_000;

/// An engine with the corpus under `dir` loaded, the tier on or off, and
/// how long the load took.
fn load(dir: &std::path::Path, semantic: bool) -> (Engine, Duration) {
    let started = Instant::now();
    let mut engine = Engine::new(&Config::default());
    if semantic {
        let model = memd::semantic::Model::built_in().expect("the built-in model loads");
        engine.set_model(Some(std::sync::Arc::new(model)));
    }
    if std::env::args().any(|a| a == "project") {
        // The knowledge as a project's own, which a query in the project
        // sees unless a global item takes its id.
        let scope = engine.register_project(std::path::Path::new(corpus::team::REPO));
        for path in memd::knowledge::scan::knowledge_files(dir) {
            engine.apply_scoped(memd::knowledge::load_file(&path), scope);
        }
    } else {
        engine.load_roots(&[dir.to_path_buf()]);
    }
    (engine, started.elapsed())
}

/// Plays [`LEARNED_SESSIONS`] judged sessions, then times `queries` again.
fn learn_and_time(
    engine: &Engine,
    learned: &mut Learned,
    rng: &mut Rng,
    queries: &[Query],
    items: usize,
    what: &str,
) {
    let started = Instant::now();
    let (scores, pins) = learn(engine, learned, rng, queries, LEARNED_SESSIONS);
    time(
        engine,
        learned,
        queries,
        items,
        &format!(
            "{what}after {LEARNED_SESSIONS} judged sessions ({scores} tag scores, {pins} automatic pins, learned in {:.2?})",
            started.elapsed()
        ),
    );
}

fn bench(items: usize, semantic: bool) {
    let vocab = vocabulary();
    let mut rng = Rng(items as u64);
    let dir = tempfile::tempdir().unwrap();
    write_corpus(dir.path(), items, &mut rng, &vocab);
    let (mut engine, load) = load(dir.path(), semantic);
    let mut learned = Learned::default();
    let loaded: usize = engine.counts().items.values().sum();

    let queries: Vec<Query> = (0..200).map(|_| query(&mut rng, &vocab)).collect();
    if let Some(semantic) = engine.semantic() {
        let started = Instant::now();
        for q in &queries {
            std::hint::black_box(semantic.model().embed(&q.task));
        }
        println!(
            "  embedding a query: mean {:.1?} (tasks of {} bytes on average)",
            started.elapsed() / queries.len() as u32,
            queries.iter().map(|q| q.task.len()).sum::<usize>() / queries.len()
        );
    }
    time(
        &engine,
        &learned,
        &queries,
        items,
        &format!("({loaded} loaded in {load:.2?}), nothing learned"),
    );
    learn_and_time(&engine, &mut learned, &mut rng, &queries, items, "");
    // Prompts as the prompt hook asks (only what the task is about), each
    // kind's quota and then the decision to show (issue 31).
    let prompts: Vec<Query> = queries
        .iter()
        .map(|q| Query {
            task_match: true,
            ..q.clone()
        })
        .collect();
    time(
        &engine,
        &learned,
        &prompts,
        items,
        "prompts as the hook asks, quotas",
    );
    engine.set_decide(true);
    time(
        &engine,
        &learned,
        &prompts,
        items,
        "prompts as the hook asks, the decision to show",
    );
    engine.set_decide(false);
    // The same prompts from a repository whose team shares its verdicts
    // (issue 35): 50 members' verdicts on the lessons these queries show
    // and more, 2,000 items in all.
    let repo = std::path::Path::new("/bench/team-repo");
    engine.register_project(repo);
    let none = std::collections::HashSet::new();
    let mut judged: Vec<String> = queries
        .iter()
        .flat_map(|q| engine.answer(&learned, q, &none).unwrap().answer.items)
        .filter(|i| i.kind == memd::protocol::Kind::Lesson)
        .map(|i| i.id)
        .collect();
    judged.sort();
    judged.dedup();
    let shown = judged.len();
    judged.extend((judged.len()..2_000).map(|n| format!("team-only-{n}")));
    learned
        .teams
        .insert(repo.to_path_buf(), team_of(&judged, 50, 5_000, &mut rng));
    let in_repo_first: Vec<Query> = prompts
        .iter()
        .map(|q| Query {
            cwd: Some("/bench/other-repo".into()),
            ..q.clone()
        })
        .collect();
    engine.register_project(std::path::Path::new("/bench/other-repo"));
    time(
        &engine,
        &learned,
        &in_repo_first,
        items,
        "prompts as the hook asks, in a repository without a team",
    );
    let in_repo: Vec<Query> = prompts
        .iter()
        .map(|q| Query {
            cwd: Some(repo.display().to_string()),
            ..q.clone()
        })
        .collect();
    time(
        &engine,
        &learned,
        &in_repo,
        items,
        &format!("prompts as the hook asks, in a repository with a 50-member team's 250,000 verdicts on 2,000 items ({shown} of them lessons these queries show)"),
    );
    // Session start, as the hook asks: no task, experience and lessons,
    // pinned lessons first.
    let starts: Vec<Query> = queries
        .iter()
        .map(|q| Query {
            task: String::new(),
            kinds: vec![
                memd::protocol::Kind::Experience,
                memd::protocol::Kind::Lesson,
            ],
            ..q.clone()
        })
        .collect();
    time(
        &engine,
        &learned,
        &starts,
        items,
        "session starts, learned as above",
    );
    // A prompt after a pasted log or file: 64 KiB to 1 MiB of words (half
    // of them from the corpus's vocabulary, half unknown), the question at
    // the end.
    let long: Vec<Query> = queries
        .iter()
        .take(30)
        .enumerate()
        .map(|(i, q)| {
            let bytes = [64 * 1024, 256 * 1024, 1024 * 1024][i % 3];
            let mut task = String::with_capacity(bytes + q.task.len());
            let mut n = 0u64;
            while task.len() < bytes {
                if rng.below(2) == 0 {
                    task.push_str(&vocab[rng.below(vocab.len())]);
                } else {
                    n += 1;
                    task.push_str(&format!("tok{n}x{}", rng.below(1_000_000)));
                }
                task.push(' ');
            }
            task.push_str(&q.task);
            Query { task, ..q.clone() }
        })
        .collect();
    time(
        &engine,
        &learned,
        &long,
        items,
        "tasks after a pasted 64 KiB-1 MiB log",
    );
}

/// A team of `members`, each with `events` verdicts on items among `ids`,
/// as memd keeps it once their files are read.
fn team_of(
    ids: &[String],
    members: usize,
    events: u64,
    rng: &mut Rng,
) -> memd::learning::team::Team {
    use memd::learning::team::{Event, MemberFile, Team};
    let mut team = Team::new("bench", "m0", 0.5);
    for m in 0..members {
        let member = format!("m{m}");
        let mut text = String::new();
        for n in 0..events {
            let e = Event {
                event: format!("{}-{:016x}", 1_000 + n, n),
                member: member.clone(),
                item: ids[rng.below(ids.len())].clone(),
                repo: "bench".into(),
                tags: vec![],
                verdict: if rng.below(3) == 0 { 1.0 } else { -1.0 },
                weight: 1.0,
                time: 1_000,
            };
            text += &(serde_json::to_string(&e).unwrap() + "\n");
        }
        let mut file = MemberFile::new(&member);
        file.read(0, text.as_bytes(), "bench", 2_000);
        team.files.insert(format!("{member}.jsonl"), file);
    }
    team.refresh();
    team
}

/// Rounds given as `rounds=N` (fewer for a run under an instruction
/// counter such as `valgrind --tool=callgrind`).
fn rounds() -> Option<usize> {
    std::env::args().find_map(|a| a.strip_prefix("rounds=")?.parse().ok())
}

/// What `-- idle` waits before each timed query: as the daemon waits for
/// the next prompt. Measured (`-- team 10000 idle`): a query after this
/// sleep finds its caches as cold as after `-- cold`'s 64 MiB, and
/// spinning 300 µs after the sleep does not warm them, so it is the
/// caches, not the clock, that the wait costs.
const IDLE: Duration = Duration::from_millis(2);

/// Times each of `queries` one at a time, in rounds, and prints the figures.
fn time(engine: &Engine, learned: &Learned, queries: &[Query], items: usize, what: &str) {
    let rounds = rounds().unwrap_or(if items >= 100_000 { 3 } else { 15 });
    for q in queries.iter().take(20) {
        engine.query(learned, q).unwrap();
    }
    let mut times = Vec::with_capacity(queries.len() * rounds);
    // Each query's fastest round: what the code costs with the machine's
    // noise (other tenants, frequency) mostly taken out, for comparing two
    // builds run one after the other.
    let mut fastest = vec![Duration::MAX; queries.len()];
    let mut chars = 0usize;
    let mut cold = std::env::args()
        .any(|a| a == "cold")
        .then(|| vec![0u8; 64 << 20]);
    let idle = std::env::args().any(|a| a == "idle");
    // With `-- shown`, each prompt comes in a session that was already
    // shown what the next prompt shows: the items a session has seen are
    // left out, as the daemon leaves them out.
    let shown: Vec<HashSet<String>> = if std::env::args().any(|a| a == "shown") {
        (0..queries.len())
            .map(|i| {
                let before = &queries[(i + 1) % queries.len()];
                let answer = engine.query(learned, before).unwrap();
                answer.items.into_iter().map(|item| item.id).collect()
            })
            .collect()
    } else {
        vec![HashSet::new(); queries.len()]
    };
    for _ in 0..rounds {
        for ((q, best), shown) in queries.iter().zip(&mut fastest).zip(&shown) {
            if idle {
                std::thread::sleep(IDLE);
            }
            if let Some(buf) = cold.as_mut() {
                for (i, b) in buf.iter_mut().enumerate().step_by(64) {
                    *b = b.wrapping_add(i as u8);
                }
                std::hint::black_box(&buf);
            }
            let t = Instant::now();
            let answer = engine.query_excluding(learned, q, shown).unwrap();
            let took = t.elapsed();
            times.push(took);
            *best = (*best).min(took);
            chars += answer.block.len();
        }
    }
    times.sort();
    let mean_fastest = fastest.iter().sum::<Duration>() / fastest.len() as u32;
    // The prompts' own tail: each prompt's fastest round, so the runs'
    // noise is mostly out of it.
    fastest.sort();
    println!(
        "{items:>7} items {what}: {} queries, p50 {:.3?}, p99 {:.3?}, max {:.3?}, mean of each query's fastest {:.3?} (p99 {:.3?}), mean block {} bytes",
        times.len(),
        percentile(&times, 0.50),
        percentile(&times, 0.99),
        times.last().unwrap(),
        mean_fastest,
        percentile(&fastest, 0.99),
        chars / times.len(),
    );
}

/// The lesson-heavy team corpus at `lessons` lessons: nothing learned,
/// then after [`LEARNED_SESSIONS`] judged sessions, then session starts.
fn bench_team(lessons: usize, semantic: bool) {
    let mut rng = Rng(lessons as u64 ^ 0x7ea4);
    let dir = tempfile::tempdir().unwrap();
    corpus::team::write(dir.path(), lessons, &mut rng);
    let (engine, load) = load(dir.path(), semantic);
    let mut learned = Learned::default();
    let queries: Vec<Query> = (0..200)
        .map(|n| Query {
            task_match: true,
            ..corpus::team::query(&mut rng, n)
        })
        .collect();
    let what = format!("team lessons (loaded in {load:.2?}), nothing learned");
    time(&engine, &learned, &queries, lessons, &what);
    learn_and_time(
        &engine,
        &mut learned,
        &mut rng,
        &queries,
        lessons,
        "team lessons ",
    );
    let starts: Vec<Query> = queries
        .iter()
        .map(|q| Query {
            task: String::new(),
            task_match: false,
            kinds: vec![
                memd::protocol::Kind::Experience,
                memd::protocol::Kind::Lesson,
            ],
            ..q.clone()
        })
        .collect();
    time(
        &engine,
        &learned,
        &starts,
        lessons,
        "team session starts, learned as above",
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
    let semantic = !std::env::args().any(|a| a == "lexical");
    println!(
        "semantic tier: {}",
        if semantic {
            "on (built-in model)"
        } else {
            "off"
        }
    );
    let team = std::env::args().any(|a| a == "team");
    for items in sizes {
        if team {
            bench_team(items, semantic);
        } else {
            bench(items, semantic);
        }
    }
}
