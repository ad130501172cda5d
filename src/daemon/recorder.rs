//! The recorder thread: what queries showed, applied to learned state and
//! written to the store in batches, off the query path and apart from the
//! indexer (so a save is never queued behind audit writes). The queue is
//! bounded; whatever is queued is applied in one write lock and one commit,
//! so it keeps up with any query rate, and it stops as soon as it is told.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::Arc;

use crate::store::{LearnedWrite, SessionAudit, Store};

use super::state::Shared;

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
    dropped: Arc<AtomicU64>,
}

impl Recorder {
    /// Queues a record; when the queue is full it is dropped and counted.
    pub fn record(&self, shown: Shown) {
        match self.tx.try_send(Message::Shown(shown)) {
            Ok(()) | Err(TrySendError::Disconnected(_)) => {}
            Err(TrySendError::Full(_)) => {
                let n = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
                if n.is_power_of_two() {
                    tracing::warn!("the recorder is behind: {n} query records dropped so far");
                }
            }
        }
    }

    /// Records dropped because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Asks the thread to write what is queued and stop.
    pub fn stop(&self) {
        let _ = self.tx.send(Message::Stop);
    }
}

/// Starts the recorder thread.
pub fn spawn(shared: Arc<Shared>, store: Arc<Store>) -> (Recorder, std::thread::JoinHandle<()>) {
    let (tx, rx) = mpsc::sync_channel(QUEUE_CAP);
    let handle = std::thread::Builder::new()
        .name("memd-recorder".into())
        .spawn(move || run(&shared, &store, rx))
        .expect("spawning the recorder thread");
    let recorder = Recorder {
        tx,
        dropped: Arc::new(AtomicU64::new(0)),
    };
    (recorder, handle)
}

fn run(shared: &Shared, store: &Store, rx: Receiver<Message>) {
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
        record(shared, store, batch);
        if stop {
            break;
        }
    }
}

/// Records what queries showed their sessions, in one write lock and one
/// commit: counts new sessions in their contexts (the tags' session
/// clocks), counts lessons shown to a session for the match-count auto-pin,
/// and ages the evidence that held lessons back from a session's prompt.
pub fn record(shared: &Shared, store: &Store, batch: Vec<Shown>) {
    if batch.is_empty() {
        return;
    }
    let mut k = shared.write();
    // The audits as they are now, written under the sessions' lock like
    // every other audit write: a later change (an evaluation, a session
    // end) can never be overwritten in the store by an older one.
    let sessions = shared.sessions();
    let mut audits: BTreeMap<String, SessionAudit> = BTreeMap::new();
    let mut contexts = BTreeMap::new();
    let mut aged = Vec::new();
    let mut counts = Vec::new();
    let mut pinned = BTreeMap::new();
    for shown in batch {
        let Shown {
            session,
            new_session,
            lessons,
            held_back,
            tags,
        } = shown;
        let session = session.and_then(|id| sessions.get(&id).cloned().map(|a| (id, a)));
        let owns: Vec<Vec<String>> = held_back.iter().map(|l| k.engine.own_tags(l)).collect();
        let learned = k.engine.learned_mut();
        if new_session {
            let (context, n) = learned.observe_session(&tags);
            contexts.insert(context, n);
        }
        let Some((id, audit)) = session else { continue };
        audits.insert(id, audit);
        for (lesson, own) in held_back.iter().zip(&owns) {
            for (tag, score) in learned.hold_back(lesson, own, &tags) {
                aged.push((lesson.clone(), tag, score));
            }
        }
        for lesson in &lessons {
            let (key, count, pin) = learned.shown(lesson, &tags);
            counts.push((lesson.clone(), key, count));
            if let Some(scope) = pin {
                tracing::info!(
                    "{lesson}: auto-pinned after {count} matches for [{}]",
                    scope.join(", ")
                );
                pinned.insert(lesson.clone(), learned.pins_of(lesson).to_vec());
            }
        }
    }
    let write = LearnedWrite {
        tag_scores: aged
            .iter()
            .map(|(l, t, s)| (l.as_str(), t.as_str(), *s))
            .collect(),
        matches: counts
            .iter()
            .map(|(l, s, c)| (l.as_str(), s.as_str(), *c))
            .collect(),
        pins: pinned
            .iter()
            .map(|(l, p)| (l.as_str(), p.as_slice()))
            .collect(),
        sessions: audits.iter().map(|(id, a)| (id.as_str(), a)).collect(),
        contexts: contexts.iter().map(|(c, n)| (c.as_str(), *n)).collect(),
        ..LearnedWrite::default()
    };
    if let Err(err) = store.write_learned(&write) {
        tracing::warn!("could not record session audits: {err}");
    }
}
