//! Does learning make what is injected better? A simulated team plays
//! sessions through the real `memctl hook claude` and the real daemon, and
//! the same workload runs once per arm:
//!
//! - `off`: nothing is learned;
//! - `evaluate`: `memctl evaluate` after each session, with an external
//!   judge that answers from the hidden truth and gets 20% of its verdicts
//!   wrong;
//! - `batch`: the same judge, `memctl evaluate` every 10 sessions;
//! - `feedback`: direct feedback (`memctl feedback`) on each lesson shown,
//!   with the same 20% of wrong verdicts;
//! - `ideal` and `oracle`: what is achievable, so that each figure can be
//!   read as a share of it ([`ideal`]): a learner with a perfect memory and
//!   the same judge over memd's own order, and the relevant lessons among
//!   those retrieval reaches. They play the first two phases only.
//!   `ideal2` and `ideal3` are the same learner, ruling a lesson out only
//!   on two or three more irrelevant verdicts than relevant ones: it trades
//!   precision for recall, and the bars read the evaluator against the most
//!   precise of them whose recall is not below `off`'s as well.
//! - `literal`: seed 001's rule taken literally, per lesson and repository,
//!   over the same order and judge: what memd's own rules are read
//!   against where they depart from it. It too plays the first two phases
//!   only.
//!
//! Phases: 120 sessions over ten repositories (precision and recall are
//! read over sessions 61-120); then a drift, where in one repository the
//! lessons that helped on one topic go stale and two that did not become
//! relevant, and 30 sessions there that each touch the topic: `stale-stop`
//! is the last session that showed a stale lesson as a kept one, `+Nr` the
//! times one was shown as a re-check (each stale lesson explained in the
//! session, before the hook asks, as the hook's query decides it);
//! `fresh-show` the
//! session each new one was first shown, per seed. Then, on a
//! fresh daemon per arm, 120 sessions from one repository only: the share of
//! injected lessons that are on the prompt's topic, and how many lessons
//! pinned themselves.
//!
//! Every arm plays four teams ([`world::Team`]), each reported on its
//! own: `stacks`, `conventions` (relevance decided per lesson and
//! repository among repositories that share their stacks, with facets),
//! `sparse` (about twelve sessions a repository) and `busy` (three
//! repositories).
//!
//! `cargo bench --bench learning` (sixteen seeds); `-- quick` for one seed,
//! `-- seeds N`, `-- seed N` for that seed alone (`-- seed 9 seeds 8`: seeds
//! 9 to 16; `-- seed 9 seeds 16`: seeds 9 to 24, sixteen seeds none of
//! which a rule was chosen on, as issue 33's bars are read), `-- arms
//! off,evaluate` (`off`, `evaluate`, `batch`, `feedback`, `ideal`,
//! `ideal2`, `ideal3`, `literal`, `oracle`), `-- teams stacks,busy`,
//! `-- error N` for a judge wrong in N% of its verdicts (20 by default). Under each arm, what
//! the measured sessions showed to explore (re-checks of filtered lessons,
//! lessons written for another stack) and how much of it was relevant, and
//! the irrelevant lessons shown, by why they were not relevant;
//! `MEMD_BENCH_DEBUG=1` traces each measured prompt's lessons before the
//! hook asks (and each drift session that showed a stale lesson as a kept
//! one, and the judge's noise as `memctl status` reads it when the drift
//! begins and every five drift sessions) on stderr; its listing is a
//! `memctl query` of its own, which memd counts as a showing (the one
//! direct feedback without tags speaks of, a match towards the seed's
//! match-count pin), so figures under it can differ from a plain run.
//! `MEMD_BENCH_FULL=1` adds each relevant lesson's whole explanation, not
//! only its first lines;
//! `MEMD_BENCH_TRACE=1` prints each verdict a session's lessons get, and
//! why (a wrong verdict, a lesson shown on another topic, another scope),
//! and each lesson a prompt shows (`S session repository lesson topic
//! relevant relevant-nowhere task-band explored`, as `memctl explain`
//! reads it, explored `recheck`, `another-stack` or `-`);
//! `MEMD_BENCH_MISSES=1` prints, for each relevant lesson a measured
//! prompt's search reached and the prompt did not show, what `memctl
//! explain` says of it (`MISS session repository lesson ...`): what
//! learning costs in recall, and why;
//! `MEMD_BENCH_SEMANTIC=off` runs the daemons with the semantic tier off;
//! `MEMD_BENCH_DECIDE=on` with the decision to show on prompts (`[query]
//! decide`, off by default). After a team's arms, the bench says which of
//! issue 33's bars hold ([`bars`]), where `off` and `evaluate` both ran
//! (with `evaluate` and `feedback` alone, feedback's against the
//! evaluator, seed by seed).

mod bars;
#[path = "../corpus/mod.rs"]
mod corpus;
mod ideal;
mod judge;
#[path = "../support/mod.rs"]
mod support;
mod world;

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use support::{hook_context, memctl_path, memd_serve};

use corpus::Rng;
use memd::config::Config;
use memd::engine::{Engine, GLOBAL};
use memd::learning::tag_relevance::{ema, MIN_EVALS_FOR_FILTER, NEGATIVE_SCORE_THRESHOLD};
use memd::scoring::lesson::MAX_LESSONS;
use serde_json::{json, Value};
use world::{Lesson, Repo, Team};

/// Share of the judge's verdicts that are wrong, in percent, by default
/// (`-- error N` sets it for a run).
const JUDGE_ERROR_PERCENT: u64 = 20;

/// The judge's error rate of this run.
static JUDGE_ERROR: std::sync::OnceLock<u64> = std::sync::OnceLock::new();

fn judge_error() -> u64 {
    *JUDGE_ERROR.get_or_init(|| JUDGE_ERROR_PERCENT)
}
/// Sessions of the first phase, and the first one measured.
const SESSIONS: usize = 120;
const MEASURED_FROM: usize = 61;
/// Sessions after the drift.
const DRIFT_SESSIONS: usize = 30;
/// Seeds (worlds) a run plays by default: enough that the drift's tail
/// (a judge's unlucky run of errors, a lesson whose turn to be explored
/// comes on prompts it does not match) shows in the figures.
const SEEDS: u64 = 16;
/// The issue's bounds after a drift: stale lessons stop showing (as kept
/// ones) within this many sessions...
const STALE_STOP_BOUND: usize = 5;
/// ...and newly relevant ones show within this many.
const FRESH_SHOW_BOUND: usize = 10;
/// `memctl evaluate` every this many sessions in the batch arm.
const BATCH: usize = 10;
/// Search hits a relevant lesson must be among to count as reachable.
const REACH: usize = 10;
/// How deep the ideal learner reads memd's order of a prompt's lessons.
const ORDER_DEPTH: usize = 12;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Arm {
    Off,
    Evaluate,
    Batch,
    Feedback,
    /// What is achievable, played without a daemon ([`ideal`]).
    Oracle,
    /// The ideal learner, ruling a lesson out once its verdicts are this
    /// many more irrelevant than relevant ([`ideal`]).
    Ideal(i32),
    /// Seed 001's rule alone, per lesson and repository, over the same
    /// order ([`ideal`]).
    Literal,
}

impl Arm {
    const ALL: [Arm; 9] = [
        Arm::Off,
        Arm::Evaluate,
        Arm::Batch,
        Arm::Feedback,
        Arm::Ideal(1),
        Arm::Ideal(2),
        Arm::Ideal(3),
        Arm::Literal,
        Arm::Oracle,
    ];

    fn name(self) -> &'static str {
        match self {
            Arm::Off => "off",
            Arm::Evaluate => "evaluate",
            Arm::Batch => "batch",
            Arm::Feedback => "feedback",
            Arm::Oracle => "oracle",
            Arm::Ideal(1) => "ideal",
            Arm::Ideal(2) => "ideal2",
            Arm::Ideal(3) => "ideal3",
            Arm::Ideal(_) => "ideal-n",
            Arm::Literal => "literal",
        }
    }

    /// Played by [`ideal::Sim`], not by memd.
    fn simulated(self) -> bool {
        matches!(self, Arm::Oracle | Arm::Ideal(_) | Arm::Literal)
    }
}

/// The arguments that place a query or an explanation: `prompt` asked in
/// `cwd`, in `session`.
fn in_session<'a>(prompt: &'a str, cwd: &'a str, session: &'a str) -> [&'a str; 6] {
    ["--task", prompt, "--cwd", cwd, "--session", session]
}

/// The relevance flip of the drift phase, in one repository.
struct Drift {
    repo: usize,
    topic: usize,
    /// Relevant before, not after.
    stale: Vec<String>,
    /// Not relevant before, relevant after.
    fresh: Vec<String>,
}

/// Whether `lesson` helps on `topic` in `repos[repo]`, the drift's flip
/// applied.
fn relevant(
    drift: Option<&Drift>,
    repos: &[Repo],
    lesson: &Lesson,
    repo: usize,
    topic: usize,
) -> bool {
    if let Some(d) = drift {
        if d.repo == repo {
            if d.stale.contains(&lesson.id) {
                return false;
            }
            if d.fresh.contains(&lesson.id) {
                return lesson.topic == topic;
            }
        }
    }
    lesson.relevant(&repos[repo], topic)
}

/// One daemon with its directories, and the world it serves.
struct Run<'w> {
    arm: Arm,
    dir: tempfile::TempDir,
    daemon: Child,
    socket: PathBuf,
    memctl: PathBuf,
    repos: &'w [Repo],
    lessons: &'w [Lesson],
    engine: &'w Engine,
    drift: Option<Drift>,
    seed: u64,
}

/// What one session showed and how it scored.
#[derive(Default)]
struct Outcome {
    shown: usize,
    relevant_shown: usize,
    prompt_shown: usize,
    on_topic: usize,
    reachable: usize,
    reached: usize,
    ids: BTreeSet<String>,
    /// Lessons that went stale in the drift, shown on probation (a re-check
    /// of a filtered lesson) rather than as kept ones.
    rechecks: BTreeSet<String>,
    /// Irrelevant lessons shown, by why they were not relevant.
    misses: Misses,
    /// Lessons shown to explore rather than as kept ones.
    explored: Explored,
}

/// Lessons shown on a prompt to explore: to re-check a filtered one
/// (probation, trial), or one written for another stack in the sessions of
/// its context that explore it; and how many of each were relevant. What
/// exploring costs and what it finds.
#[derive(Default, Clone, Copy)]
struct Explored {
    rechecks: Shown,
    another_stack: Shown,
}

/// Lessons shown, and how many of them were relevant.
#[derive(Default, Clone, Copy)]
struct Shown {
    shown: usize,
    relevant: usize,
}

impl Shown {
    fn count(&mut self, relevant: bool) {
        self.shown += 1;
        self.relevant += usize::from(relevant);
    }

    /// The share of them that were relevant.
    fn relevant_share(&self) -> f64 {
        self.relevant as f64 / self.shown.max(1) as f64
    }
}

impl Explored {
    fn add(&mut self, e: &Explored) {
        for (mine, theirs) in [
            (&mut self.rechecks, e.rechecks),
            (&mut self.another_stack, e.another_stack),
        ] {
            mine.shown += theirs.shown;
            mine.relevant += theirs.relevant;
        }
    }

    fn shown(&self) -> usize {
        self.rechecks.shown + self.another_stack.shown
    }
}

/// Why the irrelevant lessons shown were not relevant.
#[derive(Default, Clone, Copy)]
struct Misses {
    /// Shown at session start.
    start: usize,
    off_topic: usize,
    /// Relevant nowhere: outdated advice, or a facet.
    obsolete: usize,
    /// General lessons that help elsewhere but not here.
    general: usize,
    language: usize,
    framework: usize,
    repo: usize,
    /// Prompts that showed fewer than three lessons.
    short: usize,
    prompts: usize,
}

impl Outcome {
    /// Counts `lesson` shown on a prompt about `topic`, `relevant` or not.
    fn shown_on_prompt(&mut self, lesson: &Lesson, relevant: bool, topic: usize) {
        self.shown += 1;
        self.prompt_shown += 1;
        self.relevant_shown += usize::from(relevant);
        if !relevant {
            self.misses.count(lesson, topic);
        }
        self.on_topic += usize::from(lesson.topic == topic);
        self.ids.insert(lesson.id.clone());
    }
}

impl Misses {
    fn add(&mut self, m: &Misses) {
        self.start += m.start;
        self.off_topic += m.off_topic;
        self.obsolete += m.obsolete;
        self.general += m.general;
        self.language += m.language;
        self.framework += m.framework;
        self.repo += m.repo;
        self.short += m.short;
        self.prompts += m.prompts;
    }

    fn count(&mut self, l: &Lesson, topic: usize) {
        if l.topic != topic {
            self.off_topic += 1;
        } else if l.obsolete {
            self.obsolete += 1;
        } else {
            match l.scope {
                world::Scope::General => self.general += 1,
                world::Scope::Language(_) => self.language += 1,
                world::Scope::Framework(_) => self.framework += 1,
                world::Scope::Repo(_) => self.repo += 1,
            }
        }
    }
}

/// Lesson ids in an injected block (`- text [ID]` lines).
fn ids_in(block: &str) -> Vec<String> {
    block
        .lines()
        .filter(|l| l.starts_with("- ") && l.ends_with(']'))
        .filter_map(|l| {
            l.rsplit_once('[')
                .map(|(_, id)| id.trim_end_matches(']').to_string())
        })
        .collect()
}

impl<'w> Run<'w> {
    fn start(
        arm: Arm,
        seed: u64,
        memctl: &Path,
        repos: &'w [Repo],
        lessons: &'w [Lesson],
        engine: &'w Engine,
    ) -> Run<'w> {
        let dir = tempfile::tempdir().unwrap();
        world::write_repos(&dir.path().join("repos"), repos);
        world::write_lessons(&dir.path().join("knowledge"), lessons);
        let socket = dir.path().join("run").join("memd.sock");
        let judge = std::env::current_exe().unwrap();
        let config = dir.path().join("memd.toml");
        std::fs::write(
            &config,
            format!(
                "roots = []\n[daemon]\nlog = \"warn\"\n[evaluator]\ncommand = [{:?}, \"judge\", {:?}, \"{}\"]\ntimeout_ms = 20000\n[semantic]\nenabled = {}\n[query]\ndecide = {}\n",
                judge.display().to_string(),
                dir.path().join("truth").display().to_string(),
                judge_error(),
                std::env::var("MEMD_BENCH_SEMANTIC").as_deref() != Ok("off"),
                std::env::var("MEMD_BENCH_DECIDE").as_deref() == Ok("on"),
            ),
        )
        .unwrap();
        let daemon = memd_serve(
            &config,
            &dir.path().join("data"),
            &socket,
            &dir.path().join("knowledge"),
        )
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
        let run = Run {
            arm,
            dir,
            daemon,
            socket,
            memctl: memctl.to_path_buf(),
            repos,
            lessons,
            engine,
            drift: None,
            seed,
        };
        let started = Instant::now();
        while !run.memctl(&["ping"]).status.success() {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "memd did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        run
    }

    fn memctl(&self, args: &[&str]) -> std::process::Output {
        Command::new(&self.memctl)
            .args(args)
            .env("MEMD_SOCKET", &self.socket)
            .output()
            .unwrap()
    }

    /// The answer (`ok`) of `memctl ARGS` asked for JSON; null when it
    /// gave none.
    fn memctl_ok(&self, args: &[&str]) -> Value {
        let out = self.memctl(args);
        let mut v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        v["ok"].take()
    }

    /// Runs one hook through the real `memctl hook claude EVENT`; returns
    /// the lesson ids it injected.
    fn hook(&self, event: &str, input: Value) -> Vec<String> {
        let context = hook_context(
            Command::new(&self.memctl)
                .args(["hook", "claude", event])
                .env("MEMD_SOCKET", &self.socket),
            &input,
        );
        ids_in(&context)
    }

    fn relevant(&self, lesson: &Lesson, repo: usize, topic: usize) -> bool {
        relevant(self.drift.as_ref(), self.repos, lesson, repo, topic)
    }

    fn lesson(&self, id: &str) -> Option<&'w Lesson> {
        self.lessons.iter().find(|l| l.id == id)
    }

    /// Plays one session: SessionStart, one UserPromptSubmit per prompt
    /// (with the agent's reply in the transcript), SessionEnd; then
    /// whatever this arm learns from.
    fn session(&self, n: usize, repo: usize, prompts: &[(usize, String)]) -> Outcome {
        let id = format!("{}-{}-{n}", self.arm.name(), self.seed);
        let cwd = self
            .dir
            .path()
            .join("repos")
            .join(self.repos[repo].name)
            .join("src");
        let transcript = self.dir.path().join(format!("{id}.jsonl"));
        let base = |event: &str| {
            json!({
                "session_id": id,
                "transcript_path": transcript.display().to_string(),
                "cwd": cwd.display().to_string(),
                "hook_event_name": event,
            })
        };
        // The truth the judge answers from: relevant to any of its prompts.
        let relevant: Vec<&str> = self
            .lessons
            .iter()
            .filter(|l| prompts.iter().any(|(t, _)| self.relevant(l, repo, *t)))
            .map(|l| l.id.as_str())
            .collect();
        let mut truth = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.path().join("truth"))
            .unwrap();
        writeln!(truth, "{id}\t{}", relevant.join(",")).unwrap();

        let mut out = Outcome::default();
        let mut start = base("SessionStart");
        start["source"] = json!("startup");
        for lesson in self.hook("SessionStart", start) {
            let l = self.lesson(&lesson).unwrap();
            out.shown += 1;
            let yes = relevant.contains(&l.id.as_str());
            out.relevant_shown += usize::from(yes);
            out.misses.start += usize::from(!yes);
            out.ids.insert(lesson);
        }
        let mut lines = String::new();
        let mut reachable = BTreeSet::new();
        for (topic, prompt) in prompts {
            let mut input = base("UserPromptSubmit");
            input["prompt"] = json!(prompt);
            // Asked before the hook, in its session: what it decides.
            let rechecks = self.stale_rechecks(prompt, &cwd, &id);
            // Traced before the hook too: after it, the showing it records
            // ages what was held back, and the trace would read one prompt
            // further on than the hook did.
            if std::env::var_os("MEMD_BENCH_DEBUG").is_some()
                && n > MEASURED_FROM
                && (n <= SESSIONS || self.drift.is_some())
            {
                self.debug(n, repo, *topic, prompt, &cwd);
            }
            let shown = self.hook("UserPromptSubmit", input);
            out.misses.prompts += 1;
            out.misses.short += usize::from(shown.len() < 3);
            let traced = std::env::var_os("MEMD_BENCH_TRACE").is_some();
            let measured = (MEASURED_FROM..=SESSIONS).contains(&n);
            for lesson in &shown {
                let l = self.lesson(lesson).unwrap();
                let relevant = self.relevant(l, repo, *topic);
                out.shown_on_prompt(l, relevant, *topic);
                let why = (measured || traced).then(|| self.dimensions(lesson, prompt, &cwd));
                let (probation, another_stack, band) = why.unwrap_or((false, false, -1.0));
                if traced {
                    let explored = if probation {
                        "recheck"
                    } else if another_stack {
                        "another-stack"
                    } else {
                        "-"
                    };
                    eprintln!(
                        "S {n} {} {lesson} {topic} {} {} {band} {explored}",
                        self.repos[repo].name,
                        u8::from(relevant),
                        u8::from(l.obsolete)
                    );
                }
                if measured && probation {
                    out.explored.rechecks.count(relevant);
                } else if measured && another_stack {
                    out.explored.another_stack.count(relevant);
                }
                if rechecks.contains(lesson) {
                    out.rechecks.insert(lesson.clone());
                }
            }
            for hit in self.engine.search(prompt, REACH, GLOBAL) {
                if let Some(l) = self.lesson(&hit.id) {
                    if self.relevant(l, repo, *topic) {
                        if std::env::var_os("MEMD_BENCH_MISSES").is_some()
                            && (MEASURED_FROM..=SESSIONS).contains(&n)
                            && !shown.contains(&hit.id)
                        {
                            self.explain_miss(n, repo, &hit.id, prompt, &cwd);
                        }
                        reachable.insert(hit.id);
                    }
                }
            }
            lines.push_str(&format!(
                "{}\n{}\n",
                json!({"type": "user", "message": {"role": "user", "content": prompt}}),
                json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "I looked into it and changed the code."}]}}),
            ));
        }
        std::fs::write(&transcript, lines).unwrap();
        out.reachable = reachable.len();
        out.reached = reachable.iter().filter(|r| out.ids.contains(*r)).count();
        self.hook("SessionEnd", base("SessionEnd"));
        // What the recorder keeps of the session's showings (its context's
        // session clock, held-back evidence aged) is in before it is
        // judged, however loaded the machine.
        self.recorded();

        if std::env::var_os("MEMD_BENCH_TRACE").is_some() {
            for lesson in &out.ids {
                let l = self.lesson(lesson).unwrap();
                let truly = relevant.contains(&lesson.as_str());
                let wrong = judge::wrong(&id, lesson, judge_error());
                let covers = l.scope.covers(&self.repos[repo]) && !l.obsolete;
                let topic_in = prompts.iter().any(|(t, _)| *t == l.topic);
                eprintln!(
                    "V {n} {} {lesson} {} truth={} wrong={} covers={} topic_in={}",
                    self.repos[repo].name,
                    if truly != wrong { "+" } else { "-" },
                    truly,
                    wrong,
                    covers,
                    topic_in
                );
            }
        }
        match self.arm {
            Arm::Off | Arm::Oracle | Arm::Ideal(_) | Arm::Literal => {}
            Arm::Evaluate => self.evaluate(),
            Arm::Batch if n.is_multiple_of(BATCH) => self.evaluate(),
            Arm::Batch => {}
            Arm::Feedback => {
                for lesson in &out.ids {
                    let truth = relevant.contains(&lesson.as_str());
                    let yes = judge::verdict(&id, lesson, truth, judge_error());
                    let verdict = if yes { "--relevant" } else { "--irrelevant" };
                    let done = self.memctl(&["feedback", lesson, verdict]);
                    assert!(done.status.success(), "feedback failed: {done:?}");
                }
            }
        }
        out
    }

    /// Of a lesson the hook showed on `prompt` in `cwd`, as `memctl
    /// explain` reads it: whether it is on probation (a re-check), whether
    /// it was written for another stack, and its task band. Explained, not
    /// queried: a query of its own would count as a showing (the last one
    /// direct feedback without tags speaks of, and a match towards the
    /// seed's match-count pin), which the bench is not to add.
    fn dimensions(&self, lesson: &str, prompt: &str, cwd: &Path) -> (bool, bool, f64) {
        let cwd = cwd.display().to_string();
        let ok = self.memctl_ok(&["explain", lesson, "--json", "--task", prompt, "--cwd", &cwd]);
        let d = &ok["explanation"]["dimensions"];
        (
            d["probation"] == 1.0,
            d["another_stack"] == 1.0,
            d["task_band"].as_f64().unwrap_or(-1.0),
        )
    }

    /// What `memctl query --json` ranks for `prompt` in `cwd`, each item
    /// with its dimensions.
    fn ranked(&self, prompt: &str, cwd: &Path) -> Vec<Value> {
        let cwd = cwd.display().to_string();
        let mut ok = self.memctl_ok(&["query", "--json", "--task", prompt, "--cwd", &cwd]);
        match ok["answer"]["items"].take() {
            Value::Array(items) => items,
            _ => Vec::new(),
        }
    }

    /// `MEMD_BENCH_MISSES`: why a relevant lesson that the prompt's search
    /// reached was not shown on it, as `memctl explain` says, on one line
    /// (`MISS session repository lesson explanation`).
    fn explain_miss(&self, n: usize, repo: usize, id: &str, prompt: &str, cwd: &Path) {
        let cwd = cwd.display().to_string();
        let out = self.memctl(&["explain", id, "--task", prompt, "--cwd", &cwd]);
        eprintln!(
            "MISS {n} {} {id} {}",
            self.repos[repo].name,
            String::from_utf8_lossy(&out.stdout).replace('\n', " | ")
        );
    }

    fn debug(&self, n: usize, repo: usize, topic: usize, prompt: &str, cwd: &Path) {
        eprintln!("## session {n} {} t{topic} {prompt}", self.repos[repo].name);
        for it in self.ranked(prompt, cwd) {
            let id = it["id"].as_str().unwrap_or("");
            let Some(l) = self.lesson(id) else { continue };
            let d = &it["dimensions"];
            eprintln!(
                "  {}{} {id} t{} {:?}{} {:?} sim {:.2} band {} lex {} tag {} evals {:.2} avg {:.2} elsewhere {:.2}/{:.2} {}",
                if self.relevant(l, repo, topic) { "+" } else { "-" },
                if d["probation"] == 1.0 { "P" } else { "" },
                l.topic, l.scope, if l.obsolete { " OBS" } else { "" }, l.tags,
                d["similarity"].as_f64().unwrap_or(0.0), d["task_band"], d["lexical_rank"], d["tag_rank"],
                d["tag_evals"].as_f64().unwrap_or(0.0), d["tag_avg"].as_f64().unwrap_or(0.0),
                d["elsewhere_evals"].as_f64().unwrap_or(0.0), d["elsewhere_avg"].as_f64().unwrap_or(0.0), l.text
            );
        }
        for l in self
            .lessons
            .iter()
            .filter(|l| self.relevant(l, repo, topic))
        {
            let e = self.memctl(&[
                "explain",
                &l.id,
                "--task",
                prompt,
                "--cwd",
                &cwd.display().to_string(),
            ]);
            let text = String::from_utf8_lossy(&e.stdout);
            let full = std::env::var_os("MEMD_BENCH_FULL").is_some();
            let short: Vec<&str> = text
                .lines()
                .filter(|x| {
                    full || x.contains("similarity")
                        || x.contains("filtered")
                        || x.contains("shown")
                        || x.contains("not")
                })
                .take(if full { usize::MAX } else { 3 })
                .collect();
            eprintln!("  relevant {} {:?}: {}", l.id, l.scope, short.join(" | "));
        }
    }

    /// The drift's stale lessons that `prompt` in `cwd` would show in
    /// `session` as re-checks (on probation, or on the record over every
    /// showing), each explained as the hook's query would decide it.
    fn stale_rechecks(&self, prompt: &str, cwd: &Path, session: &str) -> BTreeSet<String> {
        let Some(drift) = &self.drift else {
            return BTreeSet::new();
        };
        let cwd = cwd.display().to_string();
        let place = in_session(prompt, &cwd, session);
        drift
            .stale
            .iter()
            .filter(|lesson| {
                let ok = self.memctl_ok(&[&["explain", lesson, "--json"], &place[..]].concat());
                ok["explanation"]["dimensions"]["probation"] == 1.0
            })
            .cloned()
            .collect()
    }

    /// memd's order of the lessons for `prompt` in `cwd` with nothing
    /// learned, beyond the three a prompt shows: the same query asked again
    /// in one session of its own, which leaves out what it already showed,
    /// until it shows nothing or [`ORDER_DEPTH`] are found.
    fn order(&self, prompt: &str, cwd: &Path, session: &str) -> Vec<String> {
        let cwd = cwd.display().to_string();
        let place = in_session(prompt, &cwd, session);
        let query = [&["query", "--json", "--kinds", "lesson"], &place[..]].concat();
        let mut order = Vec::new();
        while order.len() < ORDER_DEPTH {
            let ok = self.memctl_ok(&query);
            let ids: Vec<String> = ok["answer"]["items"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|i| i["id"].as_str().map(str::to_string))
                .filter(|id| !order.contains(id))
                .collect();
            if ids.is_empty() {
                break;
            }
            order.extend(ids);
        }
        order
    }

    /// Where sessions in `repos[repo]` run.
    fn cwd(&self, repo: usize) -> PathBuf {
        self.dir
            .path()
            .join("repos")
            .join(self.repos[repo].name)
            .join("src")
    }

    /// Waits until the daemon's recorder has applied every showing so far
    /// (`memctl status`: none waiting).
    fn recorded(&self) {
        for _ in 0..2000 {
            let ok = self.memctl_ok(&["status", "--json"]);
            if ok["status"]["recorder"]["waiting"] == 0 {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        panic!("the recorder did not catch up in 10 s");
    }

    fn evaluate(&self) {
        let done = self.memctl(&["evaluate", "--json"]);
        assert!(
            done.status.success(),
            "evaluate failed: {}",
            String::from_utf8_lossy(&done.stdout)
        );
    }

    /// What `lesson` has learned in the context of `cwd`, read for every
    /// showing: its level (in the evaluator's unit) and judged sessions.
    fn learned_here(&self, lesson: &str, cwd: &Path) -> (f64, f64) {
        let cwd = cwd.display().to_string();
        let ok = self.memctl_ok(&["explain", lesson, "--cwd", &cwd, "--json"]);
        let d = &ok["explanation"]["dimensions"];
        (
            d["tag_level"].as_f64().unwrap_or(0.0),
            d["tag_evals"].as_f64().unwrap_or(0.0),
        )
    }

    /// Lessons pinned by a rule rather than by hand.
    fn auto_pinned(&self) -> usize {
        self.memctl_ok(&["log", "--json"])["log"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|e| e["pinned"].as_str().is_some_and(|p| p.starts_with("auto")))
            .count()
    }

    fn stop(mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.daemon.id().to_string()])
            .status();
        let _ = self.daemon.wait();
    }
}

/// Who plays an arm's sessions: memd through its hooks, or a simulated
/// arm ([`ideal::Sim`]).
enum Player<'w> {
    Memd(Box<Run<'w>>),
    Sim(Box<ideal::Sim<'w>>),
}

impl Player<'_> {
    fn session(&mut self, n: usize, repo: usize, prompts: &[(usize, String)]) -> Outcome {
        match self {
            Player::Memd(run) => run.session(n, repo, prompts),
            Player::Sim(sim) => sim.session(n, repo, prompts),
        }
    }

    fn set_drift(&mut self, drift: Drift) {
        match self {
            Player::Memd(run) => run.drift = Some(drift),
            Player::Sim(sim) => sim.drift = Some(drift),
        }
    }

    fn drift(&self) -> Option<&Drift> {
        match self {
            Player::Memd(run) => run.drift.as_ref(),
            Player::Sim(sim) => sim.drift.as_ref(),
        }
    }

    fn stop(self) {
        match self {
            Player::Memd(run) => (*run).stop(),
            Player::Sim(sim) => sim.stop(),
        }
    }
}

/// Irrelevant verdicts seed 001's EMA needs, every one right, to filter a
/// lesson whose evidence is at `level` over `evals` judged sessions: below
/// the filter line, with the seed's three sessions or more.
fn verdicts_to_filter(level: f64, evals: f64) -> usize {
    let (mut level, mut n) = (level, 0usize);
    while level >= NEGATIVE_SCORE_THRESHOLD || evals + (n as f64) < MIN_EVALS_FOR_FILTER {
        level = ema(level, -1.0, 1.0);
        n += 1;
    }
    n
}

/// The earliest drift session by which every stale lesson (each
/// `(level, evals)` at the drift) could have been stopped, with every
/// verdict right: each must be shown as a kept one as often as
/// [`verdicts_to_filter`] says, once a session at most, and a session's
/// one prompt on the topic shows at most `MAX_LESSONS` (the topic's prompt
/// is the only one they are shown on, as the drift's sessions have it).
fn stale_floor(learned: &[(f64, f64)]) -> usize {
    let needed: Vec<usize> = learned
        .iter()
        .map(|&(level, evals)| verdicts_to_filter(level, evals))
        .collect();
    let longest = needed.iter().copied().max().unwrap_or(0);
    needed
        .iter()
        .sum::<usize>()
        .div_ceil(MAX_LESSONS)
        .max(longest)
}

/// Draws of the judge's errors [`stale_ideal`] averages over.
const IDEAL_DRAWS: u64 = 2000;

/// What an ideal memd would do with the stale lessons after a drift
/// ([`stale_ideal`]).
#[derive(Default, Clone, Copy)]
struct StaleIdeal {
    /// Stale lessons stopped by the bound, on average over the draws.
    by_bound: f64,
    /// The share of draws in which every stale lesson stopped by
    /// [`bars::STALE_STOP_ALL`].
    all_by: f64,
}

/// How many of the stale lessons (each `(level, evals)` at the drift) an
/// ideal memd would stop by drift session `bound`, on average over the
/// judge's errors, and how often it would stop all of them by
/// [`bars::STALE_STOP_ALL`]: each session the topic's prompt shows the
/// `MAX_LESSONS` stale lessons not yet filtered with the best evidence
/// (as the boost orders them), each gets a verdict wrong `error_percent`
/// of the time, moves by seed 001's EMA, and once filtered is never shown
/// again (no re-check, no other prompt). What the seed's EMA and the slots
/// allow whatever memd's rules are.
fn stale_ideal(learned: &[(f64, f64)], error_percent: u64, bound: usize) -> StaleIdeal {
    let mut rng = Rng(0x5eed);
    let mut stopped = 0usize;
    let mut all_stopped = 0usize;
    for _ in 0..IDEAL_DRAWS {
        // (level, evals, filtered, last session shown as a kept one)
        let mut state: Vec<(f64, f64, bool, usize)> = learned
            .iter()
            .map(|&(l, e)| (l, e, verdicts_to_filter(l, e) == 0, 0))
            .collect();
        for session in 1..=DRIFT_SESSIONS {
            let mut open: Vec<usize> = (0..state.len()).filter(|&i| !state[i].2).collect();
            open.sort_by(|&a, &b| state[b].0.total_cmp(&state[a].0));
            for &i in open.iter().take(MAX_LESSONS) {
                let wrong = (rng.below(100) as u64) < error_percent;
                let s = &mut state[i];
                s.0 = ema(s.0, if wrong { 1.0 } else { -1.0 }, 1.0);
                s.1 += 1.0;
                s.2 = s.0 < NEGATIVE_SCORE_THRESHOLD && s.1 >= MIN_EVALS_FOR_FILTER;
                s.3 = session;
            }
        }
        stopped += state.iter().filter(|s| s.2 && s.3 <= bound).count();
        all_stopped += usize::from(state.iter().all(|s| s.2 && s.3 <= bars::STALE_STOP_ALL));
    }
    StaleIdeal {
        by_bound: stopped as f64 / IDEAL_DRAWS as f64,
        all_by: all_stopped as f64 / IDEAL_DRAWS as f64,
    }
}

/// The sessions of a phase: a repository and two or three prompts on its
/// topics each; `only` keeps every session in one repository. Most teams
/// work in a few repositories most of the time; `sparse` in each alike.
fn workload(
    rng: &mut Rng,
    (repos, team): (&[Repo], Team),
    sessions: usize,
    only: Option<usize>,
) -> Vec<(usize, Vec<(usize, String)>)> {
    (0..sessions)
        .map(|_| {
            let repo = only.unwrap_or_else(|| match team {
                // Evenly: about twelve sessions a repository.
                Team::Sparse => rng.below(repos.len()),
                _ => rng.zipf(repos.len()),
            });
            let topics = &repos[repo].topics;
            let prompts = (0..2 + rng.below(2))
                .map(|_| {
                    let t = topics[rng.zipf(topics.len())];
                    (t, world::prompt(rng, t))
                })
                .collect();
            (repo, prompts)
        })
        .collect()
}

#[derive(Default, Clone)]
struct Tally {
    shown: usize,
    relevant: usize,
    prompt_shown: usize,
    on_topic: usize,
    reachable: usize,
    reached: usize,
    misses: Misses,
    explored: Explored,
}

impl Tally {
    fn merge(&mut self, t: &Tally) {
        self.shown += t.shown;
        self.relevant += t.relevant;
        self.prompt_shown += t.prompt_shown;
        self.on_topic += t.on_topic;
        self.reachable += t.reachable;
        self.reached += t.reached;
        self.misses.add(&t.misses);
        self.explored.add(&t.explored);
    }
    fn add(&mut self, o: &Outcome) {
        self.shown += o.shown;
        self.relevant += o.relevant_shown;
        self.prompt_shown += o.prompt_shown;
        self.on_topic += o.on_topic;
        self.reachable += o.reachable;
        self.reached += o.reached;
        self.misses.add(&o.misses);
        self.explored.add(&o.explored);
    }
    fn precision(&self) -> f64 {
        self.relevant as f64 / self.shown.max(1) as f64
    }
    fn recall(&self) -> f64 {
        self.reached as f64 / self.reachable.max(1) as f64
    }
    fn on_topic(&self) -> f64 {
        self.on_topic as f64 / self.prompt_shown.max(1) as f64
    }
}

/// What one arm measured on one seed.
#[derive(Default, Clone)]
struct Figures {
    measured: Tally,
    /// For each stale lesson, the last drift session that showed it as a
    /// kept one (0: none did).
    stale_each: Vec<usize>,
    /// Stale lessons shown on probation during the drift sessions.
    stale_rechecks: usize,
    /// The earliest drift session by which every stale lesson could have
    /// been stopped, every verdict right ([`stale_floor`]).
    stale_floor: usize,
    /// What an ideal memd would do with the stale lessons ([`stale_ideal`]).
    stale_ideal: StaleIdeal,
    fresh_first: Vec<Option<usize>>,
    one_repo: Tally,
    one_repo_pins: usize,
    /// Precision in each quarter of the one-repository run.
    one_repo_curve: Vec<f64>,
}

fn run_arm(team: Team, arm: Arm, seed: u64, memctl: &Path) -> Figures {
    let mut rng = Rng(seed);
    let repos = world::repos(&mut rng, team);
    let lessons = world::lessons(&mut rng, &repos, team);
    let knowledge = tempfile::tempdir().unwrap();
    world::write_lessons(knowledge.path(), &lessons);
    let mut engine = Engine::new(&Config::default());
    engine.load_roots(&[knowledge.path().to_path_buf()]);
    let phase1 = workload(&mut rng, (&repos, team), SESSIONS, None);
    let mut figures = Figures::default();

    let mut player = if arm.simulated() {
        let order = matches!(arm, Arm::Ideal(_) | Arm::Literal)
            .then(|| Run::start(Arm::Off, seed, memctl, &repos, &lessons, &engine));
        Player::Sim(Box::new(ideal::Sim::new(
            arm, seed, &repos, &lessons, &engine, order,
        )))
    } else {
        Player::Memd(Box::new(Run::start(
            arm, seed, memctl, &repos, &lessons, &engine,
        )))
    };
    for (n, (repo, prompts)) in phase1.iter().enumerate() {
        let o = player.session(n + 1, *repo, prompts);
        if n + 1 >= MEASURED_FROM {
            figures.measured.add(&o);
        }
    }
    // The drift: in the first repository, on its first topic, what helped
    // goes stale and two lessons written for other stacks become relevant.
    let (drift_repo, drift_topic) = (0, repos[0].topics[0]);
    let stale: Vec<String> = lessons
        .iter()
        .filter(|l| l.relevant(&repos[drift_repo], drift_topic))
        .map(|l| l.id.clone())
        .collect();
    let fresh: Vec<String> = lessons
        .iter()
        .filter(|l| {
            l.topic == drift_topic && !l.obsolete && !l.relevant(&repos[drift_repo], drift_topic)
        })
        .take(2)
        .map(|l| l.id.clone())
        .collect();
    player.set_drift(Drift {
        repo: drift_repo,
        topic: drift_topic,
        stale: stale.clone(),
        fresh: fresh.clone(),
    });
    figures.fresh_first = vec![None; fresh.len()];
    figures.stale_each = vec![0; stale.len()];
    if let Player::Memd(run) = &player {
        let drift_cwd = run
            .dir
            .path()
            .join("repos")
            .join(repos[drift_repo].name)
            .join("src");
        let learned: Vec<(f64, f64)> = stale
            .iter()
            .map(|l| run.learned_here(l, &drift_cwd))
            .collect();
        figures.stale_floor = stale_floor(&learned);
        figures.stale_ideal = stale_ideal(&learned, judge_error(), STALE_STOP_BOUND);
    }
    if std::env::var_os("MEMD_BENCH_DEBUG").is_some() {
        eprintln!("DRIFT seed {seed}: stale {stale:?}, fresh {fresh:?}");
        if let Player::Memd(run) = &player {
            let ok = run.memctl_ok(&["status", "--json"]);
            eprintln!("JUDGE seed {seed}: {}", ok["status"]["judge"]);
        }
    }
    let others = &repos[drift_repo].topics;
    for n in 1..=DRIFT_SESSIONS {
        let d = player.drift().unwrap();
        let topic = d.topic;
        let other = others[1 + rng.below(others.len() - 1)];
        let prompts = vec![
            (topic, world::prompt(&mut rng, topic)),
            (other, world::prompt(&mut rng, other)),
        ];
        let o = player.session(SESSIONS + n, drift_repo, &prompts);
        // Stale lessons this session showed as kept ones.
        let kept: Vec<usize> = (0..stale.len())
            .filter(|&i| o.ids.contains(&stale[i]) && !o.rechecks.contains(&stale[i]))
            .collect();
        for &i in &kept {
            figures.stale_each[i] = n;
        }
        if !kept.is_empty() && std::env::var_os("MEMD_BENCH_DEBUG").is_some() {
            let kept: Vec<&String> = kept.iter().map(|&i| &stale[i]).collect();
            eprintln!(
                "STALE-KEPT seed {seed} drift session {n}: {kept:?} of {:?} rechecks {:?}",
                o.ids, o.rechecks
            );
        }
        figures.stale_rechecks += o.rechecks.len();
        for (i, f) in fresh.iter().enumerate() {
            if figures.fresh_first[i].is_none() && o.ids.contains(f) {
                figures.fresh_first[i] = Some(n);
            }
        }
        // How the drift moves the judge's noise as memd reads it.
        if std::env::var_os("MEMD_BENCH_DEBUG").is_some() && n % 5 == 0 {
            if let Player::Memd(run) = &player {
                let ok = run.memctl_ok(&["status", "--json"]);
                eprintln!(
                    "JUDGE seed {seed} drift session {n}: {}",
                    ok["status"]["judge"]
                );
            }
        }
    }
    player.stop();
    if arm.simulated() {
        return figures;
    }

    // One repository only, on a fresh daemon.
    let one_repo = workload(&mut rng, (&repos, team), SESSIONS, Some(0));
    let run = Run::start(arm, seed + 1000, memctl, &repos, &lessons, &engine);
    let mut curve = vec![Tally::default(); 4];
    for (n, (repo, prompts)) in one_repo.iter().enumerate() {
        let o = run.session(n + 1, *repo, prompts);
        figures.one_repo.add(&o);
        curve[n * 4 / SESSIONS].add(&o);
    }
    figures.one_repo_pins = run.auto_pinned();
    run.stop();
    figures.one_repo_curve = curve.iter().map(Tally::precision).collect();
    figures
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("judge") {
        judge::run(&args[1], args[2].parse().unwrap());
        return;
    }
    let mut seeds = if args.iter().any(|a| a == "quick") {
        1
    } else {
        SEEDS
    };
    let mut arms = Arm::ALL.to_vec();
    let mut teams = Team::ALL.to_vec();
    let mut first = 1;
    for pair in args.windows(2) {
        match pair[0].as_str() {
            "seeds" => seeds = pair[1].parse().unwrap(),
            "error" => JUDGE_ERROR.set(pair[1].parse().unwrap()).unwrap(),
            "seed" => {
                first = pair[1].parse().unwrap();
                seeds = 1;
            }
            "arms" => {
                arms = Arm::ALL
                    .into_iter()
                    .filter(|a| pair[1].split(',').any(|n| n == a.name()))
                    .collect()
            }
            "teams" => {
                teams = Team::ALL
                    .into_iter()
                    .filter(|t| pair[1].split(',').any(|n| n == t.name()))
                    .collect()
            }
            _ => {}
        }
    }
    let memctl = memctl_path();
    println!(
        "learning efficacy: 200 lessons, judge error {}%, {seeds} seed(s)",
        judge_error()
    );
    for team in teams {
        println!(
            "\n## {}: {} repositories\n{:<9} {:>9} {:>7} {:>9} | {:>10} {:>10} | {:>11} {:>12} {:>9} | 1-repo by quarter",
            team.name(),
            world::repos(&mut Rng(1), team).len(),
            "arm",
            "precision",
            "recall",
            "on-topic",
            "stale-stop",
            "fresh-show",
            "1-repo prec",
            "1-repo topic",
            "1-repo pins",
        );
        let summaries: Vec<bars::Summary> = arms
            .iter()
            .map(|&arm| report(team, arm, (first, seeds), &memctl))
            .collect();
        let bars = bars::bars(&summaries);
        if !bars.is_empty() {
            let read: Vec<String> = bars
                .iter()
                .map(|b| format!("{}: {}", b.what, if b.holds { "yes" } else { "no" }))
                .collect();
            println!("issue 33's bars (evaluate): {}", read.join(" | "));
        }
    }
}

/// Plays `arm` in `team` for each seed and prints its figures.
fn report(team: Team, arm: Arm, (first, seeds): (u64, u64), memctl: &Path) -> bars::Summary {
    let started = Instant::now();
    let all: Vec<Figures> = (first..first + seeds)
        .map(|s| run_arm(team, arm, s, memctl))
        .collect();
    let mut measured = Tally::default();
    let mut one = Tally::default();
    for f in &all {
        measured.merge(&f.measured);
        one.merge(&f.one_repo);
    }
    let summary = bars::Summary {
        arm,
        precision: measured.precision(),
        recall: measured.recall(),
        stale_each: all.iter().flat_map(|f| f.stale_each.clone()).collect(),
        fresh_first: all.iter().flat_map(|f| f.fresh_first.clone()).collect(),
        per_seed: all
            .iter()
            .map(|f| (f.measured.precision(), f.measured.recall()))
            .collect(),
    };
    let stale = format!(
        "{}+{}r",
        summary.last_stale(),
        all.iter().map(|f| f.stale_rechecks).sum::<usize>()
    );
    let fresh = all
        .iter()
        .flat_map(|f| f.fresh_first.iter())
        .map(|f| f.map_or("never".to_string(), |n| n.to_string()))
        .collect::<Vec<_>>()
        .join(",");
    let pins = all
        .iter()
        .map(|f| f.one_repo_pins.to_string())
        .collect::<Vec<_>>()
        .join(",");
    // The simulated arms play no one-repository run.
    let one_repo = |x: f64| {
        if arm.simulated() {
            "-".to_string()
        } else {
            format!("{x:.3}")
        }
    };
    let quarters: Vec<String> = (0..4)
        .filter(|_| !arm.simulated())
        .map(|q| {
            let mean = all.iter().map(|f| f.one_repo_curve[q]).sum::<f64>() / all.len() as f64;
            format!("{mean:.2}")
        })
        .collect();
    println!(
        "{:<9} {:>9.3} {:>7.3} {:>9.3} | {:>10} {:>10} | {:>11} {:>12} {:>9} | {} ({:.0?})",
        arm.name(),
        measured.precision(),
        measured.recall(),
        measured.on_topic(),
        stale,
        fresh,
        one_repo(one.precision()),
        one_repo(one.on_topic()),
        if arm.simulated() {
            "-".to_string()
        } else {
            pins
        },
        quarters.join(" "),
        started.elapsed()
    );
    println!(
        "          drift: stale lessons stopped by session {STALE_STOP_BOUND}: {}/{} (by {}: {}), fresh ones shown by session {FRESH_SHOW_BOUND}: {}/{}",
        summary.stale_within(STALE_STOP_BOUND),
        summary.stale_each.len(),
        bars::STALE_STOP_ALL,
        summary.stale_within(bars::STALE_STOP_ALL),
        summary.fresh_within(FRESH_SHOW_BOUND),
        summary.fresh_first.len(),
    );
    if arm != Arm::Off && !arm.simulated() {
        let floors: Vec<String> = all.iter().map(|f| f.stale_floor.to_string()).collect();
        println!(
            "          what the slots allow: stopping every stale lesson takes until session {} (seeds over {STALE_STOP_BOUND}: {}) with every verdict right; an ideal memd with this judge stops {:.1} by session {STALE_STOP_BOUND}, and all of them by {} in every seed {:.0}% of the time ({} a seed)",
            floors.join(","),
            all.iter().filter(|f| f.stale_floor > STALE_STOP_BOUND).count(),
            all.iter().map(|f| f.stale_ideal.by_bound).sum::<f64>(),
            bars::STALE_STOP_ALL,
            100.0 * all.iter().map(|f| f.stale_ideal.all_by).product::<f64>(),
            all.iter()
                .map(|f| format!("{:.0}%", 100.0 * f.stale_ideal.all_by))
                .collect::<Vec<_>>()
                .join(","),
        );
    }
    let x = measured.explored;
    if !arm.simulated() {
        let share = |n: usize, of: usize| n as f64 / of.max(1) as f64;
        println!(
            "          explored: {} re-checks ({:.2} relevant), {} for another stack ({:.2} relevant): {:.3} a prompt, {:.3} of what was shown",
            x.rechecks.shown,
            x.rechecks.relevant_share(),
            x.another_stack.shown,
            x.another_stack.relevant_share(),
            share(x.shown(), measured.misses.prompts),
            share(x.shown(), measured.shown),
        );
    }
    let m = measured.misses;
    println!(
        "          {}/{} relevant | misses: start {} off-topic {} obsolete {} general {} language {} framework {} repo {} | short prompts {}/{}",
        measured.relevant, measured.shown, m.start, m.off_topic, m.obsolete, m.general, m.language, m.framework, m.repo, m.short, m.prompts
    );
    summary
}
