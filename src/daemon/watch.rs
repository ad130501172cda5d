//! The indexer thread: the only writer of the knowledge. It owns the file
//! watchers (notify with notify-debouncer-full, or a polling watcher for a
//! root when native watches run out), applies their events, checks every
//! second that each root is watched while it exists, rescans everything on
//! an overflow or error and slowly in the background, and serves reload and
//! project-registration requests.

use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use notify_debouncer_full::notify::event::{AccessKind, AccessMode};
use notify_debouncer_full::notify::{self, EventKind, PollWatcher, RecursiveMode, Watcher};
use notify_debouncer_full::{new_debouncer, DebounceEventResult, Debouncer, RecommendedCache};

use crate::protocol::ReindexReport;
use crate::store::Store;

use super::indexer::{self, Pass};
use super::state::{Shared, WatchMode};
use super::team;

/// How long events settle before they are applied.
pub const DEBOUNCE: Duration = Duration::from_millis(40);
/// How often the debouncer looks for settled events. Its thread wakes this
/// often even when nothing happens (its default, a quarter of the debounce
/// time, is 100 times a second); a save is applied at most
/// `DEBOUNCE + DEBOUNCE_TICK` after the write, within the 150 ms budget.
/// The debouncer refuses a tick longer than the debounce time.
const DEBOUNCE_TICK: Duration = DEBOUNCE;
/// How often roots are checked for appearing or vanishing.
const ROOT_CHECK: Duration = Duration::from_secs(1);
/// How often everything is rescanned regardless of events.
const RECONCILE: Duration = Duration::from_secs(300);
/// Poll interval of a polled root.
const POLL_INTERVAL: Duration = Duration::from_millis(500);
/// Environment variable that makes every root polled (for systems without
/// working native watches, and for tests of the fallback).
pub const ENV_FORCE_POLL: &str = "MEMD_FORCE_POLL";

/// What the indexer thread is asked to do.
pub enum Message {
    /// Debounced native events.
    Native(DebounceEventResult),
    /// Raw events from a polling watcher.
    Polled(notify::Result<notify::Event>),
    /// Rescan everything now and say how it went.
    Reload(Sender<ReindexReport>),
    /// Register a project (a repository path), load its roots, then answer.
    Register(PathBuf, Sender<()>),
    /// memd wrote this file (an added item): apply it now, then answer.
    Written(PathBuf, Sender<()>),
    /// Stop.
    Shutdown,
}

/// Whether an event only says a file was opened, or closed unwritten (a
/// close after writing is a change).
fn is_access(kind: &EventKind) -> bool {
    matches!(kind, EventKind::Access(access) if *access != AccessKind::Close(AccessMode::Write))
}

/// The indexer thread's own state.
struct Indexer {
    shared: Arc<Shared>,
    store: Arc<Store>,
    tx: Sender<Message>,
    native: Option<Debouncer<notify::RecommendedWatcher, RecommendedCache>>,
    pollers: Vec<(PathBuf, PollWatcher)>,
    force_poll: bool,
}

/// Starts the indexer thread after the start-up load; returns its sender.
pub fn spawn(
    shared: Arc<Shared>,
    store: Arc<Store>,
) -> (Sender<Message>, std::thread::JoinHandle<()>) {
    let (tx, rx) = mpsc::channel();
    let native_tx = tx.clone();
    let native = match new_debouncer(
        DEBOUNCE,
        Some(DEBOUNCE_TICK),
        move |res: DebounceEventResult| {
            let _ = native_tx.send(Message::Native(res));
        },
    ) {
        Ok(debouncer) => Some(debouncer),
        Err(err) => {
            tracing::warn!("native file watching is unavailable ({err}); polling instead");
            None
        }
    };
    let force_poll = std::env::var_os(ENV_FORCE_POLL).is_some_and(|v| !v.is_empty() && v != "0");
    let mut indexer = Indexer {
        shared,
        store,
        tx: tx.clone(),
        native,
        pollers: Vec::new(),
        force_poll,
    };
    let handle = std::thread::Builder::new()
        .name("memd-indexer".into())
        .spawn(move || {
            indexer.watch_roots();
            indexer.run(rx)
        })
        .expect("spawning the indexer thread");
    (tx, handle)
}

impl Indexer {
    fn run(&mut self, rx: Receiver<Message>) {
        let mut last_check = Instant::now();
        let mut last_reconcile = Instant::now();
        loop {
            match rx.recv_timeout(ROOT_CHECK) {
                Ok(Message::Native(Ok(events))) => {
                    // Opening and reading are not changes; and memd's own
                    // reads of a root would otherwise wake it up again,
                    // forever.
                    let events: Vec<_> = events
                        .into_iter()
                        .filter(|e| !is_access(&e.event.kind))
                        .collect();
                    let rescan = events.iter().any(|e| e.need_rescan());
                    let paths: BTreeSet<PathBuf> =
                        events.into_iter().flat_map(|e| e.event.paths).collect();
                    if rescan {
                        self.rescan("the watcher asked for a rescan", false);
                    } else if !paths.is_empty() {
                        self.apply_paths(paths);
                    }
                }
                Ok(Message::Native(Err(errors))) => {
                    for err in &errors {
                        tracing::warn!("file watching error: {err}");
                    }
                    self.rescan("file watching reported errors", false);
                }
                Ok(Message::Polled(Ok(event))) if is_access(&event.kind) => {}
                Ok(Message::Polled(Ok(event))) => {
                    if event.need_rescan() || matches!(event.kind, EventKind::Other) {
                        self.rescan("the poller asked for a rescan", false);
                    } else {
                        self.apply_paths(event.paths.into_iter().collect());
                    }
                }
                Ok(Message::Polled(Err(err))) => {
                    tracing::warn!("polling error: {err}");
                    self.rescan("polling reported an error", false);
                }
                Ok(Message::Reload(reply)) => {
                    let report = self.rescan("reload requested", true);
                    let _ = reply.send(report);
                }
                Ok(Message::Register(repo, reply)) => {
                    self.register(&repo);
                    let _ = reply.send(());
                }
                Ok(Message::Written(path, reply)) => {
                    // Its directory may be new (a project's first `.memd`).
                    self.watch_roots();
                    self.apply_paths(BTreeSet::from([path]));
                    let _ = reply.send(());
                }
                Ok(Message::Shutdown) | Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {}
            }
            if last_check.elapsed() >= ROOT_CHECK {
                last_check = Instant::now();
                self.watch_roots();
            }
            if last_reconcile.elapsed() >= RECONCILE {
                last_reconcile = Instant::now();
                self.rescan("periodic reconciliation", false);
            }
        }
        if let Some(debouncer) = self.native.take() {
            debouncer.stop();
        }
    }

    fn apply_paths(&mut self, paths: BTreeSet<PathBuf>) {
        tracing::debug!("applying events on {} paths", paths.len());
        // An event on a root itself (deleted, replaced, moved) means its
        // watch may be gone with the old directory: watch it afresh.
        let touched_roots: Vec<PathBuf> = {
            let k = self.shared.read();
            k.roots
                .iter()
                .filter(|r| paths.contains(&r.path))
                .map(|r| r.path.clone())
                .collect()
        };
        for root in touched_roots {
            self.rewatch(&root);
        }
        let mut pass = Pass::new();
        {
            let mut k = self.shared.write();
            for path in &paths {
                if k.root_of(path).is_some() {
                    indexer::sync_path(&mut k, path, &mut pass, false);
                }
            }
        }
        self.finish(pass);
        let teams: BTreeSet<PathBuf> = paths.iter().filter_map(|p| team::team_repo_of(p)).collect();
        for repo in teams {
            team::sync(&self.shared, &repo);
        }
    }

    /// Rescans every root; with `verify` (a reload), by content.
    fn rescan(&mut self, why: &str, verify: bool) -> ReindexReport {
        tracing::debug!("rescanning: {why}");
        let mut pass = Pass::new();
        {
            let mut k = self.shared.write();
            indexer::rescan(&mut k, &mut pass, verify);
        }
        let report = self.finish(pass);
        team::sync_all(&self.shared);
        report
    }

    fn finish(&mut self, pass: Pass) -> ReindexReport {
        let changed = pass.changed();
        let report = pass.finish(&self.store);
        if changed {
            tracing::info!(
                "reindexed: {} parsed, {} removed in {:.1} ms",
                report.parsed,
                report.removed,
                report.millis
            );
            let mut k = self.shared.write();
            k.last = Some(report.clone());
        }
        report
    }

    fn register(&mut self, repo: &Path) {
        let known = {
            let k = self.shared.read();
            k.roots.iter().any(|r| r.project.as_deref() == Some(repo))
        };
        if known {
            return;
        }
        if let Err(err) = self.store.add_project(repo) {
            tracing::warn!("cannot persist project {}: {err}", repo.display());
        }
        {
            let mut k = self.shared.write();
            for (path, project) in indexer::roots_for(&[], &[repo.to_path_buf()]) {
                k.add_root(path, project);
            }
        }
        tracing::info!("registered project {}", repo.display());
        self.watch_roots();
        let mut pass = Pass::new();
        {
            let mut k = self.shared.write();
            for sub in [".claude/memory", ".memd"] {
                indexer::sync_path(&mut k, &repo.join(sub), &mut pass, false);
            }
        }
        self.finish(pass);
        team::sync(&self.shared, repo);
    }

    /// Watches every root that exists and is not watched (or was replaced:
    /// a root deleted and recreated is a new directory, and the old watch
    /// went with the old one); forgets the watch of a root that vanished.
    /// Either way the root is synced.
    fn watch_roots(&mut self) {
        let roots: Vec<(PathBuf, WatchMode, Option<u64>)> = {
            let k = self.shared.read();
            k.roots
                .iter()
                .map(|r| (r.path.clone(), r.watch, r.ino))
                .collect()
        };
        for (path, mode, ino) in roots {
            let now_ino = std::fs::metadata(&path)
                .ok()
                .filter(|m| m.is_dir())
                .map(|m| m.ino());
            let stale = match (now_ino, mode) {
                (Some(_), WatchMode::None) => true,
                (Some(current), _) => Some(current) != ino,
                (None, WatchMode::Native | WatchMode::Polling) => true,
                (None, WatchMode::None) => false,
            };
            if stale {
                self.rewatch(&path);
            }
        }
    }

    /// Drops a root's watch and watches it again if it exists, then syncs it.
    fn rewatch(&mut self, path: &Path) {
        self.unwatch(path);
        let now_ino = std::fs::metadata(path)
            .ok()
            .filter(|m| m.is_dir())
            .map(|m| m.ino());
        let mode = if now_ino.is_some() {
            self.watch(path)
        } else {
            WatchMode::None
        };
        {
            let mut k = self.shared.write();
            if let Some(root) = k.roots.iter_mut().find(|r| r.path == path) {
                root.watch = mode;
                root.ino = now_ino;
            }
        }
        let mut pass = Pass::new();
        {
            let mut k = self.shared.write();
            indexer::sync_path(&mut k, path, &mut pass, false);
        }
        self.finish(pass);
    }

    fn watch(&mut self, path: &Path) -> WatchMode {
        if !self.force_poll {
            if let Some(debouncer) = self.native.as_mut() {
                match debouncer.watch(path, RecursiveMode::Recursive) {
                    Ok(()) => return WatchMode::Native,
                    Err(err) => {
                        let _ = debouncer.unwatch(path);
                        tracing::warn!(
                            "cannot watch {} natively ({err}); polling it",
                            path.display()
                        );
                    }
                }
            }
        }
        let tx = self.tx.clone();
        // Polling compares modification times in whole seconds; contents
        // are compared too so that two saves within a second are seen.
        let config = notify::Config::default()
            .with_poll_interval(POLL_INTERVAL)
            .with_compare_contents(true);
        let poller = PollWatcher::new(
            move |res| {
                let _ = tx.send(Message::Polled(res));
            },
            config,
        );
        match poller {
            Ok(mut poller) => match poller.watch(path, RecursiveMode::Recursive) {
                Ok(()) => {
                    self.pollers.push((path.to_path_buf(), poller));
                    WatchMode::Polling
                }
                Err(err) => {
                    tracing::error!("cannot watch {} at all: {err}", path.display());
                    WatchMode::None
                }
            },
            Err(err) => {
                tracing::error!("cannot create a polling watcher: {err}");
                WatchMode::None
            }
        }
    }

    fn unwatch(&mut self, path: &Path) {
        if let Some(debouncer) = self.native.as_mut() {
            let _ = debouncer.unwatch(path);
        }
        self.pollers.retain(|(p, _)| p != path);
    }
}
