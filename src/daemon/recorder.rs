//! The recorder thread: what queries showed, applied to learned state and
//! written to the store in batches, off the query path and apart from the
//! indexer (so a save is never queued behind audit writes). A query hands
//! its showing over once its reply is written (`super::handler::Deferred`),
//! so waking this thread never delays an answer; `memctl status` shows how
//! many showings wait ([`Recorder::status`]). The queue is
//! bounded; whatever is queued is applied under one lock of what was
//! learned and in one commit, so it keeps up with any query rate, and it
//! stops as soon as it is told. The commit is written after that lock is
//! let go ([`crate::learning::Staged`]): a query never waits for the disk.
//! It also forgets old session audits ([`expired`]), at start, then once a
//! minute while queries come, or as soon as a tenth more than the maximum
//! are held.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::learning::{SessionAudit, Transaction};
use crate::store::{LearnedWrite, Store};

use super::state::Shared;
use crate::protocol::RecorderStatus;

/// How many records may wait; beyond, new ones are dropped (counted and
/// logged), never waited for. At thousands of queries a second the
/// recorder empties the queue in one commit, so only a stalled disk fills
/// it.
pub const QUEUE_CAP: usize = 8192;

/// What a query showed, to record.
#[derive(Debug)]
pub struct Shown {
    /// The session whose audit to persist (as it is when written).
    pub session: Option<String>,
    /// Whether this was the session's first query (its context's session
    /// clock ticks).
    pub new_session: bool,
    /// The lessons shown (for the match-count auto-pin).
    pub lessons: Vec<String>,
    /// The lessons learned evidence held back though they matched the
    /// prompt well (their evidence ages).
    pub held_back: Vec<String>,
    /// The query's tags.
    pub tags: Vec<String>,
}

enum Message {
    Shown(Shown),
    Stop,
}

/// The sending side, held by the request handler.
#[derive(Clone)]
pub struct Recorder {
    tx: SyncSender<Message>,
    counts: Arc<Counts>,
}

/// Records handed over, applied and dropped, since the daemon started.
#[derive(Default)]
struct Counts {
    queued: AtomicU64,
    recorded: AtomicU64,
    dropped: AtomicU64,
}

impl Recorder {
    /// Queues a record; when the queue is full it is dropped and counted.
    pub fn record(&self, shown: Shown) {
        self.expect();
        self.send(shown);
    }

    /// Counts a record that will be sent ([`Recorder::send`]) as waiting
    /// from now on: a query counts its showing before its reply, and hands
    /// it over after (`super::handler::Deferred`), so that a client that
    /// has its reply never sees nothing waiting before it is recorded.
    pub fn expect(&self) {
        self.counts.queued.fetch_add(1, Ordering::SeqCst);
    }

    /// Queues a record counted by [`Recorder::expect`]; when the queue is
    /// full it is dropped and counted.
    pub fn send(&self, shown: Shown) {
        match self.tx.try_send(Message::Shown(shown)) {
            Ok(()) => {}
            Err(TrySendError::Disconnected(_)) => {
                self.counts.queued.fetch_sub(1, Ordering::SeqCst);
            }
            Err(TrySendError::Full(_)) => {
                self.counts.queued.fetch_sub(1, Ordering::SeqCst);
                let n = self.counts.dropped.fetch_add(1, Ordering::Relaxed) + 1;
                if n.is_power_of_two() {
                    tracing::warn!("the recorder is behind: {n} query records dropped so far");
                }
            }
        }
    }

    /// Its backlog: what waits to be applied, what was, what was dropped.
    pub fn status(&self) -> RecorderStatus {
        let recorded = self.counts.recorded.load(Ordering::SeqCst);
        RecorderStatus {
            waiting: self
                .counts
                .queued
                .load(Ordering::SeqCst)
                .saturating_sub(recorded),
            recorded,
            dropped: self.counts.dropped.load(Ordering::Relaxed),
        }
    }

    /// Asks the thread to write what is queued and stop.
    pub fn stop(&self) {
        let _ = self.tx.send(Message::Stop);
    }
}

/// How long session audits are kept, and how many.
#[derive(Debug, Clone, Copy)]
pub struct Retention {
    /// Audits untouched for longer are forgotten.
    pub max_age_secs: i64,
    /// At most this many are kept.
    pub max_sessions: usize,
}

/// How often audits are checked for expiry while queries come.
const EXPIRY_EVERY: Duration = Duration::from_secs(60);

/// The sessions to forget at `now`: every one untouched for longer than
/// the retention's age, then, while more than its maximum remain, the
/// least recently touched, those evaluated since they last changed before
/// those still waiting for an evaluation.
pub fn expired(
    sessions: &HashMap<String, SessionAudit>,
    now: i64,
    retention: Retention,
) -> Vec<String> {
    let cutoff = now - retention.max_age_secs;
    let (mut gone, mut kept): (Vec<_>, Vec<_>) = sessions
        .iter()
        .partition(|(_, audit)| audit.updated_at < cutoff);
    if kept.len() > retention.max_sessions {
        kept.sort_by_key(|(id, audit)| (!audit.processed, audit.updated_at, id.as_str()));
        let excess = kept.len() - retention.max_sessions;
        gone.extend(kept.drain(..excess));
    }
    gone.into_iter().map(|(id, _)| id.clone()).collect()
}

/// Forgets expired session audits, in the store, then in memory (those a
/// query has not touched meanwhile).
pub fn expire(shared: &Shared, store: &Store, retention: Retention) {
    let writer = shared.writer();
    let gone: Vec<(String, i64)> = {
        let sessions = shared.sessions();
        expired(&sessions, crate::time::now(), retention)
            .into_iter()
            .map(|id| {
                let touched = sessions.get(&id).map_or(0, |a| a.updated_at);
                (id, touched)
            })
            .collect()
    };
    if gone.is_empty() {
        return;
    }
    let write = LearnedWrite {
        sessions_removed: gone.iter().map(|(id, _)| id.as_str()).collect(),
        ..LearnedWrite::default()
    };
    if let Err(err) = store.write_learned(&write) {
        tracing::warn!("could not forget old session audits: {err}");
        return;
    }
    let mut sessions = shared.sessions();
    for (id, touched) in &gone {
        // Touched while the store wrote: the recorder writes it again.
        if sessions.get(id).is_some_and(|a| a.updated_at == *touched) {
            sessions.remove(id);
        }
    }
    drop(sessions);
    drop(writer);
    tracing::info!("forgot {} old session audits", gone.len());
}

/// Starts the recorder thread; it first forgets expired audits.
pub fn spawn(
    shared: Arc<Shared>,
    store: Arc<Store>,
    retention: Retention,
) -> (Recorder, std::thread::JoinHandle<()>) {
    let (tx, rx) = mpsc::sync_channel(QUEUE_CAP);
    let counts = Arc::new(Counts::default());
    let handle = std::thread::Builder::new()
        .name("memd-recorder".into())
        .spawn({
            let counts = Arc::clone(&counts);
            move || {
                expire(&shared, &store, retention);
                run(&shared, &store, rx, retention, &counts)
            }
        })
        .expect("spawning the recorder thread");
    let recorder = Recorder { tx, counts };
    (recorder, handle)
}

fn run(
    shared: &Shared,
    store: &Store,
    rx: Receiver<Message>,
    retention: Retention,
    counts: &Counts,
) {
    let mut last_expiry = Instant::now();
    while let Ok(first) = rx.recv() {
        let mut batch = Vec::new();
        let mut stop = false;
        for message in std::iter::once(first).chain(std::iter::from_fn(|| rx.try_recv().ok())) {
            match message {
                Message::Shown(shown) => batch.push(shown),
                Message::Stop => stop = true,
            }
            if batch.len() >= QUEUE_CAP {
                break;
            }
        }
        let n = batch.len() as u64;
        record(shared, store, batch);
        counts.recorded.fetch_add(n, Ordering::SeqCst);
        if stop {
            break;
        }
        // Once a minute, or as soon as a tenth more than the maximum of
        // sessions are held (a flood of new sessions).
        let crowded =
            shared.sessions().len() > retention.max_sessions + retention.max_sessions / 10;
        if crowded || last_expiry.elapsed() >= EXPIRY_EVERY {
            last_expiry = Instant::now();
            expire(shared, store, retention);
        }
    }
}

/// Records what queries showed their sessions, in one change and one
/// commit: counts new sessions in their contexts (the tags' session
/// clocks), counts lessons shown to a session for the match-count auto-pin,
/// and ages the evidence that held lessons back from a session's prompt.
/// Queries go on while the store writes: only the store's writer is held
/// then.
pub fn record(shared: &Shared, store: &Store, batch: Vec<Shown>) {
    if batch.is_empty() {
        return;
    }
    let writer = shared.writer();
    let owns: Vec<Vec<Vec<String>>> = {
        let k = shared.read();
        batch
            .iter()
            .map(|shown| {
                shown
                    .held_back
                    .iter()
                    .map(|l| k.engine.own_tags(l))
                    .collect()
            })
            .collect()
    };
    // The audits as they are now, read under the store's writer as every
    // audit written is: a later change (a query's, an evaluation's, a
    // session's end) is written after this, never overwritten by it.
    let audits: BTreeMap<String, SessionAudit> = {
        let sessions = shared.sessions();
        batch
            .iter()
            .filter_map(|shown| shown.session.as_ref())
            .filter_map(|id| sessions.get(id).map(|a| (id.clone(), a.clone())))
            .collect()
    };
    let staged = {
        let mut learned = shared.learned_mut();
        let mut tx = Transaction::new(&mut learned);
        for (shown, owns) in batch.into_iter().zip(owns) {
            let Shown {
                session,
                new_session,
                lessons,
                held_back,
                tags,
            } = shown;
            if new_session {
                tx.observe_session(&tags);
            }
            if !session.is_some_and(|id| audits.contains_key(&id)) {
                continue;
            }
            for (lesson, own) in held_back.iter().zip(&owns) {
                tx.item(lesson).hold_back(lesson, own, &tags);
            }
            for lesson in &lessons {
                let (_, count, pin) = tx.item(lesson).shown(lesson, &tags);
                if let Some(scope) = pin {
                    tracing::info!(
                        "{lesson}: auto-pinned after {count} matches for [{}]",
                        scope.join(", ")
                    );
                }
            }
        }
        for (id, audit) in audits {
            tx.session(&id, audit);
        }
        tx.stage()
    };
    if let Err(err) = shared.write_staged(&writer, staged, |write| store.write_learned(write)) {
        tracing::warn!("could not record session audits: {err}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn audit(updated_at: i64, processed: bool) -> SessionAudit {
        SessionAudit {
            updated_at,
            processed,
            ..SessionAudit::default()
        }
    }

    #[test]
    fn old_sessions_go_then_the_oldest_evaluated_ones() {
        let sessions: HashMap<String, SessionAudit> = [
            ("ancient", audit(10, false)),
            ("old-evaluated", audit(500, true)),
            ("old-pending", audit(400, false)),
            ("new-evaluated", audit(900, true)),
            ("new-pending", audit(950, false)),
        ]
        .into_iter()
        .map(|(id, a)| (id.to_string(), a))
        .collect();
        let retention = |max_sessions| Retention {
            max_age_secs: 800,
            max_sessions,
        };
        let mut gone = expired(&sessions, 1000, retention(10));
        gone.sort();
        assert_eq!(gone, ["ancient"]);
        let mut gone = expired(&sessions, 1000, retention(2));
        gone.sort();
        assert_eq!(gone, ["ancient", "new-evaluated", "old-evaluated"]);
        let mut gone = expired(&sessions, 1000, retention(1));
        gone.sort();
        assert_eq!(
            gone,
            ["ancient", "new-evaluated", "old-evaluated", "old-pending"]
        );
    }
}
