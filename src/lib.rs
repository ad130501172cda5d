//! memd: put a team's hard-won knowledge into a coding agent's prompt only
//! when it is relevant.
//!
//! Layout:
//! - [`protocol`]: the query and answer types shared with `memctl` (always
//!   compiled; the only module without the `daemon` feature).
//! - [`knowledge`]: knowledge files, parsed with positions, every item kind.
//! - [`text`]: tokenising and the incremental BM25F index.
//! - [`semantic`]: the static embedding model, item vectors, and their
//!   fusion with the lexical similarity.
//! - [`scoring`]: the five pure scoring policies, one per seed document.
//! - [`engine`]: the in-memory knowledge base, selection per kind.
//! - [`learning`]: learning from use: seed 001's rule, the learned state
//!   and its journal, the session audit.
//! - [`render`]: the injection block in the seeds' formats, within budget.
//! - [`store`]: redb persistence of files, items, projects, learned state.
//! - [`evaluate`]: transcripts (Claude Code, Codex CLI, Gemini CLI, memd's
//!   OpenCode plugin) and judges for the evaluator.
//! - [`daemon`]: `memd serve`: socket activation, the socket server, file
//!   watching, state, the team's files, the local page (`memctl ui`).
//! - [`config`]: the `memd.toml` file.
//! - [`time`]: instants as Unix seconds.
//! - [`safe_file`]: the one safe way a user's file is changed (install,
//!   add, remember, the store): exclusive temporary file, no link followed,
//!   mode kept, lock, fsync, read back (always compiled: `memctl` uses it).

pub mod protocol;
pub mod safe_file;

#[cfg(feature = "daemon")]
pub mod config;
#[cfg(feature = "daemon")]
pub mod daemon;
#[cfg(feature = "daemon")]
pub mod engine;
#[cfg(feature = "daemon")]
pub mod evaluate;
#[cfg(feature = "daemon")]
pub mod knowledge;
#[cfg(feature = "daemon")]
pub mod learning;
#[cfg(feature = "daemon")]
pub mod render;
#[cfg(feature = "daemon")]
pub mod scoring;
#[cfg(feature = "daemon")]
pub mod semantic;
#[cfg(feature = "daemon")]
pub mod store;
#[cfg(feature = "daemon")]
pub mod text;
#[cfg(feature = "daemon")]
pub mod time;
