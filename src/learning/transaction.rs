//! The one way a change to the learned state is committed.
//!
//! A [`Transaction`] holds the live [`Learned`] while a change is made. Each
//! transition goes through it ([`Transaction::item`] before an item's
//! evidence, pins, match counts or applications change,
//! [`Transaction::observe_session`] for a session seen), and it first keeps
//! what it touches as it was. [`Transaction::stage`] makes the change live
//! and lets go of the state: what differs from before, with the journal
//! entries and session audits given, is then written in one store
//! transaction ([`Staged::write`]), while queries go on reading the state
//! (a write waits for the disk: a query never waits for it). If the write
//! fails, everything is put back ([`Staged::undo`]); the daemon stages a
//! change and writes it under one writer's lock (`Shared::writer`), so
//! changes reach the store in the order they were made live, and memory
//! holds what the store does not only while its write is under way. The
//! caller answers only once the change is written.
//! [`Transaction::commit`] does both at once, the state borrowed
//! throughout.

use std::collections::BTreeMap;

use super::audit::SessionAudit;
use super::state::{Applications, HashMap, Judgement, Key, Learned, Pin};
use super::tag_relevance::TagScore;
use crate::store::LearnedWrite;

/// An item's learned records as they were before the transaction.
struct ItemBefore {
    tag_relevance: Option<HashMap<Key, TagScore>>,
    pins: Option<Vec<Pin>>,
    matches: Option<HashMap<String, u32>>,
    applications: Option<Applications>,
}

impl ItemBefore {
    fn of(learned: &Learned, item: &str) -> Self {
        ItemBefore {
            tag_relevance: learned.tag_relevance().get(item).cloned(),
            pins: learned.pins().get(item).cloned(),
            matches: learned.matches.get(item).cloned(),
            applications: learned.applications.get(item).cloned(),
        }
    }

    fn restore(self, learned: &mut Learned, item: &str) {
        fn put<V>(map: &mut HashMap<String, V>, item: &str, value: Option<V>) {
            match value {
                Some(v) => map.insert(item.to_string(), v),
                None => map.remove(item),
            };
        }
        learned.set_scores(item, self.tag_relevance);
        learned.set_pins(item, self.pins);
        put(&mut learned.matches, item, self.matches);
        put(&mut learned.applications, item, self.applications);
    }
}

/// A change to the learned state, made on it and undone unless committed.
pub struct Transaction<'l> {
    learned: &'l mut Learned,
    /// Each touched item as it was, by id (in order, so writes are too).
    items: BTreeMap<String, ItemBefore>,
    /// The sessions seen before the transaction, per context it touched.
    contexts: BTreeMap<String, Option<u64>>,
    journal: Vec<(String, Option<u64>, Judgement)>,
    journal_removed: Vec<(String, u64)>,
    sessions: Vec<(String, SessionAudit)>,
    committed: bool,
}

impl<'l> Transaction<'l> {
    /// A change to `learned`, nothing changed yet.
    pub fn new(learned: &'l mut Learned) -> Self {
        Transaction {
            learned,
            items: BTreeMap::new(),
            contexts: BTreeMap::new(),
            journal: Vec::new(),
            journal_removed: Vec::new(),
            sessions: Vec::new(),
            committed: false,
        }
    }

    /// The state as changed so far, to read.
    pub fn learned(&self) -> &Learned {
        self.learned
    }

    /// The state, to change `item`'s records (its per-tag scores, pins,
    /// match counts and applications); they are kept as they were first.
    /// Only `item`'s records may change through it.
    pub fn item(&mut self, item: &str) -> &mut Learned {
        if !self.items.contains_key(item) {
            let before = ItemBefore::of(self.learned, item);
            self.items.insert(item.to_string(), before);
        }
        self.learned
    }

    /// A session seen in the context of `tags`
    /// ([`Learned::observe_session`]): the context's key and its sessions.
    pub fn observe_session(&mut self, tags: &[String]) -> (String, u64) {
        let key = super::state::context_key(tags);
        if !self.contexts.contains_key(&key) {
            let before = self.learned.context_sessions(&key);
            self.contexts.insert(key, before);
        }
        self.learned.observe_session(tags)
    }

    /// Journals `judgement` of `item` at `at` (`None`: after every other).
    pub fn journal(&mut self, item: &str, at: Option<u64>, judgement: Judgement) {
        self.journal.push((item.to_string(), at, judgement));
    }

    /// Drops `item`'s journal entry `seq`.
    pub fn drop_journal(&mut self, item: &str, seq: u64) {
        self.journal_removed.push((item.to_string(), seq));
    }

    /// Writes `audit` as session `id`'s.
    pub fn session(&mut self, id: &str, audit: SessionAudit) {
        self.sessions.push((id.to_string(), audit));
    }

    /// Writes what changed with `write` (the store's, in one transaction);
    /// if it fails, the state is as it was before the transaction. The
    /// state stays borrowed throughout: where it is behind a lock queries
    /// read, [`Transaction::stage`] lets the lock go before the write.
    pub fn commit<E>(
        mut self,
        write: impl FnOnce(&LearnedWrite<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let staged = self.make_live();
        staged.write_or_undo(write, || &mut *self.learned)
    }

    /// Makes the change live and hands over what the store is to write
    /// and how to undo it: the state is no longer borrowed, so its lock
    /// can be let go while the store writes ([`Staged`]).
    pub fn stage(mut self) -> Staged {
        self.make_live()
    }

    fn make_live(&mut self) -> Staged {
        let changes = Changes::of(self);
        for (item, before) in &self.items {
            self.learned
                .recount_item(item, before.tag_relevance.as_ref());
        }
        self.committed = true;
        Staged {
            changes,
            items: std::mem::take(&mut self.items),
            contexts: std::mem::take(&mut self.contexts),
            journal: std::mem::take(&mut self.journal),
            journal_removed: std::mem::take(&mut self.journal_removed),
            sessions: std::mem::take(&mut self.sessions),
        }
    }
}

impl Drop for Transaction<'_> {
    /// Not committed: everything it touched is put back.
    fn drop(&mut self) {
        if self.committed {
            return;
        }
        for (item, before) in std::mem::take(&mut self.items) {
            before.restore(self.learned, &item);
        }
        for (key, before) in std::mem::take(&mut self.contexts) {
            self.learned.restore_context(key, before);
        }
    }
}

/// A change made live whose write to the store is still to come
/// ([`Transaction::stage`]): what the store is to write
/// ([`Staged::write`]), and what the state was before it, to put back if
/// that write fails ([`Staged::undo`]). It borrows nothing, so queries
/// read the state while the store writes; whoever stages a change holds
/// the store's writer until its write is done, so that no other change is
/// made live in between and an undo puts back exactly this one.
#[must_use = "a staged change is written to the store, or undone"]
pub struct Staged {
    changes: Changes,
    items: BTreeMap<String, ItemBefore>,
    contexts: BTreeMap<String, Option<u64>>,
    journal: Vec<(String, Option<u64>, Judgement)>,
    journal_removed: Vec<(String, u64)>,
    sessions: Vec<(String, SessionAudit)>,
}

impl Staged {
    /// What the store is to write, in one transaction.
    pub fn write(&self) -> LearnedWrite<'_> {
        self.changes.as_write(self)
    }

    /// Writes the change with `write` (the store's); if that fails, puts
    /// it back in the state `learned` gives ([`Staged::undo`]).
    pub fn write_or_undo<E, L: std::ops::DerefMut<Target = Learned>>(
        self,
        write: impl FnOnce(&LearnedWrite<'_>) -> Result<(), E>,
        learned: impl FnOnce() -> L,
    ) -> Result<(), E> {
        let result = write(&self.write());
        if result.is_err() {
            self.undo(&mut learned());
        }
        result
    }

    /// Puts back what the change touched in `learned` (as the change left
    /// it): its write failed.
    pub fn undo(self, learned: &mut Learned) {
        for (item, before) in self.items {
            let now = learned.tag_relevance().get(item.as_str()).cloned();
            before.restore(learned, &item);
            learned.recount_item(&item, now.as_ref());
        }
        for (key, before) in self.contexts {
            learned.restore_context(key, before);
        }
    }
}

/// What differs from the state before the transaction, owned so the
/// store's write can borrow it.
#[derive(Default)]
struct Changes {
    tag_scores: Vec<(String, String, TagScore)>,
    tag_scores_removed: Vec<(String, String)>,
    pins: Vec<(String, Vec<Pin>)>,
    matches: Vec<(String, String, u32)>,
    applications: Vec<(String, Applications)>,
    contexts: Vec<(String, u64)>,
}

impl Changes {
    fn of(tx: &Transaction<'_>) -> Self {
        let learned = &*tx.learned;
        let mut out = Changes::default();
        let empty_scores = HashMap::default();
        let empty_counts = HashMap::default();
        for (item, before) in &tx.items {
            let now = learned
                .tag_relevance()
                .get(item.as_str())
                .unwrap_or(&empty_scores);
            let was = before.tag_relevance.as_ref().unwrap_or(&empty_scores);
            let mut changed: Vec<(&Key, &TagScore)> =
                now.iter().filter(|&(t, s)| was.get(t) != Some(s)).collect();
            changed.sort_by(|a, b| a.0.cmp(b.0));
            out.tag_scores.extend(
                changed
                    .into_iter()
                    .map(|(t, s)| (item.clone(), t.to_string(), *s)),
            );
            let mut gone: Vec<&Key> = was.keys().filter(|t| !now.contains_key(*t)).collect();
            gone.sort();
            out.tag_scores_removed
                .extend(gone.into_iter().map(|t| (item.clone(), t.to_string())));
            let pins = learned
                .pins()
                .get(item.as_str())
                .map_or(&[][..], Vec::as_slice);
            if pins != before.pins.as_deref().unwrap_or(&[]) {
                out.pins.push((item.clone(), pins.to_vec()));
            }
            let now = learned.matches.get(item).unwrap_or(&empty_counts);
            let was = before.matches.as_ref().unwrap_or(&empty_counts);
            let mut counts: Vec<(&String, &u32)> =
                now.iter().filter(|&(c, n)| was.get(c) != Some(n)).collect();
            counts.sort();
            out.matches.extend(
                counts
                    .into_iter()
                    .map(|(c, n)| (item.clone(), c.clone(), *n)),
            );
            let applications = learned.applications.get(item);
            if applications != before.applications.as_ref() {
                if let Some(a) = applications {
                    out.applications.push((item.clone(), a.clone()));
                }
            }
        }
        for (key, before) in &tx.contexts {
            let now = learned.context_sessions(key);
            if now != *before {
                if let Some(n) = now {
                    out.contexts.push((key.clone(), n));
                }
            }
        }
        out
    }

    fn as_write<'a>(&'a self, tx: &'a Staged) -> LearnedWrite<'a> {
        LearnedWrite {
            tag_scores: self
                .tag_scores
                .iter()
                .map(|(i, t, s)| (i.as_str(), t.as_str(), *s))
                .collect(),
            tag_scores_removed: self
                .tag_scores_removed
                .iter()
                .map(|(i, t)| (i.as_str(), t.as_str()))
                .collect(),
            applications: self
                .applications
                .iter()
                .map(|(i, a)| (i.as_str(), a))
                .collect(),
            pins: self
                .pins
                .iter()
                .map(|(i, p)| (i.as_str(), p.as_slice()))
                .collect(),
            matches: self
                .matches
                .iter()
                .map(|(i, c, n)| (i.as_str(), c.as_str(), *n))
                .collect(),
            contexts: self
                .contexts
                .iter()
                .map(|(c, n)| (c.as_str(), *n))
                .collect(),
            sessions: tx.sessions.iter().map(|(id, a)| (id.as_str(), a)).collect(),
            sessions_removed: Vec::new(),
            journal_removed: tx
                .journal_removed
                .iter()
                .map(|(i, seq)| (i.as_str(), *seq))
                .collect(),
            journal: tx
                .journal
                .iter()
                .map(|(i, at, j)| (i.as_str(), *at, j))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learning::state::{Application, Match};
    use crate::learning::tag_relevance::EVALUATOR_WEIGHT;

    fn tags(list: &[&str]) -> Vec<String> {
        list.iter().map(|t| t.to_string()).collect()
    }

    /// State with one context seen and one verdict, as a daemon has it.
    fn learned() -> Learned {
        let mut learned = Learned::default();
        let mut tx = Transaction::new(&mut learned);
        tx.observe_session(&tags(&["python"]));
        tx.item("L-1").judge(
            "L-1",
            &[],
            &tags(&["python"]),
            Match::Strong,
            1.0,
            EVALUATOR_WEIGHT,
        );
        tx.commit(|_| Ok::<(), ()>(())).unwrap();
        learned
    }

    /// A change: a new context, a verdict on a judged item and on a new
    /// one, a showing, an application. Returns the scores the verdicts
    /// updated, as (item, tag).
    fn change(tx: &mut Transaction<'_>) -> Vec<(String, String)> {
        let here = tags(&["python", "django"]);
        tx.observe_session(&here);
        let mut updated = Vec::new();
        for item in ["L-1", "L-2"] {
            let (scores, _) =
                tx.item(item)
                    .judge(item, &[], &here, Match::Strong, -1.0, EVALUATOR_WEIGHT);
            updated.extend(scores.into_iter().map(|(t, _)| (item.to_string(), t)));
        }
        tx.item("L-3").shown("L-3", &here);
        let learned = tx.item("L-4");
        let mut applications = learned.applications("L-4");
        applications.record(Application {
            task_id: None,
            applied_at: 1_700_000_000,
            applied: true,
            helpful: Some(true),
            effectiveness_score: Some(0.5),
            feedback: None,
        });
        learned.applications.insert("L-4".into(), applications);
        updated.sort();
        updated
    }

    #[test]
    fn a_failed_write_puts_everything_back() {
        let mut learned = learned();
        let before = learned.clone();
        let mut tx = Transaction::new(&mut learned);
        change(&mut tx);
        assert_ne!(tx.learned().tag_relevance(), before.tag_relevance());
        assert_eq!(tx.commit(|_| Err("disk full")), Err("disk full"));
        assert_eq!(learned.tag_relevance(), before.tag_relevance());
        assert_eq!(learned.pins(), before.pins());
        assert_eq!(learned.matches, before.matches);
        assert_eq!(learned.applications, before.applications);
        for key in ["python", "django,python"] {
            assert_eq!(
                learned.context_sessions(key),
                before.context_sessions(key),
                "{key}"
            );
        }
        for tag in ["python", "django"] {
            assert_eq!(learned.weight(tag), before.weight(tag), "{tag}");
            assert_eq!(learned.seen_tag(tag), before.seen_tag(tag), "{tag}");
        }
        assert_eq!(learned.agreement(), before.agreement());
    }

    #[test]
    fn a_staged_change_is_live_before_its_write_and_undone_whole() {
        let mut learned = learned();
        let before = learned.clone();
        let staged = {
            let mut tx = Transaction::new(&mut learned);
            change(&mut tx);
            tx.stage()
        };
        // The state is free to read while the store writes, and changed.
        assert_ne!(learned.tag_relevance(), before.tag_relevance());
        assert_eq!(learned.context_sessions("django,python"), Some(1));
        let mut recounted = learned.clone();
        recounted.recount_agreement();
        assert_eq!(learned.agreement(), recounted.agreement());
        assert_eq!(staged.write().contexts, [("django,python", 1)]);
        staged.undo(&mut learned);
        assert_eq!(learned.tag_relevance(), before.tag_relevance());
        assert_eq!(learned.matches, before.matches);
        assert_eq!(learned.applications, before.applications);
        assert_eq!(learned.context_sessions("django,python"), None);
        assert_eq!(learned.agreement(), before.agreement());
    }

    #[test]
    fn a_commit_counts_the_judges_agreement_as_a_recount_does() {
        let mut learned = learned();
        let here = tags(&["python", "django"]);
        for (n, raw) in [1.0, -1.0, 1.0, 1.0, -1.0].into_iter().enumerate() {
            let mut tx = Transaction::new(&mut learned);
            for item in ["L-1", "L-2"] {
                let raw = if item == "L-2" && n % 2 == 0 {
                    -raw
                } else {
                    raw
                };
                tx.item(item)
                    .judge(item, &[], &here, Match::Strong, raw, EVALUATOR_WEIGHT);
            }
            tx.commit(|_| Ok::<(), ()>(())).unwrap();
        }
        let mut recounted = learned.clone();
        recounted.recount_agreement();
        // L-1: one verdict in `python` (no pairs), five in `django,python`
        // (3 relevant, 2 not: 20 pairs, 12 disagreeing); L-2 likewise.
        assert_eq!(learned.agreement().pairs, 40);
        assert_eq!(learned.agreement().disagreeing, 24);
        assert_eq!(learned.agreement(), recounted.agreement());
    }

    #[test]
    fn the_write_holds_exactly_what_changed() {
        let mut learned = learned();
        let before = learned.clone();
        let mut tx = Transaction::new(&mut learned);
        let updated = change(&mut tx);
        let judgement = Judgement {
            session: Some("s-1".into()),
            tags: tags(&["python"]),
            raw: -1.0,
            weight: EVALUATOR_WEIGHT,
        };
        tx.journal("L-1", None, judgement.clone());
        tx.session("s-1", SessionAudit::default());
        tx.commit(|write| {
            // The scores the verdicts updated, each once.
            let scores: Vec<(String, String)> = write
                .tag_scores
                .iter()
                .map(|(i, t, _)| (i.to_string(), t.to_string()))
                .collect();
            assert_eq!(scores, updated);
            assert!(scores.contains(&("L-2".into(), "django".into())));
            assert!(write.tag_scores_removed.is_empty());
            assert_eq!(write.matches, [("L-3", "django,python", 1)]);
            assert_eq!(write.applications.len(), 1);
            assert_eq!(write.applications[0].0, "L-4");
            assert_eq!(write.contexts, [("django,python", 1)]);
            assert_eq!(write.journal, [("L-1", None, &judgement)]);
            assert_eq!(write.sessions.len(), 1);
            Ok::<(), ()>(())
        })
        .unwrap();
        // Committed: the change stays.
        assert_ne!(learned.tag_relevance(), before.tag_relevance());
        assert_eq!(learned.context_sessions("django,python"), Some(1));
    }
}
