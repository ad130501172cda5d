//! What was injected, as the local page shows it: the latest answers given
//! to agents' sessions (the prompt, the block as the model received it,
//! each item with its score and dimensions), kept in memory, the newest
//! [`KEPT`]. Session audits outlive them (in the store); a block is only
//! here, so the page says so for a session from before the daemon started.

use std::collections::VecDeque;

use crate::protocol::{Answer, Query};

/// Answers kept.
pub const KEPT: usize = 500;

/// One answer to a session.
#[derive(Debug, Clone)]
pub struct Injection {
    /// Unix seconds.
    pub at: i64,
    pub session: String,
    /// The query as it was asked (the prompt is its task).
    pub query: Query,
    pub answer: Answer,
}

/// The latest injections, oldest first.
#[derive(Debug, Default)]
pub struct Injections {
    kept: VecDeque<Injection>,
}

impl Injections {
    /// Keeps `injection`, forgetting the oldest beyond [`KEPT`].
    pub fn push(&mut self, injection: Injection) {
        if self.kept.len() == KEPT {
            self.kept.pop_front();
        }
        self.kept.push_back(injection);
    }

    /// Every kept injection, newest first.
    pub fn newest_first(&self) -> impl Iterator<Item = &Injection> {
        self.kept.iter().rev()
    }

    /// A session's injections, in order.
    pub fn of(&self, session: &str) -> Vec<Injection> {
        self.kept
            .iter()
            .filter(|i| i.session == session)
            .cloned()
            .collect()
    }
}
