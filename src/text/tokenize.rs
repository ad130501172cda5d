//! Text to terms: Unicode word segmentation, lower case, identifiers split at
//! `_` and camelCase humps, English stop words dropped, Snowball stemming.

use std::borrow::Cow;
use std::cell::RefCell;

use rustc_hash::FxHashMap;
use std::sync::OnceLock;

use rust_stemmers::{Algorithm, Stemmer};
use unicode_normalization::UnicodeNormalization;
use unicode_segmentation::UnicodeSegmentation;

/// Common English words that carry no topic: articles, prepositions,
/// pronouns and auxiliaries.
const STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "after",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "been",
    "before",
    "being",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "done",
    "each",
    "for",
    "from",
    "get",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "may",
    "me",
    "might",
    "mine",
    "more",
    "most",
    "must",
    "my",
    "myself",
    "no",
    "not",
    "now",
    "of",
    "on",
    "one",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "please",
    "shall",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "to",
    "too",
    "up",
    "us",
    "use",
    "used",
    "using",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

/// Irregular English verb and noun forms, and the form that is stemmed in
/// their place, so `bought` finds `buy` and `children` finds `child`. A
/// small table of the forms developers write; ambiguous ones (`left`,
/// `leaves`, `saw`, `lay`) are left out. Sorted for binary search.
const IRREGULAR: &[(&str, &str)] = &[
    ("ate", "eat"),
    ("began", "begin"),
    ("begun", "begin"),
    ("bought", "buy"),
    ("broke", "break"),
    ("broken", "break"),
    ("brought", "bring"),
    ("built", "build"),
    ("came", "come"),
    ("caught", "catch"),
    ("children", "child"),
    ("chose", "choose"),
    ("chosen", "choose"),
    ("drawn", "draw"),
    ("drew", "draw"),
    ("driven", "drive"),
    ("drove", "drive"),
    ("eaten", "eat"),
    ("fallen", "fall"),
    ("feet", "foot"),
    ("fell", "fall"),
    ("flew", "fly"),
    ("flown", "fly"),
    ("forgot", "forget"),
    ("forgotten", "forget"),
    ("found", "find"),
    ("froze", "freeze"),
    ("frozen", "freeze"),
    ("gave", "give"),
    ("geese", "goose"),
    ("given", "give"),
    ("gone", "go"),
    ("got", "get"),
    ("gotten", "get"),
    ("grew", "grow"),
    ("grown", "grow"),
    ("hid", "hide"),
    ("hidden", "hide"),
    ("indices", "index"),
    ("knew", "know"),
    ("known", "know"),
    ("lost", "lose"),
    ("made", "make"),
    ("matrices", "matrix"),
    ("meant", "mean"),
    ("men", "man"),
    ("met", "meet"),
    ("mice", "mouse"),
    ("paid", "pay"),
    ("ran", "run"),
    ("risen", "rise"),
    ("rode", "ride"),
    ("rose", "rise"),
    ("said", "say"),
    ("sent", "send"),
    ("shook", "shake"),
    ("sold", "sell"),
    ("spent", "spend"),
    ("spoke", "speak"),
    ("spoken", "speak"),
    ("stole", "steal"),
    ("stolen", "steal"),
    ("stood", "stand"),
    ("struck", "strike"),
    ("swam", "swim"),
    ("taken", "take"),
    ("taught", "teach"),
    ("teeth", "tooth"),
    ("thought", "think"),
    ("threw", "throw"),
    ("thrown", "throw"),
    ("told", "tell"),
    ("took", "take"),
    ("understood", "understand"),
    ("vertices", "vertex"),
    ("went", "go"),
    ("woke", "wake"),
    ("women", "woman"),
    ("won", "win"),
    ("wore", "wear"),
    ("written", "write"),
    ("wrote", "write"),
];

/// The regular form of an irregular word, or the word.
fn regular(word: &str) -> &str {
    IRREGULAR
        .binary_search_by(|(form, _)| (*form).cmp(word))
        .map_or(word, |i| IRREGULAR[i].1)
}

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

/// `text` in Unicode NFKC (compatibility forms such as full-width letters
/// and ligatures become plain ones), with typographic quotes and
/// apostrophes as their ASCII forms, so `Caroline’s` is `Caroline's`.
/// ASCII text is returned as it is.
pub fn normalise(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.nfkc()
            .map(|c| match c {
                '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' | '\u{02BC}' => '\'',
                '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' => '"',
                c => c,
            })
            .collect(),
    )
}

/// Calls `f` with each stemmed term of `text`.
pub fn for_each_term(text: &str, mut f: impl FnMut(String)) {
    let text = normalise(text);
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
            .then(|| stemmer().stem(regular(word)).into_owned());
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
    fn irregular_forms_are_sorted_and_map_to_their_stem() {
        assert!(IRREGULAR.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(terms("bought"), terms("buy"));
        assert_eq!(terms("grew"), terms("growing"));
        assert_eq!(terms("children"), terms("child"));
        assert_eq!(terms("Wrote"), terms("writes"));
    }

    #[test]
    fn pronouns_and_auxiliaries_are_stop_words() {
        assert_eq!(
            terms("he said she did it to him"),
            ["said"].map(|w| stemmer().stem(regular(w)).into_owned())
        );
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
    fn typographic_quotes_and_compatibility_forms_are_plain() {
        assert_eq!(terms("Caroline’s"), terms("Caroline's"));
        assert_eq!(terms("Caroline’s"), terms("Caroline"));
        assert_eq!(terms("ＯＡｕｔｈ ﬂaky"), terms("OAuth flaky"));
        assert_eq!(terms("Zoe\u{0308}"), terms("Zoë"));
        assert_eq!(terms("“quoted”"), ["quot"]);
    }

    #[test]
    fn handles_non_ascii() {
        assert_eq!(terms("Übergrößen café"), ["übergrößen", "café"]);
    }
}
