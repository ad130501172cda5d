//! The names an item's evidence is kept under, beside the tags of the
//! contexts it was judged in: its weak-match evidence (`~tag`, [`Match`]),
//! `!tag` where one of its own tags was absent, `*` across every context,
//! and `@context`, a context's own record. No workspace tag can be one of
//! them ([`workspace_tag`]).

use std::borrow::Cow;

use super::HashMap;
use crate::learning::tag_relevance::{TagScore, CONTEXT_RECORD};

/// The name one piece of an item's evidence is kept under (a tag, or one
/// of the names below), and the id of an item in the maps a query reads
/// (its scores, its pins). Held inline up to 24 bytes, which every tag,
/// most context records and most ids are, so a query reads a lesson's
/// records and compares their names without following a pointer for
/// each: what a prompt after a pause pays for, its caches cold
/// (BENCHMARKS.md, "Query inside the engine").
pub type Key = compact_str::CompactString;

/// How well an item matched the prompt it was shown on, which decides the
/// showings a verdict on it speaks for (memd, not the seed). A lesson shown
/// on a prompt it matches only in passing (another topic that shares a
/// word) is rightly judged irrelevant there; counted against it across its
/// context, that verdict held it back from the prompts of its own topic
/// too. Measured (the learning bench, sixteen seeds): see BENCHMARKS.md.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Match {
    /// A prompt it matched well (a task band of
    /// `lesson::PROBATION_MIN_TASK_POINTS` or more), or no prompt at all
    /// (session start; direct feedback given with its tags): the verdict
    /// counts for every showing, as the seed counts it.
    Strong,
    /// A prompt it matched only in passing (a lower task band): the verdict
    /// counts only for showings like it, in the item's weak-match evidence
    /// (each tag as [`WEAK_MATCH`]`tag`).
    Weak,
}

/// The prefix of a tag's weak-match evidence ([`Match::Weak`]): `~python`.
/// No workspace tag starts with it ([`workspace_tag`]).
pub const WEAK_MATCH: &str = "~";

/// The prefix of an item's evidence where one of its own tags was absent
/// ([`Learned::elsewhere`](super::Learned::elsewhere)): `!go`.
pub const ELSEWHERE: &str = "!";

/// The pseudo-tag every judgement also updates: an item's record across
/// every context it was judged in ([`Scope::Everywhere`](crate::learning::tag_relevance::Scope::Everywhere)).
pub const EVERYWHERE: &str = "*";

/// [`EVERYWHERE`] as weak matches have it (`Match::Weak.key("*")`).
pub(super) const WEAK_EVERYWHERE: &str = "~*";

/// A query's or feedback's tag as memd learns under it: trimmed, lower
/// case; `None` for an empty one and for the names memd gives evidence of
/// its own (`*`, `!tag`, `~tag`, `@context`), so no tag a workspace reports can read
/// or write them.
pub fn workspace_tag(tag: &str) -> Option<String> {
    let tag = tag.trim();
    let reserved = tag.is_empty()
        || tag == EVERYWHERE
        || tag.starts_with(ELSEWHERE)
        || tag.starts_with(WEAK_MATCH)
        || tag.starts_with(CONTEXT_RECORD);
    (!reserved).then(|| tag.to_lowercase())
}

impl Match {
    /// How a showing at task `band` matched (0: no prompt).
    pub fn of_band(band: u8) -> Match {
        if band > 0 && band < crate::scoring::lesson::PROBATION_MIN_TASK_POINTS {
            Match::Weak
        } else {
            Match::Strong
        }
    }

    /// How `id` was shown, given the ids shown on a `weak` match.
    pub fn among(weak: &[String], id: &str) -> Match {
        if weak.iter().any(|w| w == id) {
            Match::Weak
        } else {
            Match::Strong
        }
    }

    /// The name `tag`'s evidence has for showings like this one.
    pub fn key(self, tag: &str) -> Cow<'_, str> {
        match self {
            Match::Strong => Cow::Borrowed(tag),
            Match::Weak => Cow::Owned(format!("{WEAK_MATCH}{tag}")),
        }
    }

    /// `tag`'s score in `scores` as showings like this one have it. The
    /// weak-match name is written into one buffer a thread, so a lookup
    /// allocates nothing (a query reads thousands).
    pub(super) fn score_in<'s>(
        self,
        scores: &'s HashMap<Key, TagScore>,
        tag: &str,
    ) -> Option<&'s TagScore> {
        thread_local! {
            static KEY: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
        }
        match self {
            Match::Strong => scores.get(tag),
            Match::Weak => KEY.with_borrow_mut(|key| {
                key.clear();
                key.push_str(WEAK_MATCH);
                key.push_str(tag);
                scores.get(key.as_str())
            }),
        }
    }
}

/// The key of an item's own record in the context of `tags`
/// ([`CONTEXT_RECORD`] and the [`context_key`]); none without tags.
pub fn context_record(tags: &[String]) -> Option<String> {
    (!tags.is_empty()).then(|| format!("{CONTEXT_RECORD}{}", context_key(tags)))
}

/// Whether `key` names a context's own record ([`CONTEXT_RECORD`]), as
/// any showing has it.
pub fn is_context_record(key: &str) -> bool {
    key.strip_prefix(WEAK_MATCH)
        .unwrap_or(key)
        .starts_with(CONTEXT_RECORD)
}

/// A context: its sorted, distinct tags joined by `,`.
pub fn context_key(tags: &[String]) -> String {
    let mut sorted: Vec<&str> = tags.iter().map(String::as_str).collect();
    sorted.sort_unstable();
    sorted.dedup();
    sorted.join(",")
}
