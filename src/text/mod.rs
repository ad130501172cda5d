//! Text matching: tokenising with stemming, and the BM25F inverted index
//! over compressed posting lists; the stable hash ([`fnv1a`]).

pub mod bm25;
mod fnv;
mod postings;
pub mod tokenize;

pub use bm25::{DocId, Field, Similarities, TextIndex};
pub use fnv::fnv1a;

use std::borrow::Cow;

/// The most of a task's text a query considers, in bytes. A longer task (a
/// pasted log, a file) is considered by its first and last halves of this:
/// what is asked is most often at the start or the end, and query time
/// stays bounded whatever is pasted.
pub const MAX_TASK_BYTES: usize = 32 * 1024;

/// The part of `task` a query considers ([`MAX_TASK_BYTES`]).
pub fn considered(task: &str) -> Cow<'_, str> {
    considered_within(task, MAX_TASK_BYTES)
}

/// `text` when at most `max` bytes, else its first and last halves of
/// `max` (cut at character boundaries).
pub fn considered_within(text: &str, max: usize) -> Cow<'_, str> {
    if text.len() <= max {
        return Cow::Borrowed(text);
    }
    let half = max / 2;
    let mut head = half;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - half;
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    Cow::Owned(format!("{}\n{}", &text[..head], &text[tail..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_task_is_considered_by_its_start_and_end() {
        assert!(matches!(
            considered("short task"),
            Cow::Borrowed("short task")
        ));
        let task = format!("ASKED {} END", "é".repeat(MAX_TASK_BYTES));
        let kept = considered(&task);
        assert!(kept.len() <= MAX_TASK_BYTES + 1);
        assert!(kept.starts_with("ASKED ") && kept.ends_with(" END"));
    }
}
