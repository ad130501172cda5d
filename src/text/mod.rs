//! Text matching: tokenising with stemming, and the BM25F inverted index
//! over compressed posting lists.

pub mod bm25;
mod postings;
pub mod tokenize;

pub use bm25::{DocId, Field, Similarities, TextIndex};
