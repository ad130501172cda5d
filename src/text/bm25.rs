//! An in-memory, field-weighted BM25 (BM25F) inverted index that adds and
//! removes one document at a time, and turns a query into a similarity in
//! `[0, 1]` per document.
//!
//! Removal is lazy: a removed document is marked dead, its terms' document
//! frequencies and the length statistics are corrected at once, and its
//! postings are purged by a compaction that runs once dead postings make up
//! a quarter of the index. A slot is reused only after that purge, so a
//! stale posting can never be credited to a new document.

use rustc_hash::FxHashMap;

use super::postings::{PackedTf, PostingList};
use super::tokenize::for_each_term;

/// BM25 term-frequency saturation.
pub const K1: f32 = 1.2;
/// BM25 length normalisation.
pub const B: f32 = 0.75;
/// The most distinct known terms a query is scored on: the rarest of them
/// when it has more (a pasted log, a file). Prompts have far fewer.
pub const MAX_QUERY_TERMS: usize = 128;

/// The fields a document's text is indexed under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// Name or title.
    Title = 0,
    /// The problem or description.
    Problem = 1,
    /// When to use it, its context.
    Context = 2,
    /// The solution, fix or advice.
    Solution = 3,
    /// Tags, keywords and category.
    Keywords = 4,
    /// Anything else worth matching (code).
    Body = 5,
}

/// Number of fields.
const FIELDS: usize = 6;
const _: () = assert!(FIELDS <= PackedTf::FIELDS);

/// How much a match in each field counts, indexed by [`Field`]. The title
/// and keywords say what an item is about; code says little.
pub const FIELD_WEIGHTS: [f32; FIELDS] = [2.0, 1.5, 1.2, 1.0, 1.5, 0.5];

/// A document's handle in the index.
pub type DocId = u32;

#[derive(Default)]
struct Postings {
    /// Live documents containing the term.
    df: u32,
    list: PostingList,
}

#[derive(Clone, Copy)]
struct Doc {
    alive: bool,
    lens: [u16; FIELDS],
}

/// The inverted index.
#[derive(Default)]
pub struct TextIndex {
    term_ids: FxHashMap<String, u32>,
    postings: Vec<Postings>,
    docs: Vec<Doc>,
    free: Vec<DocId>,
    live: u32,
    len_sum: [u64; FIELDS],
    total_postings: usize,
    dead_postings: usize,
}

/// A query's words as the similarity reads them ([`TextIndex::prompt_terms`]).
#[derive(Debug, Default, Clone)]
pub struct PromptTerms {
    /// The known terms and their idf.
    pub known: Vec<(u32, f32)>,
    /// The idf mass of the words no item holds.
    pub unknown_mass: f32,
}

impl PromptTerms {
    /// The idf mass of the known terms.
    pub fn known_mass(&self) -> f32 {
        self.known.iter().map(|(_, idf)| idf).sum()
    }

    /// The share of the prompt's informative words that the knowledge
    /// knows at all: 0 for a prompt made of words no item holds.
    pub fn known_share(&self) -> f32 {
        let known = self.known_mass();
        let all = known + self.unknown_mass;
        if all > 0.0 {
            known / all
        } else {
            0.0
        }
    }

    /// The idf of `term` if the prompt holds it.
    pub fn idf(&self, term: u32) -> Option<f32> {
        self.known
            .iter()
            .find(|(t, _)| *t == term)
            .map(|(_, idf)| *idf)
    }
}

/// Similarity of every document to one query.
pub struct Similarities {
    scores: Vec<f32>,
    matched: Vec<DocId>,
    /// When fused with the semantic tier: the lexical similarity and the
    /// cosine of each document.
    parts: Option<Box<(Vec<f32>, Vec<f32>)>>,
}

impl Similarities {
    /// These lexical similarities fused with `cosines` (by document) by
    /// `fuse(lexical, cosine)`. A document that matched lexically keeps
    /// its fused similarity; of the others, only the `max_by_meaning` with
    /// the highest cosines whose fused similarity is above 0 match, so the
    /// candidates stay few however many texts look alike to the model.
    /// `floor`: a cosine at or below it adds nothing on its own
    /// (`fuse(0.0, c) <= 0.0`), so such a document is passed over with one
    /// comparison.
    pub fn fused_with(
        self,
        cosines: Vec<f32>,
        fuse: impl Fn(f32, f32) -> f32,
        max_by_meaning: usize,
        floor: f32,
    ) -> Similarities {
        let lexical = self.scores;
        let len = lexical.len().max(cosines.len());
        let mut scores = vec![0f32; len];
        let mut matched = self.matched;
        let cosine = |doc: usize| cosines.get(doc).copied().unwrap_or(0.0);
        for &doc in &matched {
            let d = doc as usize;
            scores[d] = fuse(lexical[d], cosine(d));
        }
        // The closest `max_by_meaning` by fused similarity, best first (the
        // earlier document on a tie). `fuse` does not decrease with the
        // cosine, so a document whose cosine is at most the floor, or the
        // last kept one's, is passed over with one comparison: most are.
        let mut by_meaning: Vec<(f32, f32, DocId)> = Vec::with_capacity(max_by_meaning + 1);
        let mut bar = floor;
        if max_by_meaning > 0 {
            for (d, &c) in cosines.iter().enumerate() {
                if c <= bar || lexical.get(d).is_some_and(|&l| l != 0.0) {
                    continue;
                }
                let f = fuse(0.0, c);
                if f <= 0.0 {
                    continue;
                }
                let at = by_meaning.partition_point(|&(kept, _, _)| kept >= f);
                by_meaning.insert(at, (f, c, d as DocId));
                if by_meaning.len() >= max_by_meaning {
                    by_meaning.truncate(max_by_meaning);
                    bar = by_meaning[max_by_meaning - 1].1;
                }
            }
        }
        for (f, _, doc) in by_meaning {
            scores[doc as usize] = f;
            matched.push(doc);
        }
        Similarities {
            scores,
            matched,
            parts: Some(Box::new((lexical, cosines))),
        }
    }

    /// The lexical similarity and the cosine of `doc`, when fused.
    pub fn parts(&self, doc: DocId) -> Option<(f32, f32)> {
        let parts = self.parts.as_deref()?;
        let at = |v: &Vec<f32>| v.get(doc as usize).copied().unwrap_or(0.0);
        Some((at(&parts.0), at(&parts.1)))
    }

    /// The similarity of `doc`, in `[0, 1]`; 0 when it matched nothing.
    pub fn get(&self, doc: DocId) -> f32 {
        self.scores.get(doc as usize).copied().unwrap_or(0.0)
    }

    /// The documents that matched at least one query term.
    pub fn matched(&self) -> &[DocId] {
        &self.matched
    }
}

/// Counts each term's occurrences per field.
fn field_terms(fields: &[(Field, &str)]) -> (FxHashMap<String, PackedTf>, [u16; FIELDS]) {
    let mut counts: FxHashMap<String, PackedTf> = FxHashMap::default();
    let mut lens = [0u16; FIELDS];
    for &(field, text) in fields {
        let f = field as usize;
        for_each_term(text, |term| {
            lens[f] = lens[f].saturating_add(1);
            counts.entry(term).or_default().bump(f);
        });
    }
    (counts, lens)
}

impl TextIndex {
    /// An empty index.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of live documents.
    pub fn len(&self) -> usize {
        self.live as usize
    }

    /// True when no document is live.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// The id of a term that has been indexed: ids are stable for the
    /// index's life (a term is never forgotten), so they can stand for terms
    /// in small precomputed sets.
    pub fn term_id(&self, term: &str) -> Option<u32> {
        self.term_ids.get(term).copied()
    }

    /// How many live documents contain the term with id `id`.
    pub fn doc_freq(&self, id: u32) -> u32 {
        self.postings.get(id as usize).map_or(0, |p| p.df)
    }

    /// Keeps at most [`MAX_QUERY_TERMS`] of `ids` (known term ids, in any
    /// order): the rarest, which tell documents apart best and have the
    /// shortest posting lists, so a query's cost is bounded however many
    /// words it has. Fewer are kept as they are.
    pub fn rarest(&self, ids: &mut Vec<u32>) {
        if ids.len() > MAX_QUERY_TERMS {
            ids.select_nth_unstable_by_key(MAX_QUERY_TERMS - 1, |&id| (self.doc_freq(id), id));
            ids.truncate(MAX_QUERY_TERMS);
        }
    }

    /// The inverse document frequency of a term held by `df` documents,
    /// as the similarity weighs it.
    pub fn idf_of_df(&self, df: u32) -> f32 {
        let n = self.live as f32;
        let df = df as f32;
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    }

    /// The query's words as the similarity reads them: each known term
    /// (the rarest [`MAX_QUERY_TERMS`]) with its idf, and the idf mass of
    /// the words no item holds, each weighed as a word one item holds (a
    /// word the knowledge has never seen says the prompt is about
    /// something it does not cover).
    pub fn prompt_terms(&self, query: &str) -> PromptTerms {
        let mut known: Vec<u32> = Vec::new();
        let mut seen = rustc_hash::FxHashSet::default();
        let mut unknown = rustc_hash::FxHashSet::default();
        for_each_term(query, |t| match self.term_ids.get(&t) {
            Some(&id) if self.postings[id as usize].df > 0 => {
                if seen.insert(id) {
                    known.push(id);
                }
            }
            _ => {
                unknown.insert(t);
            }
        });
        self.rarest(&mut known);
        let known: Vec<(u32, f32)> = known
            .into_iter()
            .map(|id| (id, self.idf_of_df(self.postings[id as usize].df)))
            .collect();
        PromptTerms {
            unknown_mass: unknown.len() as f32 * self.idf_of_df(1),
            known,
        }
    }

    /// The known term ids of `text`, each once.
    pub fn term_ids_of(&self, text: &str) -> Vec<u32> {
        let mut ids = Vec::new();
        for_each_term(text, |t| {
            if let Some(&id) = self.term_ids.get(&t) {
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
        });
        ids
    }

    /// Releases the spare capacity of the posting lists (after a bulk load,
    /// where list growth by doubling leaves much of it unused).
    pub fn shrink_to_fit(&mut self) {
        for p in &mut self.postings {
            p.list.shrink_to_fit();
        }
        self.postings.shrink_to_fit();
        self.docs.shrink_to_fit();
    }

    /// The live documents in which any of `term_ids` occurs in any of
    /// `fields`, sorted and distinct. Ids the index never gave out are
    /// ignored.
    pub fn docs_containing(&self, term_ids: &[u32], fields: &[Field]) -> Vec<DocId> {
        // A bit a document: a document in many postings is kept once, and
        // the set bits read in order are the documents sorted.
        let mut found = vec![0u64; self.docs.len().div_ceil(64)];
        let wanted = fields.iter().fold(0u8, |bits, &f| bits | 1 << f as u8);
        let mut any = false;
        for &id in term_ids {
            let Some(p) = self.postings.get(id as usize) else {
                continue;
            };
            for (doc, present, _) in p.list.iter() {
                if self.docs[doc as usize].alive && present & wanted != 0 {
                    found[doc as usize / 64] |= 1 << (doc % 64);
                    any = true;
                }
            }
        }
        if !any {
            return Vec::new();
        }
        let mut docs = Vec::new();
        for (word, &bits) in found.iter().enumerate() {
            let mut bits = bits;
            while bits != 0 {
                docs.push((word * 64) as DocId + bits.trailing_zeros() as DocId);
                bits &= bits - 1;
            }
        }
        docs
    }

    /// Adds a document made of `fields`; cost proportional to its text.
    pub fn add(&mut self, fields: &[(Field, &str)]) -> DocId {
        let (counts, lens) = field_terms(fields);
        let doc = match self.free.pop() {
            Some(doc) => {
                self.docs[doc as usize] = Doc { alive: true, lens };
                doc
            }
            None => {
                self.docs.push(Doc { alive: true, lens });
                (self.docs.len() - 1) as DocId
            }
        };
        for (term, tf) in counts {
            let next_id = self.postings.len() as u32;
            let id = *self.term_ids.entry(term).or_insert(next_id);
            if id == next_id {
                self.postings.push(Postings::default());
            }
            let p = &mut self.postings[id as usize];
            p.df += 1;
            p.list.push(doc, tf);
            self.total_postings += 1;
        }
        for (sum, len) in self.len_sum.iter_mut().zip(lens) {
            *sum += u64::from(len);
        }
        self.live += 1;
        doc
    }

    /// Removes a document; `fields` must be the text it was added with.
    pub fn remove(&mut self, doc: DocId, fields: &[(Field, &str)]) {
        let Some(slot) = self.docs.get_mut(doc as usize) else {
            return;
        };
        if !slot.alive {
            return;
        }
        slot.alive = false;
        let lens = slot.lens;
        for (sum, len) in self.len_sum.iter_mut().zip(lens) {
            *sum -= u64::from(len);
        }
        let (counts, _) = field_terms(fields);
        for term in counts.keys() {
            if let Some(&id) = self.term_ids.get(term) {
                let p = &mut self.postings[id as usize];
                p.df = p.df.saturating_sub(1);
                self.dead_postings += 1;
            }
        }
        self.live -= 1;
        if self.dead_postings > 1024 && self.dead_postings * 4 > self.total_postings {
            self.compact();
        }
    }

    /// Purges dead postings and frees their slots for reuse.
    fn compact(&mut self) {
        let docs = &self.docs;
        let mut total = 0;
        for p in &mut self.postings {
            p.list.retain(|doc| docs[doc as usize].alive);
            total += p.list.len();
        }
        self.total_postings = total;
        self.dead_postings = 0;
        self.free = (0..self.docs.len() as DocId)
            .filter(|&d| !self.docs[d as usize].alive)
            .collect();
        // Reuse low slots first.
        self.free.reverse();
    }

    /// Similarity of each document to `query`: the idf-weighted share of the
    /// query's known terms that the document covers, each term's credit
    /// being its BM25F saturation `tf'(k1+1)/(k1+tf')` capped at 1. A term
    /// that no document contains cannot tell documents apart and is left
    /// out. 1.0 means every known query term appears at least once in a
    /// field of average length.
    pub fn similarities(&self, query: &str) -> Similarities {
        let mut scores = Vec::new();
        let mut query_terms: Vec<u32> = Vec::new();
        let mut seen = rustc_hash::FxHashSet::default();
        for_each_term(query, |t| {
            if let Some(&id) = self.term_ids.get(&t) {
                if seen.insert(id) {
                    query_terms.push(id);
                }
            }
        });
        self.rarest(&mut query_terms);
        // At most every document of every term's postings matches: sized
        // once, the list is never copied as it grows.
        let mut matched = Vec::with_capacity(
            query_terms
                .iter()
                .map(|&id| self.postings[id as usize].df as usize)
                .sum::<usize>()
                .min(self.docs.len()),
        );
        let n = self.live as f32;
        let mut avg = [0f32; FIELDS];
        for (a, sum) in avg.iter_mut().zip(self.len_sum) {
            *a = if n > 0.0 {
                (sum as f32 / n).max(1.0)
            } else {
                1.0
            };
        }
        let mut idf_total = 0f32;
        // Made with the scores, when a term has postings.
        let mut norms = None;
        for &id in &query_terms {
            let p = &self.postings[id as usize];
            if p.df == 0 {
                continue;
            }
            let idf = self.idf_of_df(p.df);
            idf_total += idf;
            if scores.is_empty() {
                scores = vec![0f32; self.docs.len()];
            }
            let norms = norms.get_or_insert_with(|| FieldNorms::new(avg));
            self.credit_postings(&p.list, idf, norms, &mut scores, &mut matched);
        }
        if idf_total > 0.0 {
            for &doc in &matched {
                scores[doc as usize] = (scores[doc as usize] / idf_total).min(1.0);
            }
        }
        Similarities {
            scores,
            matched,
            parts: None,
        }
    }

    /// Adds `idf` times each live document's credit for one term (its
    /// postings `list`) to `scores`, noting in `matched` each document met
    /// for the first time. Out of line from the pass over the terms, so
    /// that the loop over postings, which most of a query's time is spent
    /// in, keeps what it reads in registers.
    #[inline(never)]
    fn credit_postings(
        &self,
        list: &PostingList,
        idf: f32,
        norms: &mut FieldNorms,
        scores: &mut [f32],
        matched: &mut Vec<DocId>,
    ) {
        let docs = self.docs.as_slice();
        for (doc, fields, tf) in list.iter() {
            let Some(d) = docs.get(doc as usize) else {
                continue;
            };
            if !d.alive {
                continue;
            }
            let credit = if fields.is_power_of_two() {
                // One field (most postings): its credit, kept.
                let f = fields.trailing_zeros() as usize;
                norms.credit(f, d.lens[f], tf.get(f))
            } else {
                norms.credit_over(fields, &d.lens, tf)
            };
            let Some(slot) = scores.get_mut(doc as usize) else {
                continue;
            };
            if *slot == 0.0 {
                matched.push(doc);
            }
            *slot += idf * credit;
        }
    }
}

/// Lengths up to this many terms have their field norms kept for a query.
const KEPT_LENGTHS: usize = 256;

/// A query's BM25F term weights by field and length: a field's weight
/// over its length norm `1 - b + b len / avg`, for a count of one
/// (most postings), computed the first time a query meets that length in
/// that field (a prompt's postings share few lengths) and then looked up;
/// the same operations as computed each time, so the same bits. So is the
/// credit of a term that occurs once in one field alone (most postings).
struct FieldNorms {
    avg: [f32; FIELDS],
    /// `[field][length]`, 0 until computed (a weight is never 0).
    once: Box<[[f32; KEPT_LENGTHS]; FIELDS]>,
    /// `[field][length]`: the credit of one occurrence in that field alone,
    /// 0 until computed (a credit is never 0).
    credit_once: Box<[[f32; KEPT_LENGTHS]; FIELDS]>,
}

impl FieldNorms {
    fn new(avg: [f32; FIELDS]) -> Self {
        FieldNorms {
            avg,
            once: Box::new([[0.0; KEPT_LENGTHS]; FIELDS]),
            credit_once: Box::new([[0.0; KEPT_LENGTHS]; FIELDS]),
        }
    }

    /// The credit of a term that occurs `count` times in field `f` alone,
    /// `len` long: [`saturated`] of its weight (`0 + weight`, as the sum
    /// over fields gives it).
    #[inline(always)]
    fn credit(&mut self, f: usize, len: u16, count: u32) -> f32 {
        if count == 1 {
            if let Some(&kept) = self.credit_once[f].get(usize::from(len)) {
                if kept != 0.0 {
                    return kept;
                }
                let credit = saturated(0f32 + self.weighted(f, len, 1));
                self.credit_once[f][usize::from(len)] = credit;
                return credit;
            }
        }
        saturated(0f32 + self.weighted(f, len, count))
    }

    /// The credit of a term found in several `fields` (bit `f` for field
    /// `f`), `lens` long, `tf` times in each: the sum of their weights
    /// taken in field order (the order the formula sums them in, so the
    /// same bits whichever way), saturated. Out of line: few postings.
    #[cold]
    #[inline(never)]
    fn credit_over(&mut self, fields: u8, lens: &[u16; FIELDS], tf: PackedTf) -> f32 {
        let mut weighted = 0f32;
        let mut bits = fields;
        while bits != 0 {
            let f = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            weighted += self.weighted(f, lens[f], tf.get(f));
        }
        saturated(weighted)
    }

    /// Field `f`'s weight for `count` occurrences in a field `len` long.
    #[inline(always)]
    fn weighted(&mut self, f: usize, len: u16, count: u32) -> f32 {
        if count == 1 {
            let avg = self.avg[f];
            if let Some(kept) = self.once[f].get_mut(usize::from(len)) {
                if *kept == 0.0 {
                    *kept = FIELD_WEIGHTS[f] * 1.0 / length_norm(len, avg);
                }
                return *kept;
            }
        }
        FIELD_WEIGHTS[f] * count as f32 / length_norm(len, self.avg[f])
    }
}

/// A term's credit for its BM25F weight `weighted`: the saturation
/// `tf'(k1+1)/(k1+tf')`, capped at 1.
#[inline(always)]
fn saturated(weighted: f32) -> f32 {
    (weighted * (K1 + 1.0) / (K1 + weighted)).min(1.0)
}

/// BM25's length norm of a field `len` terms long, where fields average
/// `avg`.
fn length_norm(len: u16, avg: f32) -> f32 {
    1.0 - B + B * f32::from(len) / avg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fusing_keeps_lexical_matches_and_the_closest_few_by_meaning() {
        // Documents 0 and 1 matched by words; 2..8 only by meaning.
        let lexical = Similarities {
            scores: vec![0.5, 0.2, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
            matched: vec![0, 1],
            parts: None,
        };
        let cosines = vec![0.1, 0.9, 0.8, 0.3, 0.95, 0.8, 0.0, 0.6];
        let fuse = |l: f32, c: f32| l + (c - 0.5).max(0.0);
        let fused = lexical.fused_with(cosines, fuse, 2, 0.5);
        assert_eq!(fused.get(0), 0.5);
        assert!((fused.get(1) - 0.6).abs() < 1e-6);
        // The two closest of the rest: 4, then 2 (before 5, its equal).
        assert_eq!(&fused.matched()[2..], &[4, 2]);
        assert!((fused.get(4) - 0.45).abs() < 1e-6);
        assert_eq!(fused.get(5), 0.0);
        assert_eq!(fused.get(7), 0.0);
        assert_eq!(fused.parts(1), Some((0.2, 0.9)));
        let none = Similarities {
            scores: vec![0.0; 3],
            matched: vec![],
            parts: None,
        };
        assert!(none
            .fused_with(vec![0.9; 3], fuse, 0, 0.5)
            .matched()
            .is_empty());
    }

    fn doc(title: &str, body: &str) -> Vec<(Field, String)> {
        vec![
            (Field::Title, title.to_string()),
            (Field::Problem, body.to_string()),
        ]
    }

    fn add(index: &mut TextIndex, d: &[(Field, String)]) -> DocId {
        let fields: Vec<(Field, &str)> = d.iter().map(|(f, s)| (*f, s.as_str())).collect();
        index.add(&fields)
    }

    fn remove(index: &mut TextIndex, id: DocId, d: &[(Field, String)]) {
        let fields: Vec<(Field, &str)> = d.iter().map(|(f, s)| (*f, s.as_str())).collect();
        index.remove(id, &fields)
    }

    #[test]
    fn ranks_the_document_that_covers_the_query() {
        let mut index = TextIndex::new();
        let a = add(
            &mut index,
            &doc(
                "Webhook queue with idempotency",
                "Duplicate webhook deliveries",
            ),
        );
        let b = add(
            &mut index,
            &doc("Tailwind content paths", "Classes missing in production"),
        );
        let c = add(
            &mut index,
            &doc(
                "Fastify plugin order",
                "Webhook route registered before auth",
            ),
        );
        let sims = index.similarities("implement webhook idempotency");
        assert!(sims.get(a) > 0.9, "{}", sims.get(a));
        assert!(sims.get(c) > 0.0 && sims.get(c) < sims.get(a));
        assert_eq!(sims.get(b), 0.0);
        assert!(!sims.matched().contains(&b));
    }

    #[test]
    fn kept_field_norms_give_the_bits_the_formula_gives() {
        // Counts of one and more, short fields and one longer than the
        // lengths kept, in one field alone (credits kept) and in several
        // at once.
        let long = "pad ".repeat(KEPT_LENGTHS + 40);
        let mut index = TextIndex::new();
        for i in 0..60 {
            let words: String = (0..i).map(|j| format!("w{j} ")).collect();
            let title = if i % 3 == 0 { "retry webhook" } else { "other" };
            let twice = if i % 4 == 0 { "webhook webhook" } else { "" };
            let body = format!("retry {words}{twice}");
            let body = if i == 7 {
                format!("{body} {long}")
            } else {
                body
            };
            // Mostly credits below their cap of 1, where every bit shows.
            let fields: &[(Field, &str)] = match i % 3 {
                0 => &[(Field::Title, title), (Field::Problem, &body)],
                1 => &[(Field::Context, &body), (Field::Body, &body)],
                _ => &[(Field::Solution, &body), (Field::Body, &body)],
            };
            index.add(fields);
        }
        index.add(&[(Field::Title, "other"), (Field::Problem, "nothing here")]);
        let query = "retry webhook pad";
        let sims = index.similarities(query);
        // The formula, each weight computed where it is used.
        let n = index.live as f32;
        let avg: Vec<f32> = index
            .len_sum
            .iter()
            .map(|&s| (s as f32 / n).max(1.0))
            .collect();
        let mut ids = Vec::new();
        for_each_term(query, |t| ids.extend(index.term_ids.get(&t).copied()));
        let mut expected = vec![0f32; index.docs.len()];
        let mut idf_total = 0f32;
        for id in ids {
            let p = &index.postings[id as usize];
            let idf = index.idf_of_df(p.df);
            idf_total += idf;
            for (doc, _, tf) in p.list.iter() {
                let d = &index.docs[doc as usize];
                let mut weighted = 0f32;
                for f in 0..FIELDS {
                    let count = tf.get(f);
                    if count > 0 {
                        let norm = 1.0 - B + B * f32::from(d.lens[f]) / avg[f];
                        weighted += FIELD_WEIGHTS[f] * count as f32 / norm;
                    }
                }
                expected[doc as usize] += idf * (weighted * (K1 + 1.0) / (K1 + weighted)).min(1.0);
            }
        }
        assert_eq!(sims.matched().len(), 60);
        assert_eq!(expected.len(), 61);
        for (doc, sum) in expected.iter().enumerate() {
            let want = (sum / idf_total).min(1.0);
            assert_eq!(
                sims.get(doc as DocId).to_bits(),
                want.to_bits(),
                "doc {doc}"
            );
        }
    }

    #[test]
    fn docs_containing_reads_only_the_fields_asked() {
        let mut index = TextIndex::new();
        let in_keywords = index.add(&[(Field::Keywords, "webhook"), (Field::Title, "a")]);
        let in_title = index.add(&[(Field::Title, "webhook")]);
        let in_context = index.add(&[(Field::Context, "webhook retry")]);
        let ids = index.term_ids_of("webhook");
        assert_eq!(
            index.docs_containing(&ids, &[Field::Keywords, Field::Context]),
            [in_keywords, in_context]
        );
        assert_eq!(index.docs_containing(&ids, &[Field::Title]), [in_title]);
        assert!(index.docs_containing(&ids, &[Field::Body]).is_empty());
    }

    #[test]
    fn unknown_terms_do_not_dilute() {
        let mut index = TextIndex::new();
        let a = add(&mut index, &doc("Webhook idempotency", "x"));
        add(&mut index, &doc("Other", "y"));
        let with = index.similarities("webhook idempotency zyzzyva");
        let without = index.similarities("webhook idempotency");
        assert!((with.get(a) - without.get(a)).abs() < 1e-6);
    }

    #[test]
    fn removal_is_exact_and_slots_are_not_confused() {
        let mut index = TextIndex::new();
        let docs: Vec<_> = (0..3000)
            .map(|i| {
                doc(
                    &format!("item {i}"),
                    if i % 2 == 0 { "redb storage" } else { "socket" },
                )
            })
            .collect();
        let ids: Vec<_> = docs.iter().map(|d| add(&mut index, d)).collect();
        for (id, d) in ids.iter().zip(&docs).take(2000) {
            remove(&mut index, *id, d);
        }
        assert_eq!(index.len(), 1000);
        // Compaction ran and freed slots; a new doc takes one.
        let fresh = doc("fresh", "unrelated words");
        let new_id = add(&mut index, &fresh);
        assert!(new_id < 2000);
        let sims = index.similarities("redb");
        assert_eq!(sims.get(new_id), 0.0);
        assert_eq!(sims.matched().len(), 500);
    }
}
