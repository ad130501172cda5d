//! Does an item reach the prompt when the prompt is about it, and only
//! then? A labelled set of our own (`benches/relevance/`: about 80 items
//! in memd's formats, about 70 prompts written as agents' prompts, each
//! judged against every item) is run two ways:
//!
//! - ranking, in process: `Engine::search` (what `memctl search` answers)
//!   with the semantic tier off (lexical only) and on (fused), and the
//!   cosine alone for reference: recall@5, recall@10 and MRR, overall and
//!   per case kind (direct, paraphrase, morphology, unicode, pronoun);
//! - the injected block, end to end: the real `memd serve` with
//!   `[semantic] enabled = false` and `true`, each prompt sent through the
//!   real `memctl hook claude UserPromptSubmit` in a fresh session: the
//!   precision and recall of the items it injects, and how many items are
//!   injected on prompts nothing is about.
//!
//! `cargo bench --bench relevance`; `-- sweep` also prints recall and MRR
//! for a grid of fusion weights and cosine floors (how the constants in
//! `src/semantic/fuse.rs` were chosen); `-- cases` prints each case's
//! ranking.

#[path = "../support/mod.rs"]
mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use memd::config::Config;
use memd::engine::{Engine, GLOBAL};
use memd::semantic::{Fusion, Model};
use serde::Deserialize;
use serde_json::json;
use support::{hook_context, memctl_path, memd_serve};

#[derive(Debug, Deserialize)]
struct Case {
    prompt: String,
    relevant: Vec<String>,
    kind: String,
}

fn set_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/relevance")
}

fn cases() -> Vec<Case> {
    let text = std::fs::read_to_string(set_dir().join("cases.yaml")).expect("cases.yaml");
    serde_saphyr::from_str(&text).expect("cases.yaml parses")
}

/// Recall and reciprocal rank, summed over cases.
#[derive(Default, Clone, Copy)]
struct Ranking {
    cases: usize,
    recall5: f64,
    recall10: f64,
    rr: f64,
}

impl Ranking {
    fn add(&mut self, ranked: &[String], relevant: &[String]) {
        let within = |k: usize| {
            relevant
                .iter()
                .filter(|r| ranked.iter().take(k).any(|id| id == *r))
                .count() as f64
                / relevant.len() as f64
        };
        self.cases += 1;
        self.recall5 += within(5);
        self.recall10 += within(10);
        self.rr += ranked
            .iter()
            .position(|id| relevant.contains(id))
            .map_or(0.0, |p| 1.0 / (p + 1) as f64);
    }

    fn line(&self) -> String {
        let n = self.cases.max(1) as f64;
        format!(
            "R@5 {:.3}  R@10 {:.3}  MRR {:.3}  ({} cases)",
            self.recall5 / n,
            self.recall10 / n,
            self.rr / n,
            self.cases
        )
    }
}

/// The ranking figures of `engine` over the cases that have relevant
/// items: overall and per kind.
fn rank(engine: &Engine, cases: &[Case], show: bool) -> (Ranking, BTreeMap<String, Ranking>) {
    let mut all = Ranking::default();
    let mut by_kind: BTreeMap<String, Ranking> = BTreeMap::new();
    for case in cases.iter().filter(|c| !c.relevant.is_empty()) {
        let ranked: Vec<String> = engine
            .search(&case.prompt, 10, GLOBAL)
            .into_iter()
            .map(|h| h.id)
            .collect();
        if show {
            println!(
                "  [{}] {}\n      want {:?}\n      got  {:?}",
                case.kind, case.prompt, case.relevant, ranked
            );
        }
        all.add(&ranked, &case.relevant);
        by_kind
            .entry(case.kind.clone())
            .or_default()
            .add(&ranked, &case.relevant);
    }
    (all, by_kind)
}

fn print_ranking(name: &str, (all, by_kind): &(Ranking, BTreeMap<String, Ranking>)) {
    println!("{name:<22} {}", all.line());
    for (kind, r) in by_kind {
        println!("  {kind:<20} {}", r.line());
    }
}

fn engine_with(model: Option<Arc<Model>>) -> Engine {
    let mut engine = Engine::new(&Config::default());
    engine.set_model(model);
    engine.load_roots(&[set_dir().join("knowledge")]);
    engine
}

/// The injected block's figures, summed over cases.
#[derive(Default)]
struct Block {
    shown: usize,
    relevant_shown: usize,
    relevant: usize,
    /// Items injected on prompts nothing is about, and those prompts.
    on_none: usize,
    none_cases: usize,
    by_kind: BTreeMap<String, (usize, usize, usize)>,
}

/// The known ids that appear in `block` as whole ids.
fn ids_in(block: &str, ids: &[String]) -> Vec<String> {
    let boundary =
        |c: Option<char>| c.is_none_or(|c| !(c.is_alphanumeric() || c == '-' || c == '_'));
    ids.iter()
        .filter(|id| {
            block.match_indices(id.as_str()).any(|(at, _)| {
                boundary(block[..at].chars().next_back())
                    && boundary(block[at + id.len()..].chars().next())
            })
        })
        .cloned()
        .collect()
}

/// Every case through the real hook and daemon, the tier on or off.
fn block(memctl: &Path, semantic: bool, cases: &[Case], ids: &[String], show: bool) -> Block {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    std::fs::create_dir(&run).unwrap();
    std::fs::set_permissions(&run, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let socket = run.join("memd.sock");
    let config = dir.path().join("memd.toml");
    std::fs::write(
        &config,
        format!("roots = []\n[daemon]\nlog = \"warn\"\n[semantic]\nenabled = {semantic}\n"),
    )
    .unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let mut daemon = memd_serve(
        &config,
        &dir.path().join("data"),
        &socket,
        &set_dir().join("knowledge"),
    )
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    let memctl_cmd = |args: &[&str]| {
        let mut command = Command::new(memctl);
        command
            .args(args)
            .env("MEMD_SOCKET", &socket)
            .env("XDG_STATE_HOME", dir.path().join("state"));
        command
    };
    let started = Instant::now();
    while !memctl_cmd(&["ping"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap()
        .success()
    {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "memd did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut out = Block::default();
    for (n, case) in cases.iter().enumerate() {
        let input = json!({
            "session_id": format!("relevance-{n}"),
            "transcript_path": dir.path().join(format!("{n}.jsonl")).display().to_string(),
            "cwd": work.display().to_string(),
            "hook_event_name": "UserPromptSubmit",
            "prompt": case.prompt,
        });
        let context = hook_context(
            &mut memctl_cmd(&["hook", "claude", "UserPromptSubmit"]),
            &input,
        );
        let shown = ids_in(&context, ids);
        let hits = shown.iter().filter(|id| case.relevant.contains(id)).count();
        if show {
            println!(
                "  [{}] {}\n      want {:?}\n      shown {:?}",
                case.kind, case.prompt, case.relevant, shown
            );
        }
        if case.relevant.is_empty() {
            out.none_cases += 1;
            out.on_none += shown.len();
        }
        out.shown += shown.len();
        out.relevant_shown += hits;
        out.relevant += case.relevant.len();
        let k = out.by_kind.entry(case.kind.clone()).or_default();
        k.0 += shown.len();
        k.1 += hits;
        k.2 += case.relevant.len();
    }
    let _ = daemon.kill();
    let _ = daemon.wait();
    out
}

fn print_block(name: &str, b: &Block) {
    let ratio = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    println!(
        "{name:<22} precision {:.3}  recall {:.3}  shown {}  ({} relevant of {}); {} items on {} prompts about nothing",
        ratio(b.relevant_shown, b.shown),
        ratio(b.relevant_shown, b.relevant),
        b.shown,
        b.relevant_shown,
        b.relevant,
        b.on_none,
        b.none_cases
    );
    for (kind, (shown, hits, relevant)) in &b.by_kind {
        println!(
            "  {kind:<20} precision {:.3}  recall {:.3}  shown {shown}",
            ratio(*hits, *shown),
            ratio(*hits, *relevant)
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let show = args.iter().any(|a| a == "cases");
    let cases = cases();
    // `MEMD_BENCH_MODEL=DIR`: another model2vec model, for the ranking.
    let model = Arc::new(match std::env::var_os("MEMD_BENCH_MODEL") {
        Some(dir) => Model::load(Path::new(&dir)).expect("the model loads"),
        None => Model::built_in().expect("the built-in model loads"),
    });
    println!(
        "labelled set: {} cases ({} about nothing); model {} ({} dims)",
        cases.len(),
        cases.iter().filter(|c| c.relevant.is_empty()).count(),
        model.name(),
        model.dims()
    );

    println!("\n# Ranking (memctl search, top 10)");
    let lexical = engine_with(None);
    print_ranking("lexical", &rank(&lexical, &cases, show));
    let mut fused = engine_with(Some(model.clone()));
    print_ranking("fused", &rank(&fused, &cases, show));
    let default = Fusion::DEFAULT;
    fused.semantic_mut().unwrap().set_fusion(Fusion {
        lexical: 0.0,
        semantic: 1.0,
        floor: 0.0,
    });
    print_ranking("cosine alone", &rank(&fused, &cases, false));
    if args.iter().any(|a| a == "sweep") {
        // The cosines of relevant and other (prompt, item) pairs.
        let (mut rel, mut other) = (Vec::new(), Vec::new());
        for case in &cases {
            for hit in fused.search(&case.prompt, 1000, GLOBAL) {
                if case.relevant.contains(&hit.id) {
                    rel.push(hit.similarity);
                } else {
                    other.push(hit.similarity);
                }
            }
        }
        for (name, v) in [("relevant", &mut rel), ("other", &mut other)] {
            v.sort_by(f64::total_cmp);
            let at = |q: f64| v[((v.len() - 1) as f64 * q) as usize];
            println!(
                "cosine of {name} pairs: p10 {:.2} p50 {:.2} p90 {:.2} p99 {:.2}",
                at(0.1),
                at(0.5),
                at(0.9),
                at(0.99)
            );
        }
        println!("\n# Fusion grid: lexical 1.0 + W x cosine above FLOOR");
        for floor in [0.3f32, 0.4, 0.5, 0.6, 0.7] {
            for w in [0.1f32, 0.2, 0.3, 0.5, 0.8] {
                fused.semantic_mut().unwrap().set_fusion(Fusion {
                    lexical: 1.0,
                    semantic: w,
                    floor,
                });
                let (all, _) = rank(&fused, &cases, false);
                println!("floor {floor:.1} W {w:.1}: {}", all.line());
            }
        }
    }
    fused.semantic_mut().unwrap().set_fusion(default);

    println!("\n# The injected block (memctl hook claude UserPromptSubmit, real daemon)");
    let memctl = memctl_path();
    let ids = all_ids(&lexical);
    print_block("semantic off", &block(&memctl, false, &cases, &ids, show));
    print_block("semantic on", &block(&memctl, true, &cases, &ids, show));
}

/// Every item id of the set.
fn all_ids(engine: &Engine) -> Vec<String> {
    let ids: BTreeSet<String> = engine
        .files()
        .values()
        .flat_map(|f| f.items.iter().map(|i| i.id.clone()))
        .collect();
    ids.into_iter().collect()
}
