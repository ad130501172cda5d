//! One agent session as audited (seed 001's `session_audit`). The
//! layouts earlier versions stored it in are the store's to read.

use serde::{Deserialize, Serialize};

/// One agent session as audited (seed 001's `session_audit`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionAudit {
    /// Items shown, in order, each once.
    pub shown: Vec<String>,
    /// The environment tags of the session's queries.
    pub tags: Vec<String>,
    pub repo: Option<String>,
    /// The transcript, when the hook knows it.
    pub transcript: Option<String>,
    /// The session ended: ready for evaluation.
    pub ended: bool,
    /// Transcript bytes already evaluated.
    pub evaluated_bytes: u64,
    /// Evaluated since it last changed.
    pub processed: bool,
    /// Unix seconds of the last change.
    pub updated_at: i64,
    /// How many of `shown`, from the first, have been judged: an item is
    /// judged once, by the first evaluation after it was shown.
    pub judged: u32,
    /// The mark ([`crate::evaluate::prompt_mark`]) of the prompt each item
    /// was shown on; items shown at session start have none. The built-in
    /// judge reads only what the agent did after that prompt.
    pub shown_on: std::collections::BTreeMap<String, u64>,
    /// The items shown on a prompt they matched only in passing
    /// ([`crate::learning::Match::Weak`]): a verdict on them counts only for
    /// showings like it.
    pub weak: Vec<String>,
}
