//! A WordPiece tokenizer (BERT's, and so most model2vec models') kept
//! compact: the `tokenizers` crate's normalizer and pre-tokenizer (for
//! ASCII text under BERT's, the same steps in one pass of our own, as a
//! prompt is embedded on every query), and the vocabulary in three flat
//! arrays (about 0.8 MB for 30k tokens) instead of the crate's two hash
//! maps of strings (about 7 MB, a third of the daemon's memory for the
//! tier at 100k items). Greedy longest match first, as the crate's
//! `WordPiece::tokenize` does; a test checks that both give the same ids.

use tokenizers::normalizers::BertNormalizer;
use tokenizers::{
    ModelWrapper, NormalizedString, Normalizer, NormalizerWrapper, OffsetReferential, OffsetType,
    PreTokenizedString, PreTokenizer, PreTokenizerWrapper, Tokenizer,
};

/// A tokenizer whose model is WordPiece, with its vocabulary compacted.
pub(super) struct WordPieceTokenizer {
    normalizer: Option<NormalizerWrapper>,
    pre_tokenizer: Option<PreTokenizerWrapper>,
    /// The added tokens matched in the raw text before anything else
    /// (BERT's `[PAD]`, `[UNK]`...), longest first.
    specials: Vec<(String, u32)>,
    vocabulary: Vocabulary,
    prefix: String,
    unknown: u32,
    max_chars: usize,
}

impl WordPieceTokenizer {
    /// The compact form of `tokenizer`; `None` unless its model is
    /// WordPiece and its added tokens are plain (no stripping, not
    /// single-word, matched before normalisation), which this handles.
    pub(super) fn from_tokenizer(tokenizer: &Tokenizer) -> Option<Self> {
        let ModelWrapper::WordPiece(model) = tokenizer.get_model() else {
            return None;
        };
        let mut specials = Vec::new();
        for (&id, token) in tokenizer.get_added_vocabulary().get_added_tokens_decoder() {
            if token.single_word || token.lstrip || token.rstrip || token.normalized {
                return None;
            }
            specials.push((token.content.clone(), id));
        }
        specials.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
        let vocabulary = Vocabulary::new(
            tokenizers::Model::get_vocab(model)
                .iter()
                .map(|(t, &id)| (t.as_str(), id)),
        );
        let unknown = vocabulary.get(&model.unk_token, "")?;
        Some(WordPieceTokenizer {
            normalizer: tokenizer.get_normalizer().cloned(),
            pre_tokenizer: tokenizer.get_pre_tokenizer().cloned(),
            specials,
            vocabulary,
            prefix: model.continuing_subword_prefix.clone(),
            unknown,
            max_chars: model.max_input_chars_per_word,
        })
    }

    /// The ids of `text`'s tokens, without special tokens added.
    pub(super) fn encode(&self, text: &str) -> Result<Vec<u32>, String> {
        let mut ids = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            // The earliest special token (the longest at one place).
            let special = self
                .specials
                .iter()
                .filter_map(|(s, id)| rest.find(s.as_str()).map(|at| (at, s.len(), *id)))
                .min_by_key(|&(at, len, _)| (at, std::cmp::Reverse(len)));
            let (plain, next) = match special {
                Some((at, len, id)) => (&rest[..at], Some((id, &rest[at + len..]))),
                None => (rest, None),
            };
            self.encode_plain(plain, &mut ids)?;
            match next {
                Some((id, after)) => {
                    ids.push(id);
                    rest = after;
                }
                None => break,
            }
        }
        Ok(ids)
    }

    fn encode_plain(&self, text: &str, ids: &mut Vec<u32>) -> Result<(), String> {
        if text.is_empty() {
            return Ok(());
        }
        if let (
            true,
            Some(NormalizerWrapper::BertNormalizer(bert)),
            Some(PreTokenizerWrapper::BertPreTokenizer(_)),
        ) = (text.is_ascii(), &self.normalizer, &self.pre_tokenizer)
        {
            self.encode_ascii_bert(text, bert, ids);
            return Ok(());
        }
        let mut normalized = NormalizedString::from(text);
        if let Some(n) = &self.normalizer {
            n.normalize(&mut normalized).map_err(|e| e.to_string())?;
        }
        let mut words = PreTokenizedString::from(normalized);
        if let Some(p) = &self.pre_tokenizer {
            p.pre_tokenize(&mut words).map_err(|e| e.to_string())?;
        }
        for (word, _, _) in words.get_splits(OffsetReferential::Original, OffsetType::Byte) {
            self.word(word, ids);
        }
        Ok(())
    }

    /// [`WordPieceTokenizer::encode_plain`] for ASCII text under BERT's
    /// normaliser and pre-tokeniser, in one pass with no offsets kept
    /// (the crate's way keeps an alignment for every character, most of
    /// the cost of embedding a prompt). On ASCII the normaliser drops the
    /// control characters but tab, newline and carriage return, which
    /// become spaces (`clean_text`), and lower-cases (`lowercase`); the
    /// Chinese characters and accents it handles are not ASCII. The
    /// pre-tokeniser splits on whitespace and sets each punctuation mark
    /// apart.
    fn encode_ascii_bert(&self, text: &str, bert: &BertNormalizer, ids: &mut Vec<u32>) {
        let mut word = String::new();
        for byte in text.bytes() {
            let mut c = char::from(byte);
            if bert.clean_text {
                match byte {
                    b'\t' | b'\n' | b'\r' => c = ' ',
                    _ if byte.is_ascii_control() => continue,
                    _ => {}
                }
            }
            if bert.lowercase {
                c = c.to_ascii_lowercase();
            }
            if c.is_whitespace() || c.is_ascii_punctuation() {
                self.word(&word, ids);
                word.clear();
                if c.is_ascii_punctuation() {
                    self.word(c.encode_utf8(&mut [0; 4]), ids);
                }
            } else {
                word.push(c);
            }
        }
        self.word(&word, ids);
    }

    /// One word's pieces, longest match first; the unknown token for a word
    /// too long or with a part no piece covers.
    fn word(&self, word: &str, ids: &mut Vec<u32>) {
        if word.is_empty() {
            return;
        }
        if word.chars().count() > self.max_chars {
            ids.push(self.unknown);
            return;
        }
        let first = ids.len();
        let mut start = 0;
        while start < word.len() {
            let prefix = if start > 0 { self.prefix.as_str() } else { "" };
            let mut end = word.len();
            let found = loop {
                if let Some(id) = self.vocabulary.get(prefix, &word[start..end]) {
                    break Some(id);
                }
                match word[start..end].chars().next_back() {
                    Some(c) if end - c.len_utf8() > start => end -= c.len_utf8(),
                    _ => break None,
                }
            };
            match found {
                Some(id) => {
                    ids.push(id);
                    start = end;
                }
                None => {
                    ids.truncate(first);
                    ids.push(self.unknown);
                    return;
                }
            }
        }
    }
}

/// Token strings to ids: the tokens end to end in one string, their
/// spans, and an open-addressing table of span indices.
struct Vocabulary {
    text: String,
    /// `(start, end, id)` of each token in `text`.
    spans: Vec<(u32, u32, u32)>,
    /// Span index + 1 at each slot; 0 is empty. A power of two in size, at
    /// most half full.
    slots: Vec<u32>,
}

impl Vocabulary {
    fn new<'a>(tokens: impl Iterator<Item = (&'a str, u32)>) -> Self {
        let mut text = String::new();
        let mut spans = Vec::new();
        for (token, id) in tokens {
            let start = text.len() as u32;
            text.push_str(token);
            spans.push((start, text.len() as u32, id));
        }
        let mut slots = vec![0u32; (spans.len() * 2).next_power_of_two().max(2)];
        let mask = slots.len() - 1;
        for (i, &(start, end, _)) in spans.iter().enumerate() {
            let mut at = hash(&[&text[start as usize..end as usize]]) as usize & mask;
            while slots[at] != 0 {
                at = (at + 1) & mask;
            }
            slots[at] = i as u32 + 1;
        }
        text.shrink_to_fit();
        Vocabulary { text, spans, slots }
    }

    /// The id of the token `prefix` + `piece`.
    fn get(&self, prefix: &str, piece: &str) -> Option<u32> {
        let mask = self.slots.len() - 1;
        let mut at = hash(&[prefix, piece]) as usize & mask;
        loop {
            let i = self.slots[at];
            if i == 0 {
                return None;
            }
            let (start, end, id) = self.spans[i as usize - 1];
            let token = &self.text.as_bytes()[start as usize..end as usize];
            if token.len() == prefix.len() + piece.len()
                && token.starts_with(prefix.as_bytes())
                && token.ends_with(piece.as_bytes())
            {
                return Some(id);
            }
            at = (at + 1) & mask;
        }
    }
}

/// FNV-1a over the parts' bytes in order, so a prefix and a piece hash
/// as their concatenation does.
fn hash(parts: &[&str]) -> u64 {
    crate::text::fnv1a(parts.iter().flat_map(|part| part.bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vocabulary_finds_each_token_and_nothing_else() {
        let vocabulary = Vocabulary::new(
            [("a", 3), ("##b", 7), ("abc", 1), ("", 9)]
                .iter()
                .map(|&(t, id)| (t, id)),
        );
        assert_eq!(vocabulary.get("", "a"), Some(3));
        assert_eq!(vocabulary.get("##", "b"), Some(7));
        assert_eq!(vocabulary.get("", "##b"), Some(7));
        assert_eq!(vocabulary.get("", "abc"), Some(1));
        assert_eq!(vocabulary.get("", ""), Some(9));
        assert_eq!(vocabulary.get("", "b"), None);
        assert_eq!(vocabulary.get("##", "a"), None);
    }

    /// Every text in the repository's example and benchmark knowledge, and
    /// some hard cases, gives the ids the `tokenizers` crate gives.
    #[test]
    fn the_compact_tokenizer_gives_the_crates_ids() {
        let mut full = Tokenizer::from_bytes(super::super::model::BUILT_IN_TOKENIZER).unwrap();
        full.with_truncation(None).unwrap();
        let compact = WordPieceTokenizer::from_tokenizer(&full).unwrap();
        let mut texts: Vec<String> = [
            "",
            "   ",
            "Caroline\u{2019}s wedding, got married; the test is FLAKY!!",
            "Übergröße café naïve résumé Ångström",
            "東京で会議 中文字符 한국어",
            "emoji 🦀🚀 and \u{200b}zero width\ttabs\r\nlines\u{7}bell",
            "[UNK] literal [PAD][UNK]x[UNK]",
            "supercalifragilisticexpialidocious antidisestablishmentarianism",
            "x_y-z.w/v::u->t=>s 1.5e-3 0x1F 127.0.0.1:8080",
            "Controls\u{0}nul\u{b}vt\u{c}ff\u{1c}fs\u{1f}us\u{7f}del\t\tTabs  Spaces",
            "ALL-CAPS_snake_case camelCase (parens) [brackets] {braces} \"quotes\" 'single' `tick`",
            "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~ end",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        texts.push("a".repeat(101));
        texts.push(format!("{} tail", "ab".repeat(60)));
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        for dir in ["config/knowledge", "benches/relevance/knowledge"] {
            for entry in std::fs::read_dir(root.join(dir)).unwrap() {
                let path = entry.unwrap().path();
                if path.is_file() {
                    let text = std::fs::read_to_string(&path).unwrap();
                    texts.extend(text.lines().map(str::to_string));
                }
            }
        }
        texts.push(std::fs::read_to_string(root.join("benches/relevance/cases.yaml")).unwrap());
        assert!(texts.len() > 500, "{}", texts.len());
        for text in &texts {
            let expected = full
                .encode(text.as_str(), false)
                .unwrap()
                .get_ids()
                .to_vec();
            assert_eq!(compact.encode(text).unwrap(), expected, "{text:.200?}");
        }
    }
}
