//! The five scoring policies, one per seed, each a set of pure functions
//! with its constants named once:
//!
//! - [`rubric`]: seed 000, patterns (A-E), anti-patterns (A + C), gotchas.
//! - [`lesson`]: seed 001, the structural gate and RRF; its per-tag EMA,
//!   filter-or-boost and auto-pin are learning's
//!   ([`crate::learning::tag_relevance`]).
//! - [`observation`]: seed 002, recency + importance + agent + keywords.
//! - [`learning`]: seed 003, keyword/context/error-type similarity and the
//!   effectiveness EMA.
//! - [`exemplar`]: seed 004, engagement, recency decay, retrieval and the
//!   classifiers.

pub mod exemplar;
pub mod learning;
pub mod lesson;
pub mod observation;
pub mod rubric;
