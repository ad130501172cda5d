//! Text to terms: Unicode word segmentation, lower case, identifiers split at
//! `_` and camelCase humps, English stop words dropped, Snowball stemming.

use std::cell::RefCell;

use rustc_hash::FxHashMap;
use std::sync::OnceLock;

use rust_stemmers::{Algorithm, Stemmer};
use unicode_segmentation::UnicodeSegmentation;

/// Common English words that carry no topic.
const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been",
    "before", "but", "by", "can", "could", "do", "does", "doing", "done", "each", "for", "from",
    "get", "had", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "just", "me",
    "more", "most", "my", "no", "not", "now", "of", "on", "one", "only", "or", "other", "our",
    "out", "over", "please", "should", "so", "some", "such", "than", "that", "the", "their",
    "them", "then", "there", "these", "they", "this", "those", "to", "too", "up", "us", "use",
    "used", "using", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who",
    "why", "will", "with", "would", "you", "your",
];

fn stemmer() -> &'static Stemmer {
    static STEMMER: OnceLock<Stemmer> = OnceLock::new();
    STEMMER.get_or_init(|| Stemmer::create(Algorithm::English))
}

fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.binary_search(&word).is_ok()
}

/// The stemmed terms of `text`, in order, with repeats.
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_term(text, |t| out.push(t));
    out
}

/// Calls `f` with each stemmed term of `text`.
pub fn for_each_term(text: &str, mut f: impl FnMut(String)) {
    for word in text.unicode_words() {
        let parts = split_identifier(word);
        let whole = word.to_lowercase();
        if parts.len() > 1 {
            // `idempotency_key` also matches `idempotency` and `key`.
            emit(&whole.replace('_', ""), &mut f);
            for part in parts {
                emit(&part.to_lowercase(), &mut f);
            }
        } else {
            emit(&whole, &mut f);
        }
    }
}

/// Words stemmed per thread are remembered (up to this many): knowledge
/// reuses a small vocabulary, and stemming is the bulk of indexing.
const STEM_CACHE_WORDS: usize = 65_536;

thread_local! {
    /// Word -> its term, or `None` for a word that is no term (too short,
    /// a stop word).
    static STEMS: RefCell<FxHashMap<String, Option<String>>> = RefCell::new(FxHashMap::default());
}

fn emit(word: &str, f: &mut impl FnMut(String)) {
    let word = word.trim_matches('_');
    let term = STEMS.with(|cache| {
        let mut cache = cache.borrow_mut();
        if let Some(term) = cache.get(word) {
            return term.clone();
        }
        let term = (word.chars().count() >= 2 && !is_stop_word(word))
            .then(|| stemmer().stem(word).into_owned());
        if cache.len() >= STEM_CACHE_WORDS {
            cache.clear();
        }
        cache.insert(word.to_string(), term.clone());
        term
    });
    if let Some(term) = term {
        f(term);
    }
}

/// Splits `snake_case` and `camelCase` into parts; one part when neither.
fn split_identifier(word: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    for piece in word.split('_').filter(|p| !p.is_empty()) {
        let mut start = 0;
        let mut prev_lower = false;
        for (i, c) in piece.char_indices() {
            if c.is_uppercase() && prev_lower {
                parts.push(&piece[start..i]);
                start = i;
            }
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
        }
        parts.push(&piece[start..]);
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_are_sorted_for_binary_search() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn stems_and_drops_stop_words() {
        assert_eq!(
            terms("Implement the webhook idempotency"),
            ["implement", "webhook", "idempot"]
        );
        assert_eq!(terms("idempotent webhooks"), ["idempot", "webhook"]);
    }

    #[test]
    fn splits_identifiers() {
        assert_eq!(terms("buildApp"), ["buildapp", "build", "app"]);
        assert_eq!(
            terms("idempotency_key"),
            ["idempotencykey", "idempot", "key"]
        );
    }

    #[test]
    fn handles_non_ascii() {
        assert_eq!(terms("Übergrößen café"), ["übergrößen", "café"]);
    }
}
