//! The daemon's shared state: the knowledge (one writer, the indexer; many
//! readers, the connections), sessions, query latencies, and facts for
//! `status`.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Instant;

use crate::engine::{Engine, ScopeId};
use crate::learning::{Learned, SessionAudit, Staged};
use crate::protocol::{HookCall, Latency, ReindexReport};
use crate::store::LearnedWrite;

/// How a root is watched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchMode {
    /// Native events (inotify, FSEvents, kqueue).
    Native,
    /// Polled, because native watches ran out (or polling was asked for).
    Polling,
    /// Not watched: the root does not exist (yet).
    None,
}

impl WatchMode {
    /// The name shown in status.
    pub fn name(self) -> &'static str {
        match self {
            WatchMode::Native => "inotify",
            WatchMode::Polling => "polling",
            WatchMode::None => "none",
        }
    }
}

/// A knowledge root.
#[derive(Debug, Clone)]
pub struct Root {
    pub path: PathBuf,
    pub scope: ScopeId,
    /// The repository of a project root.
    pub project: Option<PathBuf>,
    pub watch: WatchMode,
    /// The inode of the directory being watched.
    pub ino: Option<u64>,
}

/// What was read of a file, to tell whether it changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileMeta {
    pub size: u64,
    pub mtime_ns: i128,
    pub hash: u64,
}

/// Everything the indexer writes and queries read.
#[derive(Default)]
pub struct Knowledge {
    pub engine: Engine,
    pub files: HashMap<PathBuf, FileMeta>,
    pub roots: Vec<Root>,
    pub startup: ReindexReport,
    pub last: Option<ReindexReport>,
    /// Whether a symlink may lead a root's file out of the root.
    pub follow_symlinks_out_of_roots: bool,
    /// Projects whose knowledge is not loaded, and why
    /// ([`crate::knowledge::trust`]).
    pub refused_projects: std::collections::BTreeMap<PathBuf, String>,
}

impl Knowledge {
    /// Adds a root (a project's when `project` is given), unless that path
    /// is a root already.
    pub fn add_root(&mut self, path: PathBuf, project: Option<PathBuf>) {
        if self.roots.iter().any(|r| r.path == path) {
            return;
        }
        let scope = match &project {
            None => crate::engine::GLOBAL,
            Some(repo) => self.engine.register_project(repo),
        };
        self.roots.push(Root {
            path,
            scope,
            project,
            watch: WatchMode::None,
            ino: None,
        });
    }

    /// The root a path lies under (the longest match).
    pub fn root_of(&self, path: &std::path::Path) -> Option<&Root> {
        self.roots
            .iter()
            .filter(|r| path.starts_with(&r.path))
            .max_by_key(|r| r.path.as_os_str().len())
    }
}

/// The last query latencies, for percentiles.
pub struct Latencies {
    window: VecDeque<f64>,
    count: u64,
}

/// How many recent queries the percentiles cover.
const LATENCY_WINDOW: usize = 4096;

impl Default for Latencies {
    fn default() -> Self {
        Latencies {
            window: VecDeque::with_capacity(LATENCY_WINDOW),
            count: 0,
        }
    }
}

impl Latencies {
    /// Records one query's duration.
    pub fn record(&mut self, micros: f64) {
        if self.window.len() == LATENCY_WINDOW {
            self.window.pop_front();
        }
        self.window.push_back(micros);
        self.count += 1;
    }

    /// Percentiles over the window.
    pub fn report(&self) -> Latency {
        let mut sorted: Vec<f64> = self.window.iter().copied().collect();
        sorted.sort_by(f64::total_cmp);
        let at = |p: f64| {
            if sorted.is_empty() {
                0.0
            } else {
                sorted[((sorted.len() - 1) as f64 * p).round() as usize]
            }
        };
        Latency {
            count: self.count,
            p50_us: at(0.5),
            p90_us: at(0.9),
            p99_us: at(0.99),
            max_us: sorted.last().copied().unwrap_or(0.0),
        }
    }
}

/// Fixed facts about this daemon.
pub struct Info {
    pub started: Instant,
    pub pid: u32,
    pub config: Option<PathBuf>,
    pub data_dir: PathBuf,
    pub socket: PathBuf,
    /// This engineer's name in the teams' files (`[team] member`).
    pub member: Option<String>,
}

/// The latest query that showed an item: feedback given without tags
/// speaks of that showing.
#[derive(Debug, Clone)]
pub struct LastShown {
    /// The query's tags.
    pub tags: Vec<String>,
    /// How well it matched that query's prompt.
    pub shown: crate::learning::Match,
    /// Where the query was made (its repository or working directory).
    pub place: Option<String>,
}

/// The state shared by the indexer and the connections.
pub struct Shared {
    pub knowledge: RwLock<Knowledge>,
    /// What was learned from use: its own lock, so a verdict never waits
    /// for the knowledge's writer, and held only while a change is made
    /// live, never while the store writes it
    /// ([`crate::learning::Staged`]). Taken after the knowledge and the
    /// sessions, never before.
    pub learned: RwLock<Learned>,
    /// The store's writer of what was learned and of the session audits:
    /// held from a change being made live until the store has it, so
    /// changes reach the store in the order they were made and a failed
    /// write undoes exactly its own. Taken before every other lock; a
    /// query never takes it.
    pub writer: Mutex<()>,
    /// Each session's audit: what it was shown, where.
    pub sessions: Mutex<HashMap<String, SessionAudit>>,
    /// The latest query that showed each item (for feedback given without
    /// tags).
    pub last_shown: Mutex<HashMap<String, LastShown>>,
    pub latencies: Mutex<Latencies>,
    /// Working directories already resolved to a project (or none).
    pub places: Mutex<HashMap<String, Option<PathBuf>>>,
    /// What the hooks reported of their calls.
    pub hooks: Mutex<HookActivity>,
    /// The latest answers to sessions, for the local page.
    pub injections: Mutex<super::injections::Injections>,
    /// Why each session's last evaluation did not judge all it should have
    /// (for the local page).
    pub evaluation_problems: Mutex<HashMap<String, String>>,
    /// The local page, once started (`memctl ui`).
    pub ui: Mutex<Option<super::ui::Running>>,
    pub info: Info,
}

/// The hooks' calls as they report them: the last of each harness and
/// event, and the latest failures.
#[derive(Debug, Default)]
pub struct HookActivity {
    last: std::collections::BTreeMap<(String, String), HookCall>,
    failures: VecDeque<HookCall>,
}

/// How many failed hook calls are kept.
const HOOK_FAILURES_KEPT: usize = 10;

impl HookActivity {
    /// Notes a call.
    pub fn note(&mut self, call: HookCall) {
        if call.outcome.failed() {
            if self.failures.len() == HOOK_FAILURES_KEPT {
                self.failures.pop_front();
            }
            self.failures.push_back(call.clone());
        }
        self.last
            .insert((call.harness.clone(), call.event.clone()), call);
    }

    /// The last call of each harness and event, and the latest failures.
    pub fn report(&self) -> (Vec<HookCall>, Vec<HookCall>) {
        (
            self.last.values().cloned().collect(),
            self.failures.iter().cloned().collect(),
        )
    }
}

impl Shared {
    /// The knowledge, to read. A panic elsewhere while holding the lock
    /// does not make it unusable: the data is whole between operations.
    pub fn read(&self) -> RwLockReadGuard<'_, Knowledge> {
        self.knowledge.read().unwrap_or_else(|e| e.into_inner())
    }

    /// The knowledge, to change (the indexer thread only).
    pub fn write(&self) -> RwLockWriteGuard<'_, Knowledge> {
        self.knowledge.write().unwrap_or_else(|e| e.into_inner())
    }

    /// What was learned, to read.
    pub fn learned(&self) -> RwLockReadGuard<'_, Learned> {
        self.learned.read().unwrap_or_else(|e| e.into_inner())
    }

    /// What was learned, to change (through a
    /// [`crate::learning::Transaction`]).
    pub fn learned_mut(&self) -> RwLockWriteGuard<'_, Learned> {
        self.learned.write().unwrap_or_else(|e| e.into_inner())
    }

    /// The store's writer ([`Shared::writer`]).
    pub fn writer(&self) -> MutexGuard<'_, ()> {
        self.writer.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Writes `staged` (a change made live under `_writer`, the store's
    /// writer still held) with `write`, the store's; if the write fails,
    /// the change is undone.
    pub fn write_staged<E>(
        &self,
        _writer: &MutexGuard<'_, ()>,
        staged: Staged,
        write: impl FnOnce(&LearnedWrite<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        staged.write_or_undo(write, || self.learned_mut())
    }

    /// The sessions' audits.
    pub fn sessions(&self) -> MutexGuard<'_, HashMap<String, SessionAudit>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The latest query that showed `item`.
    pub fn last_shown(&self, item: &str) -> Option<LastShown> {
        self.last_shown
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(item)
            .cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learning::tag_relevance::EVALUATOR_WEIGHT;
    use crate::learning::{Match, Transaction};

    fn shared() -> Shared {
        let config = crate::config::Config::default();
        Shared {
            knowledge: RwLock::new(Knowledge {
                engine: Engine::new(&config),
                files: HashMap::new(),
                roots: Vec::new(),
                startup: ReindexReport::default(),
                last: None,
                follow_symlinks_out_of_roots: false,
                refused_projects: Default::default(),
            }),
            learned: RwLock::new(Learned::default()),
            writer: Mutex::new(()),
            sessions: Mutex::new(HashMap::new()),
            last_shown: Mutex::new(HashMap::new()),
            latencies: Mutex::new(Latencies::default()),
            places: Mutex::new(HashMap::new()),
            hooks: Mutex::new(HookActivity::default()),
            injections: Mutex::new(Default::default()),
            evaluation_problems: Mutex::new(HashMap::new()),
            ui: Mutex::new(None),
            info: Info {
                started: Instant::now(),
                pid: 0,
                config: None,
                data_dir: PathBuf::new(),
                socket: PathBuf::new(),
                member: None,
            },
        }
    }

    /// A verdict on `L-1` in `python`, made live under the writer.
    fn verdict(shared: &Shared) -> (MutexGuard<'_, ()>, Staged) {
        let writer = shared.writer();
        let mut learned = shared.learned_mut();
        let mut tx = Transaction::new(&mut learned);
        tx.observe_session(&["python".to_string()]);
        tx.item("L-1").judge(
            "L-1",
            &[],
            &["python".to_string()],
            Match::Strong,
            -1.0,
            EVALUATOR_WEIGHT,
        );
        (writer, tx.stage())
    }

    #[test]
    fn queries_read_what_was_learned_while_the_store_writes_it() {
        let shared = shared();
        let (writer, staged) = verdict(&shared);
        shared
            .write_staged(&writer, staged, |write| {
                // What a query takes is free, and the change is live.
                let learned = shared.learned.try_read().expect("learned is not locked");
                assert!(learned.tag_scores("L-1").is_some());
                assert!(shared.sessions.try_lock().is_ok());
                assert!(shared.knowledge.try_read().is_ok());
                assert!(!write.tag_scores.is_empty());
                assert!(write.tag_scores.iter().all(|(item, _, _)| *item == "L-1"));
                Ok::<(), ()>(())
            })
            .unwrap();
        drop(writer);
        assert!(shared.learned().tag_scores("L-1").is_some());
        assert_eq!(shared.learned().context_sessions("python"), Some(1));
    }

    #[test]
    fn a_failed_write_undoes_the_change_queries_saw() {
        let shared = shared();
        let before = shared.learned().clone();
        let (writer, staged) = verdict(&shared);
        let failed = shared.write_staged(&writer, staged, |_| Err("disk full"));
        assert_eq!(failed, Err("disk full"));
        let learned = shared.learned();
        assert_eq!(learned.tag_relevance(), before.tag_relevance());
        assert_eq!(learned.context_sessions("python"), None);
        assert_eq!(learned.agreement(), before.agreement());
    }
}
