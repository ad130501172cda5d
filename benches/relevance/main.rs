//! Does an item reach the prompt when the prompt is about it, and only
//! then? A labelled set of our own (`benches/relevance/`: about 80 items
//! in memd's formats, about 70 prompts written as agents' prompts, each
//! judged against every item) is run two ways:
//!
//! - ranking, in process: `Engine::search` (what `memctl search` answers)
//!   with the semantic tier off (lexical only) and on (fused), and the
//!   cosine alone for reference: recall@5, recall@10 and MRR, overall and
//!   per case kind (direct, paraphrase, morphology, unicode, pronoun), and
//!   `hit@2`, the share of cases with a relevant item among the first two:
//!   the highest hit rate a decision that shows at most two items of this
//!   order could reach;
//! - the injected block, end to end: the real `memd serve` with
//!   `[semantic] enabled = false` and `true`, each prompt sent through the
//!   real `memctl hook claude UserPromptSubmit` in a fresh session: the
//!   precision and recall of the items it injects, and how many items are
//!   injected on prompts nothing is about.
//!
//! Two labelled sets are measured, each reported on its own:
//!
//! - `ours`: the hand-written set above;
//! - `manpages`: 2,426 items made from the documented pitfalls, notes and
//!   examples of real manual pages (`tools/manpage_corpus.py` writes them
//!   from the machine's pages into a directory; their text is not
//!   committed) with the prompts and labels in
//!   `benches/relevance/manpages/cases.yaml`. It is measured when
//!   `MEMD_BENCH_MANPAGES` names that directory. Its cases are split by a
//!   hash of the prompt into a `fit` half, on which constants are chosen,
//!   and a `report` half, on which they are reported.
//!
//! The block is measured with each kind's own quota (`[query] decide =
//! false`, the default) and with the decision to show (`decide = true`,
//! `src/engine/relevance.rs`), whose model `-- fit` fits on the man-page
//! set's fit half and reports on both halves and on our set.
//!
//! The block's figures: precision (relevant items shown / items shown), hit
//! rate (targeted prompts with at least one relevant item shown), recall
//! of the labelled items, the share of prompts about nothing that get no
//! block, and items per prompt.
//!
//! `cargo bench --bench relevance`; `-- sweep` also prints recall and MRR
//! for a grid of fusion weights and cosine floors (how the constants in
//! `src/semantic/fuse.rs` were chosen); `-- cases` prints each case's
//! ranking; `-- rank` measures the ranking only; `-- pool FILE` writes, per case of the man-page set, the items
//! any variant ranks in its top 10 or shows that are not judged yet (the
//! pool to review).

#[path = "../support/mod.rs"]
mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use memd::config::Config;
use memd::engine::relevance::{self, Evidence, FEATURES};
use memd::engine::{Engine, GLOBAL};
use memd::knowledge::Body;
use memd::semantic::{Fusion, Model};
use serde::Deserialize;
use serde_json::json;
use support::{hook_context, memctl_path, memd_serve};

#[derive(Debug, Deserialize)]
struct Case {
    prompt: String,
    relevant: Vec<String>,
    kind: String,
    /// Items reviewed for this prompt and judged not relevant (the pool's
    /// bookkeeping).
    #[serde(default)]
    not_relevant: Vec<String>,
}

impl Case {
    /// `fit` or `report`, by a hash of the prompt: the same on every run.
    fn half(&self) -> &'static str {
        let hash = self.prompt.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
        if hash % 2 == 0 {
            "fit"
        } else {
            "report"
        }
    }
}

/// A labelled set: its knowledge and its cases.
struct Set {
    name: &'static str,
    knowledge: PathBuf,
    cases: Vec<Case>,
}

fn set_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/relevance")
}

fn read_cases(path: &Path) -> Vec<Case> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The sets to measure: ours always, the man pages' when their corpus is
/// there (and made from the pages the labels were made on).
fn sets() -> Vec<Set> {
    let mut sets = vec![Set {
        name: "ours",
        knowledge: set_dir().join("knowledge"),
        cases: read_cases(&set_dir().join("cases.yaml")),
    }];
    let Some(dir) = std::env::var_os("MEMD_BENCH_MANPAGES").map(PathBuf::from) else {
        println!("(the man-page set: `python3 tools/manpage_corpus.py DIR`, then MEMD_BENCH_MANPAGES=DIR)");
        return sets;
    };
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    let made_on = read(&set_dir().join("manpages/packages.tsv"));
    let here = read(&dir.join("PACKAGES.tsv"));
    if made_on != here {
        println!("warning: the man pages here are not the versions the labels were made on (benches/relevance/manpages/packages.tsv against {}/PACKAGES.tsv): figures may not compare", dir.display());
    }
    sets.push(Set {
        name: "manpages",
        knowledge: dir,
        cases: read_cases(&set_dir().join("manpages/cases.yaml")),
    });
    sets
}

/// Recall and reciprocal rank, summed over cases.
#[derive(Default, Clone, Copy)]
struct Ranking {
    cases: usize,
    recall1: f64,
    recall5: f64,
    recall10: f64,
    rr: f64,
    /// Cases with a relevant item among the first [`CAP`]: the most a
    /// decision that shows at most that many of this order can hit.
    within_cap: f64,
}

/// The decision's cap, for the ranking's ceiling on the hit rate.
const CAP: usize = memd::engine::relevance::MAX_SHOWN;

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
        self.recall1 += within(1);
        self.recall5 += within(5);
        self.recall10 += within(10);
        let first = ranked.iter().position(|id| relevant.contains(id));
        self.rr += first.map_or(0.0, |p| 1.0 / (p + 1) as f64);
        self.within_cap += f64::from(u8::from(first.is_some_and(|p| p < CAP)));
    }

    fn line(&self) -> String {
        let n = self.cases.max(1) as f64;
        format!(
            "R@1 {:.3}  R@5 {:.3}  R@10 {:.3}  MRR {:.3}  hit@{CAP} {:.3}  ({} cases)",
            self.recall1 / n,
            self.recall5 / n,
            self.recall10 / n,
            self.rr / n,
            self.within_cap / n,
            self.cases
        )
    }
}

/// The groups a case's figures count in: everything, its half (on a set
/// that is split) and its kind.
fn groups(case: &Case, split: bool) -> Vec<String> {
    let mut groups = vec!["all".to_string()];
    if split {
        groups.push(format!("half {}", case.half()));
    }
    groups.push(format!("kind {}", case.kind));
    groups
}

/// The ranking figures of `engine` over the cases that have relevant
/// items, by group.
fn rank(engine: &Engine, set: &Set, show: bool) -> BTreeMap<String, Ranking> {
    let mut by: BTreeMap<String, Ranking> = BTreeMap::new();
    for case in set.cases.iter().filter(|c| !c.relevant.is_empty()) {
        let ranked = top10(engine, case);
        if show {
            println!(
                "  [{}] {}\n      want {:?}\n      got  {:?}",
                case.kind, case.prompt, case.relevant, ranked
            );
        }
        for group in groups(case, set.name != "ours") {
            by.entry(group).or_default().add(&ranked, &case.relevant);
        }
    }
    by
}

/// What `memctl search` ranks first for a case's prompt.
fn top10(engine: &Engine, case: &Case) -> Vec<String> {
    engine
        .search(&case.prompt, 10, GLOBAL)
        .into_iter()
        .map(|h| h.id)
        .collect()
}

fn print_ranking(name: &str, by: &BTreeMap<String, Ranking>) {
    for (group, r) in by {
        let label = if group == "all" {
            name.to_string()
        } else {
            format!("  {group}")
        };
        println!("{label:<22} {}", r.line());
    }
}

fn engine_with(model: Option<Arc<Model>>, knowledge: &Path) -> Engine {
    let mut engine = Engine::new(&Config::default());
    engine.set_model(model);
    engine.load_roots(&[knowledge.to_path_buf()]);
    engine
}

/// The injected block's figures, summed over cases.
#[derive(Default, Clone)]
struct Block {
    /// Prompts with relevant items, and those shown at least one of them.
    targeted: usize,
    hit: usize,
    /// Items shown on targeted prompts, and the relevant ones among them.
    shown: usize,
    relevant_shown: usize,
    /// Labelled items of targeted prompts.
    relevant: usize,
    /// Prompts about nothing, those given no block, and the items they got.
    none_cases: usize,
    none_empty: usize,
    on_none: usize,
}

impl Block {
    fn add(&mut self, case: &Case, shown: &[String]) {
        if case.relevant.is_empty() {
            self.none_cases += 1;
            self.none_empty += usize::from(shown.is_empty());
            self.on_none += shown.len();
            return;
        }
        let hits = shown.iter().filter(|id| case.relevant.contains(id)).count();
        self.targeted += 1;
        self.hit += usize::from(hits > 0);
        self.shown += shown.len();
        self.relevant_shown += hits;
        self.relevant += case.relevant.len();
    }

    fn line(&self) -> String {
        let ratio = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        format!(
            "precision {:.3}  hit rate {:.3}  recall {:.3}  items/prompt {:.2}  | about nothing: {}/{} no block, {:.2} items/prompt",
            ratio(self.relevant_shown, self.shown),
            ratio(self.hit, self.targeted),
            ratio(self.relevant_shown, self.relevant),
            ratio(self.shown, self.targeted),
            self.none_empty,
            self.none_cases,
            ratio(self.on_none, self.none_cases),
        )
    }
}

/// How to tell from a block which items it holds: the id, for the kinds
/// whose lines carry it; a gotcha's line carries its title instead.
fn markers(engine: &Engine) -> Vec<(String, String)> {
    let one_line = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut markers: Vec<(String, String)> = engine
        .files()
        .values()
        .flat_map(|f| f.items.iter())
        .map(|item| {
            let marker = match &item.body {
                Body::Gotcha(g) => format!("- \"{}\" → ", one_line(&g.title)),
                _ => item.id.clone(),
            };
            (item.id.clone(), marker)
        })
        .collect();
    markers.sort();
    markers.dedup();
    markers
}

/// The items whose marker appears in `block` (an id as a whole word).
fn shown_in(block: &str, markers: &[(String, String)]) -> Vec<String> {
    let boundary = |c: Option<char>| {
        c.is_none_or(|c| !(c.is_alphanumeric() || c == '-' || c == '_' || c == '.'))
    };
    markers
        .iter()
        .filter(|(id, marker)| {
            if marker != id {
                return block.contains(marker.as_str());
            }
            block.match_indices(marker.as_str()).any(|(at, _)| {
                boundary(block[..at].chars().next_back())
                    && boundary(block[at + marker.len()..].chars().next())
            })
        })
        .map(|(id, _)| id.clone())
        .collect()
}

/// `path` as a TOML basic string.
fn toml_string(path: &Path) -> String {
    serde_json::Value::from(path.display().to_string()).to_string()
}

/// Every case of `set` through the real hook and daemon, the tier on or
/// off: the items each block showed, in case order.
fn blocks(
    memctl: &Path,
    (semantic, decide): (bool, bool),
    set: &Set,
    markers: &[(String, String)],
) -> Vec<Vec<String>> {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    std::fs::create_dir(&run).unwrap();
    std::fs::set_permissions(&run, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let socket = run.join("memd.sock");
    let config = dir.path().join("memd.toml");
    // `MEMD_BENCH_MODEL=DIR`: the daemon embeds with that model too.
    let model = std::env::var_os("MEMD_BENCH_MODEL")
        .map(|dir| format!("model = {}\n", toml_string(Path::new(&dir))))
        .unwrap_or_default();
    std::fs::write(
        &config,
        format!("roots = []\n[daemon]\nlog = \"warn\"\n[semantic]\nenabled = {semantic}\n{model}[query]\ndecide = {decide}\n"),
    )
    .unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let mut daemon = memd_serve(&config, &dir.path().join("data"), &socket, &set.knowledge)
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
    let mut shown = Vec::new();
    for (n, case) in set.cases.iter().enumerate() {
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
        shown.push(shown_in(&context, markers));
    }
    let _ = daemon.kill();
    let _ = daemon.wait();
    shown
}

/// The block figures of `shown` (per case), by group.
fn block_figures(set: &Set, shown: &[Vec<String>], show: bool) -> BTreeMap<String, Block> {
    let mut by: BTreeMap<String, Block> = BTreeMap::new();
    for (case, shown) in set.cases.iter().zip(shown) {
        if show {
            println!(
                "  [{}] {}\n      want {:?}\n      shown {:?}",
                case.kind, case.prompt, case.relevant, shown
            );
        }
        for group in groups(case, set.name != "ours") {
            by.entry(group).or_default().add(case, shown);
        }
    }
    by
}

fn print_block(name: &str, by: &BTreeMap<String, Block>) {
    for (group, b) in by {
        let label = if group == "all" {
            name.to_string()
        } else {
            format!("  {group}")
        };
        println!("{label:<22} {}", b.line());
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let show = args.iter().any(|a| a == "cases");
    let pool = args
        .iter()
        .position(|a| a == "pool")
        .and_then(|i| args.get(i + 1))
        .map(PathBuf::from);
    // `MEMD_BENCH_MODEL=DIR`: another model2vec model, for the ranking
    // and the daemons.
    let model = Arc::new(match std::env::var_os("MEMD_BENCH_MODEL") {
        Some(dir) => Model::load(Path::new(&dir)).expect("the model loads"),
        None => Model::built_in().expect("the built-in model loads"),
    });
    let sets = sets();
    if args.iter().any(|a| a == "fit") {
        fit(&sets, &model);
        return;
    }
    let memctl = memctl_path();
    for set in sets {
        println!(
            "\n## Set `{}`: {} cases ({} about nothing); model {} ({} dims)",
            set.name,
            set.cases.len(),
            set.cases.iter().filter(|c| c.relevant.is_empty()).count(),
            model.name(),
            model.dims()
        );
        println!("\n# Ranking (memctl search, top 10)");
        let lexical = engine_with(None, &set.knowledge);
        println!("{} items", all_ids(&lexical).len());
        print_ranking("lexical", &rank(&lexical, &set, show));
        let mut fused = engine_with(Some(model.clone()), &set.knowledge);
        print_ranking("fused", &rank(&fused, &set, show));
        if args.iter().any(|a| a == "sweep") {
            sweep(&mut fused, &set);
        }
        if args.iter().any(|a| a == "rank") {
            continue;
        }

        println!("\n# The injected block (memctl hook claude UserPromptSubmit, real daemon)");
        let markers = markers(&lexical);
        let off = blocks(&memctl, (false, false), &set, &markers);
        print_block("semantic off", &block_figures(&set, &off, show));
        let on = blocks(&memctl, (true, false), &set, &markers);
        print_block("semantic on", &block_figures(&set, &on, show));
        for (name, semantic) in [("decision, tier off", false), ("decision, tier on", true)] {
            let decided = blocks(&memctl, (semantic, true), &set, &markers);
            print_block(name, &block_figures(&set, &decided, show));
        }

        if let (Some(path), "manpages") = (&pool, set.name) {
            let mut pools = Vec::new();
            for (n, case) in set.cases.iter().enumerate() {
                let mut ids: BTreeSet<String> = BTreeSet::new();
                ids.extend(top10(&lexical, case));
                ids.extend(top10(&fused, case));
                ids.extend(off[n].iter().cloned());
                ids.extend(on[n].iter().cloned());
                ids.retain(|id| !case.relevant.contains(id) && !case.not_relevant.contains(id));
                pools.push(json!({"case": n, "prompt": case.prompt, "unjudged": ids}));
            }
            std::fs::write(path, serde_json::to_string_pretty(&pools).unwrap()).unwrap();
            println!("pool written to {}", path.display());
        }
    }
}

/// One candidate's features and whether it is relevant, for the fit.
struct Row {
    case: usize,
    features: [f64; FEATURES],
    relevant: bool,
}

/// The decision's candidates for every case (the top 10 by similarity).
fn rows(engine: &Engine, set: &Set) -> Vec<Row> {
    let mut rows = Vec::new();
    for (n, case) in set.cases.iter().enumerate() {
        for c in engine.candidates(&case.prompt, relevance::CANDIDATES, GLOBAL) {
            rows.push(Row {
                case: n,
                features: c.evidence.features(),
                relevant: case.relevant.contains(&c.id),
            });
        }
    }
    rows
}

/// Logistic regression by gradient descent (a small L2 penalty keeps the
/// weights finite on separable data).
fn fit_model(rows: &[&Row]) -> relevance::Model {
    let mut w = [0f64; FEATURES];
    let mut b = 0f64;
    let n = rows.len().max(1) as f64;
    for _ in 0..20_000 {
        let mut gw = [0f64; FEATURES];
        let mut gb = 0f64;
        for row in rows {
            let z = b + w.iter().zip(row.features).map(|(w, x)| w * x).sum::<f64>();
            let p = 1.0 / (1.0 + (-z).exp());
            let err = p - f64::from(u8::from(row.relevant));
            gb += err;
            for (g, x) in gw.iter_mut().zip(row.features) {
                *g += err * x;
            }
        }
        b -= 1.0 * gb / n;
        for (wi, g) in w.iter_mut().zip(gw) {
            *wi -= 1.0 * (g / n + 1e-3 * *wi);
        }
    }
    relevance::Model {
        intercept: b,
        weights: w,
    }
}

/// The block the decision would give each case of `cases` (ids of the
/// rows shown), with `model` and `threshold`, at most `MAX_SHOWN`.
fn decide(
    set: &Set,
    rows: &[Row],
    model: &relevance::Model,
    threshold: f64,
    half: Option<&str>,
) -> Block {
    let mut block = Block::default();
    for (n, case) in set.cases.iter().enumerate() {
        if half.is_some_and(|h| case.half() != h) {
            continue;
        }
        let mut shown: Vec<(f64, usize)> = rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r.case == n)
            .map(|(i, r)| {
                let e = relevance::Evidence {
                    lexical: r.features[0],
                    covered: r.features[1],
                    cosine: r.features[2],
                    named: r.features[3],
                    lead: r.features[4],
                };
                (model.probability(&e), i)
            })
            .filter(|(p, _)| *p >= threshold)
            .collect();
        shown.sort_by(|a, b| b.0.total_cmp(&a.0));
        shown.truncate(relevance::MAX_SHOWN);
        // Stand-in ids: relevant rows by their case's first relevant id.
        let ids: Vec<String> = shown
            .iter()
            .map(|&(_, i)| {
                if rows[i].relevant {
                    format!("relevant-{i}")
                } else {
                    format!("other-{i}")
                }
            })
            .collect();
        let relevant_ids: Vec<String> = rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r.case == n && r.relevant)
            .map(|(i, _)| format!("relevant-{i}"))
            .collect();
        // The case's labels beyond its candidates still count as missed.
        let mut relevant = relevant_ids.clone();
        relevant
            .extend((relevant_ids.len()..case.relevant.len()).map(|k| format!("missed-{n}-{k}")));
        let stand_in = Case {
            prompt: case.prompt.clone(),
            relevant,
            kind: case.kind.clone(),
            not_relevant: Vec::new(),
        };
        block.add(&stand_in, &ids);
    }
    block
}

/// `-- fit`: the decision's model fitted on the man-page set's fit half,
/// with the tier on and off, and the threshold curve on each half and on
/// our set.
fn fit(sets: &[Set], model: &Arc<Model>) {
    let Some(manpages) = sets.iter().find(|s| s.name == "manpages") else {
        println!("-- fit needs the man-page set (MEMD_BENCH_MANPAGES)");
        return;
    };
    for tier in [true, false] {
        let engines: Vec<(&Set, Engine)> = sets
            .iter()
            .map(|set| {
                (
                    set,
                    engine_with(tier.then(|| model.clone()), &set.knowledge),
                )
            })
            .collect();
        let all_rows: Vec<(&Set, Vec<Row>)> = engines
            .iter()
            .map(|(set, engine)| (*set, rows(engine, set)))
            .collect();
        let man_rows = &all_rows
            .iter()
            .find(|(s, _)| s.name == "manpages")
            .unwrap()
            .1;
        let fit_rows: Vec<&Row> = man_rows
            .iter()
            .filter(|r| manpages.cases[r.case].half() == "fit")
            .collect();
        let fitted = fit_model(&fit_rows);
        println!(
            "\n# Fitted (tier {}): intercept {:.3}, weights {}",
            if tier { "on" } else { "off" },
            fitted.intercept,
            Evidence::NAMES
                .iter()
                .zip(fitted.weights)
                .map(|(n, w)| format!("{n} {w:.3}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        for threshold in [0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5] {
            println!("threshold {threshold:.2}");
            for (set, rows) in &all_rows {
                let halves: &[Option<&str>] = if set.name == "manpages" {
                    &[Some("fit"), Some("report")]
                } else {
                    &[None]
                };
                for half in halves {
                    let b = decide(set, rows, &fitted, threshold, *half);
                    println!(
                        "  {:<8} {:<7} {}",
                        set.name,
                        half.unwrap_or("all"),
                        b.line()
                    );
                }
            }
        }
    }
}

/// The cosine distributions and the fusion grid (how `Fusion::DEFAULT`
/// was chosen); leaves the default in place.
fn sweep(fused: &mut Engine, set: &Set) {
    let (mut rel, mut other) = (Vec::new(), Vec::new());
    for case in &set.cases {
        for hit in fused.search(&case.prompt, 1000, GLOBAL) {
            if case.relevant.contains(&hit.id) {
                rel.push(hit.similarity);
            } else {
                other.push(hit.similarity);
            }
        }
    }
    for (name, v) in [("relevant", &mut rel), ("other", &mut other)] {
        if v.is_empty() {
            continue;
        }
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
    fused.semantic_mut().unwrap().set_fusion(Fusion {
        lexical: 0.0,
        semantic: 1.0,
        floor: 0.0,
    });
    print_ranking("cosine alone", &rank(fused, set, false));
    println!("\n# Fusion grid: lexical 1.0 + W x cosine above FLOOR");
    for floor in [0.3f32, 0.4, 0.5, 0.6, 0.7] {
        for w in [0.1f32, 0.2, 0.3, 0.5, 0.8] {
            fused.semantic_mut().unwrap().set_fusion(Fusion {
                lexical: 1.0,
                semantic: w,
                floor,
            });
            let mut ranked = rank(fused, set, false);
            for part in ["half fit", "half report"] {
                if let Some(r) = ranked.remove(part) {
                    println!("floor {floor:.1} W {w:.1} {part:11}: {}", r.line());
                }
            }
            if let Some(all) = ranked.remove("all") {
                println!("floor {floor:.1} W {w:.1} all        : {}", all.line());
            }
        }
    }
    fused.semantic_mut().unwrap().set_fusion(Fusion::DEFAULT);
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
