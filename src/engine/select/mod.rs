//! Selection: each live item scored by its kind's policy against one query,
//! then thresholds and caps applied per kind.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use crate::knowledge::item::normalize_role;
use crate::knowledge::Item;
use crate::learning::Learned;
use crate::protocol::{Kind, Query};
use crate::render::{Entry, Note, Section};
use crate::scoring::lesson::GateContext;
use crate::scoring::observation::Keywords;
use crate::scoring::rubric::RubricContext;
use crate::text::bm25::{Similarities, MAX_QUERY_TERMS};
use crate::text::tokenize::terms;

pub(super) mod decision;
mod exemplars;
mod experience;
mod gotchas;
mod learnings;
pub(super) mod lessons;
mod observations;
pub(super) mod patterns;
pub(super) mod task;

pub(super) use exemplars::drafting;
pub(super) use gotchas::gotcha_match;

use super::features::{bit, hash, mask, term_ids};
use super::{Engine, Live, GLOBAL};

fn dims(pairs: &[(&str, f64)]) -> BTreeMap<String, f64> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

fn entry(
    section: Section,
    item: &Arc<Item>,
    score: f64,
    dimensions: BTreeMap<String, f64>,
    note: Note,
) -> Entry {
    Entry {
        section,
        item: item.clone(),
        score,
        dimensions,
        note,
    }
}

/// Sorts best first: higher score, then higher similarity, then id.
fn by_score_then_sim<T>(a: &(T, f64, f64, &Arc<Item>), b: &(T, f64, f64, &Arc<Item>)) -> Ordering {
    b.1.total_cmp(&a.1)
        .then(b.2.total_cmp(&a.2))
        .then_with(|| a.3.id.cmp(&b.3.id))
}

/// Everything derived from the query once.
pub(super) struct QueryFacts<'q> {
    pub(super) query: &'q Query,
    /// What was learned from use.
    pub(super) learned: &'q Learned,
    /// The team of the query's project, where it shares its verdicts.
    pub(super) team: Option<&'q crate::learning::team::Team>,
    /// Whether the query has a task (a prompt), not a session start.
    pub(super) on_prompt: bool,
    /// Items the session has already been shown.
    pub(super) exclude: &'q HashSet<String>,
    /// The [`crate::scoring::lesson::spread_of`] of each of them: a lesson
    /// whose spread is not here was not shown, and its id is not read
    /// ([`QueryFacts::lesson_excluded`]).
    exclude_spreads: rustc_hash::FxHashSet<u64>,
    pub(super) rubric: RubricContext,
    pub(super) tags: Vec<String>,
    /// The key of an item's own record in the context of `tags`
    /// (`learning::state::context_record`), made once for every item the
    /// query assesses.
    pub(super) record_key: Option<String>,
    pub(super) os: String,
    pub(super) home: Option<String>,
    /// The engine's text index, for the facts below that only some kinds
    /// read: each is made the first time it is read, so a query on
    /// knowledge without those kinds (a team's lessons) does not make it.
    index: &'q crate::text::TextIndex,
    /// The task and the conversation's keywords, as one text.
    keyword_text: String,
    /// That text with the tags, the repository's name and the agent.
    context_text: String,
    keyword_terms: std::cell::OnceCell<Vec<u32>>,
    context_terms: std::cell::OnceCell<Vec<u32>>,
    observation_keywords: std::cell::OnceCell<Keywords>,
    /// Bloom bits of the product, the tags and the agent (0 when absent),
    /// and of the agent's core and adjacent domains.
    pub(super) product_bit: u64,
    pub(super) tag_bits: u64,
    pub(super) agent_bit: u64,
    pub(super) domain_bits: u64,
    pub(super) adjacent_bits: u64,
    /// Hash of the normalised agent.
    pub(super) agent_hash: u64,
    gotcha_hashes: std::cell::OnceCell<rustc_hash::FxHashSet<u64>>,
}

impl<'q> QueryFacts<'q> {
    pub(super) fn new(
        engine: &'q Engine,
        learned: &'q Learned,
        query: &'q Query,
        now: i64,
        exclude: &'q HashSet<String>,
    ) -> Self {
        let agent = query
            .agent
            .as_deref()
            .map(normalize_role)
            .filter(|a| !a.is_empty());
        let role = agent.as_deref().and_then(|a| engine.roles.get(a));
        let lower = |v: &[String]| {
            v.iter()
                .map(|s| s.trim().to_lowercase())
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
        };
        let tags: Vec<String> = query
            .tags
            .iter()
            .filter_map(|t| crate::learning::workspace_tag(t))
            .collect();
        // Each word once, in order of appearance.
        let mut seen_words = rustc_hash::FxHashSet::default();
        let task_words = query
            .task
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .filter(|w| seen_words.insert(w.clone()))
            .collect();
        let rubric = RubricContext {
            product: query
                .product
                .as_deref()
                .map(|p| p.trim().to_lowercase())
                .filter(|p| !p.is_empty()),
            tags: tags.clone(),
            agent: agent.clone(),
            domains: role.map(|r| lower(&r.domains)).unwrap_or_default(),
            adjacent_domains: role.map(|r| lower(&r.adjacent)).unwrap_or_default(),
            task_words,
            now,
        };
        let keyword_text = format!("{} {}", query.task, query.keywords.join(" "));
        let repo_name = query
            .repo
            .as_deref()
            .map(|r| r.trim_end_matches('/').rsplit('/').next().unwrap_or(r))
            .unwrap_or("");
        let context_text = format!(
            "{keyword_text} {} {repo_name} {}",
            tags.join(" "),
            agent.as_deref().unwrap_or("")
        );
        let team = match engine.scope_of(query) {
            crate::engine::GLOBAL => None,
            scope => engine
                .projects()
                .get(scope as usize - 1)
                .and_then(|repo| learned.teams.get(repo)),
        };
        QueryFacts {
            learned,
            team,
            on_prompt: !query.task.trim().is_empty(),
            product_bit: rubric.product.as_deref().map_or(0, bit),
            tag_bits: mask(&tags),
            agent_bit: agent.as_deref().map_or(0, bit),
            domain_bits: mask(&rubric.domains),
            adjacent_bits: mask(&rubric.adjacent_domains),
            agent_hash: agent.as_deref().map_or(0, hash),
            gotcha_hashes: Default::default(),
            exclude,
            exclude_spreads: exclude
                .iter()
                .map(|id| crate::scoring::lesson::spread_of(id))
                .collect(),
            query,
            rubric,
            record_key: crate::learning::state::context_record(&tags),
            tags,
            os: query
                .os
                .clone()
                .unwrap_or_else(|| std::env::consts::OS.to_string()),
            home: std::env::var("HOME").ok(),
            index: &engine.index,
            keyword_text,
            context_text,
            keyword_terms: Default::default(),
            context_terms: Default::default(),
            observation_keywords: Default::default(),
        }
    }

    /// Stemmed task and conversation keywords, as sorted term ids.
    pub(super) fn keyword_terms(&self) -> &[u32] {
        self.keyword_terms
            .get_or_init(|| term_ids(self.index, &self.keyword_text))
    }

    /// Keyword terms plus tags, repo and agent, as sorted term ids.
    pub(super) fn context_terms(&self) -> &[u32] {
        self.context_terms
            .get_or_init(|| term_ids(self.index, &self.context_text))
    }

    /// For seed 002's keyword match: the conversation's keywords, or the
    /// task's terms when there are none.
    pub(super) fn observation_keywords(&self) -> &Keywords {
        self.observation_keywords.get_or_init(|| {
            let query = self.query;
            let keywords = if query.keywords.is_empty() {
                let mut seen: Vec<String> = terms(&query.task);
                seen.sort();
                seen.dedup();
                // A long task (a pasted log): its rarest known terms, as
                // the text search takes them, so each observation is not
                // scanned for thousands of words.
                if seen.len() > MAX_QUERY_TERMS {
                    let df = |t: &String| {
                        self.index
                            .term_id(t)
                            .map_or(u32::MAX, |id| self.index.doc_freq(id))
                    };
                    seen.sort_by_cached_key(|t| (df(t), t.clone()));
                    seen.truncate(MAX_QUERY_TERMS);
                    seen.sort();
                }
                seen
            } else {
                query
                    .keywords
                    .iter()
                    .map(|k| k.trim().to_lowercase())
                    .filter(|k| !k.is_empty())
                    .collect()
            };
            Keywords::new(&keywords)
        })
    }

    /// Hashes a single-word gotcha category must be among to match: the
    /// agent's domains and role words, and the task's words with and
    /// without a plural `s`.
    pub(super) fn gotcha_hashes(&self) -> &rustc_hash::FxHashSet<u64> {
        self.gotcha_hashes.get_or_init(|| {
            let rubric = &self.rubric;
            let mut hashes: rustc_hash::FxHashSet<u64> =
                rubric.domains.iter().map(|d| hash(d)).collect();
            hashes.extend(rubric.agent.iter().flat_map(|a| a.split('-')).map(hash));
            for w in &rubric.task_words {
                hashes.insert(hash(w));
                hashes.insert(hash(&format!("{w}s")));
                if let Some(singular) = w.strip_suffix('s') {
                    hashes.insert(hash(singular));
                }
            }
            hashes
        })
    }

    /// Whether the session has already seen `item`.
    pub(super) fn excluded(&self, item: &Item) -> bool {
        !self.exclude.is_empty() && self.exclude.contains(&item.id)
    }

    /// [`QueryFacts::excluded`] for a lesson the prompt matched, by its
    /// spread first: a prompt matches thousands, and reading each one's id
    /// to hash it costs two cache misses after a pause.
    pub(super) fn lesson_excluded(&self, live: &Live) -> bool {
        match live.features {
            super::features::Features::Lesson { spread, .. } => {
                self.exclude_spreads.contains(&spread) && self.excluded(&live.item)
            }
            _ => self.excluded(&live.item),
        }
    }

    fn wants(&self, kind: Kind) -> bool {
        self.query.kinds.is_empty() || self.query.kinds.contains(&kind)
    }

    pub(super) fn gate(&self) -> GateContext<'_> {
        let mut paths: Vec<&str> = self.query.paths.iter().map(String::as_str).collect();
        paths.extend(self.query.cwd.as_deref());
        paths.extend(self.query.repo.as_deref().filter(|r| r.starts_with('/')));
        GateContext {
            os: &self.os,
            repo: self.query.repo.as_deref(),
            paths,
            mcp_servers: &self.query.mcp_servers,
            home: self.home.as_deref(),
        }
    }
}

/// Live items grouped by kind.
#[derive(Default)]
struct ByKind<'e> {
    patterns: Vec<&'e Live>,
    anti_patterns: Vec<&'e Live>,
    gotchas: Vec<&'e Live>,
    experience: Vec<&'e Live>,
    lessons: Vec<&'e Live>,
    observations: Vec<&'e Live>,
    exemplars: Vec<&'e Live>,
    seeds: Vec<&'e Live>,
}

impl<'e> ByKind<'e> {
    /// The list for `kind` (none for learnings, which seed 003 finds by
    /// their words).
    fn list(&mut self, kind: Kind) -> Option<&mut Vec<&'e Live>> {
        Some(match kind {
            Kind::Pattern => &mut self.patterns,
            Kind::AntiPattern => &mut self.anti_patterns,
            Kind::Lesson => &mut self.lessons,
            Kind::Gotcha => &mut self.gotchas,
            Kind::Experience => &mut self.experience,
            Kind::Observation => &mut self.observations,
            Kind::Exemplar => &mut self.exemplars,
            Kind::Seed => &mut self.seeds,
            Kind::Learning => return None,
        })
    }
}

/// What a query selected, and what its lesson search noted.
pub(super) struct Selection {
    pub(super) entries: Vec<Entry>,
    pub(super) lessons: lessons::Noted,
    /// What the decision to show made of each candidate (empty when it
    /// did not decide this query).
    pub(super) decided: Vec<decision::Considered>,
}

/// Scores every live item against `query` and returns the chosen entries.
pub(super) fn select(
    engine: &Engine,
    learned: &Learned,
    query: &Query,
    now: i64,
    exclude: &HashSet<String>,
) -> Selection {
    let sims = engine.similarities(&query.task);
    let candidates = candidates(engine, query, &sims);
    let facts = QueryFacts::new(engine, learned, query, now, exclude);
    select_with(engine, &facts, &sims, candidates.as_ref())
}

/// The decision's candidates when it decides `query` (a prompt, with
/// `[query] decide` on).
pub(super) fn candidates<'a>(
    engine: &'a Engine,
    query: &Query,
    sims: &'a Similarities,
) -> Option<decision::Candidates<'a>> {
    engine
        .decides(query)
        .then(|| decision::Candidates::new(engine, &query.task, sims, engine.scope_of(query)))
}

/// [`select`] with the query's similarities and the decision's candidates
/// given (what `explain` also reads).
pub(super) fn select_with(
    engine: &Engine,
    facts: &QueryFacts<'_>,
    sims: &Similarities,
    candidates: Option<&decision::Candidates<'_>>,
) -> Selection {
    let query = facts.query;
    let scope = engine.scope_of(query);
    let task = task::Task::new(sims, candidates);
    let mut by_kind = ByKind::default();
    // On a prompt a lesson is a candidate only with a task band, which
    // only a lesson the prompt matched can have: those come from the
    // matches, in the order of the pass over every item below, so a
    // lesson-heavy corpus is not passed over whole on every prompt.
    // At a session start only pinned lessons come in: those the engine
    // keeps track of and those learning pinned, not a pass over them all.
    if facts.wants(Kind::Lesson) {
        by_kind.lessons = if facts.on_prompt {
            engine.matched_in_order(
                sims,
                |doc| task.band_of(doc) > 0,
                |live| {
                    live.kind == Kind::Lesson
                        && (live.scope == GLOBAL || engine.visible(live, scope))
                },
            )
        } else {
            engine.pinned_lessons(facts.learned.pins().keys().map(|id| id.as_str()), scope)
        };
    }
    // On a prompt, patterns and anti-patterns are shown only with task
    // points, which only an item the task matched can have (the
    // decision's candidates are matches too): they come from the matches
    // as well, in the same order. (On a task without a prompt, the pass
    // below costs less than ordering the matches.)
    let rubric_matched = facts.query.task_match;
    let wanted = |k: Kind| facts.wants(k) && engine.has(k);
    if rubric_matched && (wanted(Kind::Pattern) || wanted(Kind::AntiPattern)) {
        let matched = engine.matched_in_order(
            sims,
            |_| true,
            |live| {
                matches!(live.kind, Kind::Pattern | Kind::AntiPattern)
                    && (live.scope == GLOBAL || engine.visible(live, scope))
            },
        );
        for live in matched {
            match live.kind {
                Kind::Pattern => by_kind.patterns.push(live),
                _ => by_kind.anti_patterns.push(live),
            }
        }
    }
    // Then the other kinds: nothing to pass over when the knowledge holds
    // only lessons (gathered above, from the matches or the pinned ones)
    // and learnings (which seed 003 finds by their words), or only what
    // was gathered above.
    let gathered_above = |k: Kind| match k {
        Kind::Lesson => true,
        Kind::Pattern | Kind::AntiPattern => rubric_matched,
        Kind::Learning => true,
        _ => false,
    };
    if Kind::ALL
        .iter()
        .any(|&k| !gathered_above(k) && engine.has(k))
    {
        // Each list is sized for every live item of its kind first: at a
        // session start the lessons' list holds thousands, and growing it
        // by pushing copied it again and again.
        // The kinds this pass gathers, by `Kind as usize`.
        let mut gathered = [false; Kind::ALL.len()];
        for &kind in Kind::ALL.iter().filter(|&&k| !gathered_above(k)) {
            if let Some(list) = by_kind.list(kind) {
                list.reserve(engine.live_count(kind));
                gathered[kind as usize] = true;
            }
        }
        for live in engine.live_items() {
            if !gathered[live.kind as usize] {
                continue;
            }
            if live.scope != GLOBAL && !engine.visible(live, scope) {
                continue;
            }
            if let Some(list) = by_kind.list(live.kind) {
                list.push(live);
            }
        }
    }
    let mut out = Vec::new();
    let mut noted = lessons::Noted::default();
    if facts.wants(Kind::Experience) {
        experience::experience(facts, &by_kind.experience, &mut out);
    }
    if facts.wants(Kind::Pattern) {
        patterns::patterns(facts, &by_kind.patterns, &task, &mut out);
    }
    if facts.wants(Kind::AntiPattern) {
        patterns::anti_patterns(facts, &by_kind.anti_patterns, &task, &mut out);
    }
    if facts.wants(Kind::Gotcha) {
        gotchas::gotchas(facts, &by_kind.gotchas, &task, &mut out);
    }
    if facts.wants(Kind::Lesson) {
        noted = lessons::lessons(facts, &by_kind.lessons, &task, &mut out);
    }
    if facts.wants(Kind::Learning) && engine.has(Kind::Learning) {
        learnings::learnings(engine, facts, &mut out);
    }
    if facts.wants(Kind::Observation) {
        observations::observations(facts, &by_kind.observations, facts.rubric.now, &mut out);
    }
    if exemplars::drafting(facts, &by_kind.exemplars) {
        exemplars::winning_patterns(
            facts,
            &by_kind.exemplars,
            &by_kind.seeds,
            facts.rubric.now,
            &mut out,
        );
    }
    // The prompt hook's block (a task the items must be about): one
    // decision across kinds. `memd query` keeps the seeds' own rules.
    let decided = match candidates {
        Some(candidates) => decision::decide(engine, candidates, scope, &mut out),
        None => Vec::new(),
    };
    Selection {
        entries: out,
        lessons: noted,
        decided,
    }
}

/// Keeps the `k` best of `items` (by `cmp`, best first), sorted: a partial
/// selection, then a sort of just those.
fn top_k<T>(items: &mut Vec<T>, k: usize, cmp: impl Fn(&T, &T) -> Ordering) {
    if k == 0 {
        items.clear();
        return;
    }
    if items.len() > k {
        items.select_nth_unstable_by(k - 1, &cmp);
        items.truncate(k);
    }
    items.sort_by(cmp);
}
