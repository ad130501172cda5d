//! Text matching: tokenising with stemming, and the BM25F inverted index.

pub mod bm25;
pub mod tokenize;

pub use bm25::{DocId, Field, Similarities, TextIndex};
