//! Learning from use: what memd makes of each verdict on an item it showed,
//! and what it keeps of them. The map:
//!
//! - [`tag_relevance`]: seed 001's rule as pure functions with its
//!   constants named once: the per-tag EMA and its clamp, the evaluator's
//!   and direct feedback's weights, the evidence over a context's tags,
//!   filter-or-boost, and the pins (by relevance, by match count, the
//!   unpin). Where memd departs from the seed's literal rule, its doc says
//!   why.
//! - [`state`]: the learned state the scorers read ([`Learned`]): per
//!   (item, tag) scores, weak-match evidence, pins and match counts, seed
//!   003's applications, the sessions seen per tag, and the journal of
//!   verdicts that the state can be replayed from. Its transitions are
//!   pure; the daemon persists what they return. Its own map names its
//!   rooms: the names evidence is kept under, the assessment of an item
//!   in a context, the pins, the journal and its replay, applications.
//! - [`noise`]: how often the judge contradicts itself (pairs of verdicts
//!   on one item in one context that disagree), and the filter line that
//!   implies: the seed's -0.1 for a judge wrong up to about one time in
//!   five, lower for a noisier one; and the odds a lesson is relevant in a
//!   context before and after its verdicts there, which let its own record
//!   filter it before the seed's three sessions
//!   ([`tag_relevance::MIN_EVALS_EARLY`]).
//! - [`transaction`]: the one way a change to that state is committed: made
//!   on the live state, which keeps what it touched as it was, written to
//!   the store in one transaction once the state's lock is let go (a query
//!   never waits for the disk), and put back if the write fails.
//! - [`team`]: the team's verdicts, shared through the repository's git:
//!   the events in each member's file, what is kept of them (a tally per
//!   item and member), and what the team's evidence decides.
//! - [`audit`]: one agent session as audited ([`SessionAudit`], seed 001's
//!   `session_audit`): what was shown, with which tags, on which prompt,
//!   and how much of it was judged.
//!
//! The state is not the knowledge's: a query reads both
//! (`crate::engine::Engine::answer` takes the [`Learned`] it selects
//! with), and the daemon keeps it behind a lock of its own, so a change to
//! it never waits for the indexer. The daemon's side (committing a verdict,
//! the evaluator's loop, `memctl log` and `export`) is in
//! `crate::daemon::learning`; what queries show is recorded by
//! `crate::daemon::recorder`.

pub mod audit;
pub mod noise;
pub mod state;
pub mod tag_relevance;
pub mod team;
pub mod transaction;

pub use audit::SessionAudit;
pub use state::{
    context_key, workspace_tag, Application, Applications, HashMap as LearnedMap, Judgement,
    Learned, Match, Pin, PinChange, WEAK_MATCH,
};
pub use transaction::{Staged, Transaction};
