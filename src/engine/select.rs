//! Selection: each live item scored by its kind's policy against one query,
//! then thresholds and caps applied per kind.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use crate::knowledge::item::normalize_role;
use crate::knowledge::{Body, Item};
use crate::protocol::{Kind, Query};
use crate::render::{Entry, Note, Section};
use crate::scoring::exemplar::{self, Candidate, MAX_COLD_START_SEEDS};
use crate::scoring::learning::{self as learning_policy, MAX_LEARNINGS, MIN_SIMILARITY};
use crate::scoring::lesson::{self, GateContext, MAX_LESSONS, MAX_PINNED, MIN_TASK_SIMILARITY};
use crate::scoring::observation::{self, MAX_OBSERVATIONS};
use crate::scoring::rubric::{
    self, match_gotcha, score_anti_pattern, score_pattern, RubricContext, MAX_ANTI_PATTERNS,
    MAX_GOTCHAS,
};
use crate::scoring::tag_relevance::{average_over_tags, verdict, TagVerdict};
use crate::text::tokenize::terms;
use crate::text::Field;
use crate::time::{SECS_PER_DAY, SECS_PER_HOUR};

use super::features::{bit, hash, mask, term_ids, Features};
use super::{Engine, Live, GLOBAL};

/// Words that say the task drafts a piece of content, which is when seed
/// 004's winning patterns (or ideas from notes) are retrieved. The kinds of
/// the exemplars loaded count too.
const DRAFT_WORDS: &[&str] = &[
    "tweet",
    "reply",
    "post",
    "thread",
    "commit",
    "answer",
    "email",
    "announcement",
    "changelog",
    "comment",
    "draft",
    "newsletter",
    "blog",
];

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
    /// Items the session has already been shown.
    pub(super) exclude: &'q HashSet<String>,
    pub(super) rubric: RubricContext,
    pub(super) tags: Vec<String>,
    pub(super) os: String,
    pub(super) home: Option<String>,
    /// Stemmed task and conversation keywords, as sorted term ids.
    pub(super) keyword_terms: Vec<u32>,
    /// Keyword terms plus tags, repo and agent, as sorted term ids.
    pub(super) context_terms: Vec<u32>,
    /// For seed 002's keyword match, lower case: the conversation's
    /// keywords, or the task's terms when there are none.
    pub(super) observation_keywords: Vec<String>,
    /// Bloom bits of the product, the tags and the agent (0 when absent),
    /// and of the agent's core and adjacent domains.
    pub(super) product_bit: u64,
    pub(super) tag_bits: u64,
    pub(super) agent_bit: u64,
    pub(super) domain_bits: u64,
    pub(super) adjacent_bits: u64,
    /// Hash of the normalised agent.
    pub(super) agent_hash: u64,
    /// Hashes a single-word gotcha category must be among to match: the
    /// agent's domains and role words, and the task's words with and
    /// without a plural `s`.
    pub(super) gotcha_hashes: Vec<u64>,
}

impl<'q> QueryFacts<'q> {
    pub(super) fn new(
        engine: &Engine,
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
        let tags = lower(&query.tags);
        let task_words = query
            .task
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
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
        let keyword_terms = term_ids(&engine.index, &keyword_text);
        let context_terms = term_ids(&engine.index, &context_text);
        let observation_keywords = if query.keywords.is_empty() {
            let mut seen: Vec<String> = terms(&query.task);
            seen.sort();
            seen.dedup();
            seen
        } else {
            query
                .keywords
                .iter()
                .map(|k| k.trim().to_lowercase())
                .filter(|k| !k.is_empty())
                .collect()
        };
        let mut gotcha_hashes: Vec<u64> = rubric.domains.iter().map(|d| hash(d)).collect();
        gotcha_hashes.extend(agent.iter().flat_map(|a| a.split('-')).map(hash));
        for w in &rubric.task_words {
            gotcha_hashes.push(hash(w));
            gotcha_hashes.push(hash(&format!("{w}s")));
            if let Some(singular) = w.strip_suffix('s') {
                gotcha_hashes.push(hash(singular));
            }
        }
        QueryFacts {
            product_bit: rubric.product.as_deref().map_or(0, bit),
            tag_bits: mask(&tags),
            agent_bit: agent.as_deref().map_or(0, bit),
            domain_bits: mask(&rubric.domains),
            adjacent_bits: mask(&rubric.adjacent_domains),
            agent_hash: agent.as_deref().map_or(0, hash),
            gotcha_hashes,
            exclude,
            query,
            rubric,
            tags,
            os: query
                .os
                .clone()
                .unwrap_or_else(|| std::env::consts::OS.to_string()),
            home: std::env::var("HOME").ok(),
            keyword_terms,
            context_terms,
            observation_keywords,
        }
    }

    /// Whether the session has already seen `item`.
    pub(super) fn excluded(&self, item: &Item) -> bool {
        !self.exclude.is_empty() && self.exclude.contains(&item.id)
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

/// Scores every live item against `query` and returns the chosen entries.
pub(super) fn select(
    engine: &Engine,
    query: &Query,
    now: i64,
    exclude: &HashSet<String>,
) -> Vec<Entry> {
    let facts = QueryFacts::new(engine, query, now, exclude);
    let scope = engine.scope_of(query);
    let sims = engine.index.similarities(&query.task);
    let sim = |live: &Live| f64::from(sims.get(live.doc));
    let mut by_kind = ByKind::default();
    for live in engine.live_items() {
        if live.scope != GLOBAL && !engine.visible(live, scope) {
            continue;
        }
        let list = match live.kind {
            Kind::Pattern => &mut by_kind.patterns,
            Kind::AntiPattern => &mut by_kind.anti_patterns,
            Kind::Gotcha => &mut by_kind.gotchas,
            Kind::Experience => &mut by_kind.experience,
            Kind::Lesson => &mut by_kind.lessons,
            Kind::Learning => continue,
            Kind::Observation => &mut by_kind.observations,
            Kind::Exemplar => &mut by_kind.exemplars,
            Kind::Seed => &mut by_kind.seeds,
        };
        list.push(live);
    }
    let mut out = Vec::new();
    if facts.wants(Kind::Experience) {
        experience(&facts, &by_kind.experience, &mut out);
    }
    if facts.wants(Kind::Pattern) {
        patterns(engine, &facts, &by_kind.patterns, &sim, &mut out);
    }
    if facts.wants(Kind::AntiPattern) {
        anti_patterns(&facts, &by_kind.anti_patterns, &sim, &mut out);
    }
    if facts.wants(Kind::Gotcha) {
        gotchas(&facts, &by_kind.gotchas, &sim, &mut out);
    }
    if facts.wants(Kind::Lesson) {
        lessons(engine, &facts, &by_kind.lessons, &sim, &mut out);
    }
    if facts.wants(Kind::Learning) {
        learnings(engine, &facts, &mut out);
    }
    if facts.wants(Kind::Observation) {
        observations(&facts, &by_kind.observations, now, &mut out);
    }
    if drafting(&facts, &by_kind.exemplars) {
        winning_patterns(&facts, &by_kind.exemplars, &by_kind.seeds, now, &mut out);
    }
    out
}

fn experience(facts: &QueryFacts<'_>, items: &[&Live], out: &mut Vec<Entry>) {
    let Some(agent) = &facts.rubric.agent else {
        return;
    };
    let mut mine: Vec<&Arc<Item>> = items
        .iter()
        .map(|l| &l.item)
        .filter(|i| matches!(&i.body, Body::Experience(x) if &x.agent == agent))
        .filter(|i| !facts.excluded(i))
        .collect();
    mine.sort_by(|a, b| {
        (&a.source.file, a.source.pos.line).cmp(&(&b.source.file, b.source.pos.line))
    });
    for item in mine {
        out.push(entry(
            Section::Experience,
            item,
            1.0,
            BTreeMap::new(),
            Note::None,
        ));
    }
}

fn patterns(
    engine: &Engine,
    facts: &QueryFacts<'_>,
    items: &[&Live],
    sim: &dyn Fn(&Live) -> f64,
    out: &mut Vec<Entry>,
) {
    let learned_applications = !engine.learned().applications.is_empty();
    // An upper bound of each pattern's total from its inline features (a
    // Bloom hit counts as a match), best first.
    let mut bounded: Vec<(u8, &Live)> = items
        .iter()
        .filter_map(|live| {
            let Features::Pattern(f) = &live.features else {
                return None;
            };
            let product = if f.products & facts.product_bit != 0 {
                2
            } else if f.tags & facts.tag_bits != 0 {
                1
            } else {
                0
            };
            let role = if f.roles & facts.agent_bit != 0 || f.category & facts.domain_bits != 0 {
                2
            } else if f.adjacent & facts.agent_bit != 0 || f.category & facts.adjacent_bits != 0 {
                1
            } else {
                0
            };
            let times = if learned_applications {
                u32::MAX
            } else {
                f.times_applied
            };
            let bound = rubric::task_points(sim(live))
                + product
                + role
                + rubric::history_points(f.confidence, times)
                + rubric::recency_points(f.learned_on, facts.rubric.now);
            (bound >= rubric::FALLBACK_THRESHOLD).then_some((bound, *live))
        })
        .collect();
    bounded.sort_unstable_by_key(|b| std::cmp::Reverse(b.0));
    // Exact scores, in bound order, until no bound can reach the fifth best.
    let mut scored = Vec::new();
    let mut best_totals: Vec<u8> = Vec::new();
    for (bound, live) in bounded {
        if best_totals.len() >= rubric::MAX_PATTERNS
            && bound < best_totals[rubric::MAX_PATTERNS - 1]
        {
            break;
        }
        let Body::Pattern(p) = &live.item.body else {
            continue;
        };
        if facts.excluded(&live.item) {
            continue;
        }
        let s = sim(live);
        let extra = engine.learned().times_applied(&live.item.id);
        let score = score_pattern(p, &live.item.tags, s, extra, &facts.rubric);
        if score.total() < rubric::FALLBACK_THRESHOLD {
            continue;
        }
        let at = best_totals.partition_point(|&t| t >= score.total());
        best_totals.insert(at, score.total());
        scored.push((score, f64::from(score.total()), s, &live.item));
    }
    top_k(&mut scored, rubric::MAX_PATTERNS, by_score_then_sim);
    let ranked: Vec<(usize, u8)> = scored
        .iter()
        .enumerate()
        .map(|(i, c)| (i, c.0.total()))
        .collect();
    for (i, tier) in rubric::select_patterns(&ranked) {
        let (score, total, s, item) = &scored[i];
        let d = dims(&[
            ("task", f64::from(score.task)),
            ("product", f64::from(score.product)),
            ("role", f64::from(score.role)),
            ("history", f64::from(score.history)),
            ("recency", f64::from(score.recency)),
            ("similarity", *s),
        ]);
        out.push(entry(
            Section::Patterns,
            item,
            *total,
            d,
            Note::Pattern {
                total: score.total(),
                tier,
            },
        ));
    }
}

fn anti_patterns(
    facts: &QueryFacts<'_>,
    items: &[&Live],
    sim: &dyn Fn(&Live) -> f64,
    out: &mut Vec<Entry>,
) {
    let mut scored: Vec<_> = items
        .iter()
        .filter_map(|live| {
            let s = sim(live);
            // Role fit gives at most 2: without task points the threshold
            // of 3 is out of reach.
            if rubric::task_points(s) + 2 < rubric::ANTI_PATTERN_THRESHOLD {
                return None;
            }
            let Body::AntiPattern(a) = &live.item.body else {
                return None;
            };
            let score = score_anti_pattern(a, s, &facts.rubric);
            (score.shown() && !facts.excluded(&live.item)).then_some((
                score,
                f64::from(score.total()),
                s,
                &live.item,
            ))
        })
        .collect();
    top_k(&mut scored, MAX_ANTI_PATTERNS, by_score_then_sim);
    for (score, total, s, item) in scored {
        let d = dims(&[
            ("task", f64::from(score.task)),
            ("role", f64::from(score.role)),
            ("similarity", s),
        ]);
        out.push(entry(Section::AntiPatterns, item, total, d, Note::None));
    }
}

fn gotchas(
    facts: &QueryFacts<'_>,
    items: &[&Live],
    sim: &dyn Fn(&Live) -> f64,
    out: &mut Vec<Entry>,
) {
    let mut scored: Vec<_> = items
        .iter()
        .filter_map(|live| {
            match live.features {
                Features::Gotcha { category: 0, .. } => return None,
                Features::Gotcha {
                    category: h,
                    single_word: true,
                } if !facts.gotcha_hashes.contains(&h) => return None,
                _ => {}
            }
            let Body::Gotcha(g) = &live.item.body else {
                return None;
            };
            let m = match_gotcha(g.category.as_deref(), &facts.rubric);
            (m.shown() && !facts.excluded(&live.item))
                .then(|| (m, f64::from(m.total()), sim(live), &live.item))
        })
        .collect();
    top_k(&mut scored, MAX_GOTCHAS, by_score_then_sim);
    for (m, total, s, item) in scored {
        let d = dims(&[
            ("domain", f64::from(u8::from(m.domain))),
            ("task_keyword", f64::from(u8::from(m.task_keyword))),
            ("similarity", s),
        ]);
        out.push(entry(Section::Gotchas, item, total, d, Note::None));
    }
}

/// Seed 001: gate, rank lexically and by tag overlap, fuse with RRF, then
/// filter or boost by learned tag relevance. Pinned lessons that pass the
/// gate and the filter come first, whatever the task.
fn lessons(
    engine: &Engine,
    facts: &QueryFacts<'_>,
    items: &[&Live],
    sim: &dyn Fn(&Live) -> f64,
    out: &mut Vec<Entry>,
) {
    let gate = facts.gate();
    let learned = engine.learned();
    let mut pinned = Vec::new();
    let mut pool = Vec::new();
    let learned_pins = !learned.pins.is_empty();
    for live in items {
        let s = sim(live);
        let file_pin = matches!(live.features, Features::Lesson { pinned: true });
        if !file_pin && !learned_pins && s < MIN_TASK_SIMILARITY {
            continue;
        }
        let Body::Lesson(l) = &live.item.body else {
            continue;
        };
        if facts.excluded(&live.item) {
            continue;
        }
        if lesson::check_structural(&l.prerequisites, &gate).is_err() {
            continue;
        }
        let id = &live.item.id;
        let scores = learned.tag_scores(id);
        let (avg, evals) = average_over_tags(facts.tags.iter().map(String::as_str), |tag| {
            scores.and_then(|s| s.get(tag).copied())
        });
        let TagVerdict::Boost(boost) = verdict(avg, evals) else {
            continue;
        };
        let overlap = l
            .prerequisites
            .tags
            .iter()
            .chain(&live.item.tags)
            .filter(|t| facts.tags.iter().any(|q| q.eq_ignore_ascii_case(t)))
            .count();
        let is_pinned = l.pinned || learned.is_pinned(id, &facts.tags);
        if is_pinned {
            pinned.push((live, s, avg, evals));
        } else if s >= MIN_TASK_SIMILARITY {
            pool.push((live, s, overlap, avg, evals, boost));
        }
    }
    top_k(&mut pinned, MAX_PINNED, |a, b| {
        b.1.total_cmp(&a.1)
            .then_with(|| a.0.item.id.cmp(&b.0.item.id))
    });
    for (live, s, avg, evals) in pinned.into_iter().take(MAX_PINNED) {
        let d = dims(&[
            ("similarity", s),
            ("tag_avg", avg),
            ("tag_evals", f64::from(evals)),
            ("pinned", 1.0),
        ]);
        out.push(entry(
            Section::PinnedLessons,
            &live.item,
            1.0,
            d,
            Note::None,
        ));
    }
    // Ranking 1: lexical. Ranking 2: overlap of the lesson's tags with the
    // environment's (only lessons with some overlap are ranked).
    let lexical_rank = rank_by(&pool, |c| c.1, |_| true);
    let tag_rank = rank_by(&pool, |c| c.2 as f64, |c| c.2 > 0);
    let mut fused: Vec<(usize, f64)> = (0..pool.len())
        .map(|i| (i, lesson::rrf(&[lexical_rank[i], tag_rank[i]]) + pool[i].5))
        .collect();
    top_k(&mut fused, MAX_LESSONS, |a, b| {
        b.1.total_cmp(&a.1)
            .then_with(|| pool[a.0].0.item.id.cmp(&pool[b.0].0.item.id))
    });
    for (i, score) in fused.into_iter().take(MAX_LESSONS) {
        let (live, s, _, avg, evals, boost) = pool[i];
        let d = dims(&[
            ("similarity", s),
            ("lexical_rank", lexical_rank[i].map_or(0.0, |r| r as f64)),
            ("tag_rank", tag_rank[i].map_or(0.0, |r| r as f64)),
            ("tag_avg", avg),
            ("tag_evals", f64::from(evals)),
            ("boost", boost),
        ]);
        out.push(entry(Section::Lessons, &live.item, score, d, Note::None));
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

/// 1-based rank of each element by `key` descending; `None` when excluded.
fn rank_by<T>(
    items: &[T],
    key: impl Fn(&T) -> f64,
    include: impl Fn(&T) -> bool,
) -> Vec<Option<usize>> {
    let mut order: Vec<usize> = (0..items.len()).filter(|&i| include(&items[i])).collect();
    order.sort_by(|&a, &b| key(&items[b]).total_cmp(&key(&items[a])));
    let mut ranks = vec![None; items.len()];
    for (rank, i) in order.into_iter().enumerate() {
        ranks[i] = Some(rank + 1);
    }
    ranks
}

/// Seed 003. Only a learning that shares a term with the query's context
/// (a superset of its keywords) can score above zero, so the candidates
/// come from the text index's postings, not from a scan.
fn learnings(engine: &Engine, facts: &QueryFacts<'_>, out: &mut Vec<Entry>) {
    let docs = engine
        .index
        .docs_containing(&facts.context_terms, &[Field::Keywords, Field::Context]);
    let mut scored: Vec<_> = docs
        .into_iter()
        .filter_map(|doc| engine.live_by_doc(doc))
        .filter(|live| live.kind == Kind::Learning && !facts.excluded(&live.item))
        .filter(|live| live.scope == GLOBAL || engine.visible(live, engine.scope_of(facts.query)))
        .filter_map(|live| {
            let (Body::Learning(l), Features::Learning(t)) = (&live.item.body, &live.features)
            else {
                return None;
            };
            let s = learning_policy::similarity(
                &t.keywords,
                &t.context,
                &t.error_type,
                &facts.keyword_terms,
                &facts.context_terms,
            );
            let total = s.total();
            (total >= MIN_SIMILARITY).then_some((live, s, total, l))
        })
        .collect();
    top_k(&mut scored, MAX_LEARNINGS, |a, b| {
        b.2.total_cmp(&a.2)
            .then(b.3.severity.cmp(&a.3.severity))
            .then_with(|| a.0.item.id.cmp(&b.0.item.id))
    });
    for (live, s, total, l) in scored.into_iter().take(MAX_LEARNINGS) {
        let effectiveness = engine
            .learned()
            .applications(&live.item.id)
            .effectiveness
            .or(l.effectiveness);
        let mut d = dims(&[
            ("keyword", s.keyword),
            ("context", s.context),
            ("error_type", s.error_type),
        ]);
        if let Some(e) = effectiveness {
            d.insert("effectiveness".into(), e);
        }
        let note = Note::Learning {
            relevance: total,
            effectiveness,
        };
        out.push(entry(Section::Learnings, &live.item, total, d, note));
    }
}

fn observations(facts: &QueryFacts<'_>, items: &[&Live], now: i64, out: &mut Vec<Entry>) {
    let min = observation::min_score(facts.query.mode);
    let mut scored: Vec<_> = items
        .iter()
        .filter_map(|live| {
            let Features::Observation {
                created_at,
                kind,
                agent,
            } = &live.features
            else {
                return None;
            };
            let hours_ago = (now - created_at) as f64 / SECS_PER_HOUR;
            // Agents compare by the 64-bit hash of their normalised name.
            let same_agent = *agent != 0 && *agent == facts.agent_hash;
            let mut s = observation::score(*kind, hours_ago, same_agent, 0.0);
            // The keyword match adds at most its weight: skip the text
            // search when even a full match cannot reach the threshold.
            if s.total() + observation::KEYWORD_WEIGHT < min {
                return None;
            }
            let Body::Observation(o) = &live.item.body else {
                return None;
            };
            s.keyword = observation::keyword_overlap(&o.content, &facts.observation_keywords);
            let total = s.total();
            (total >= min && !facts.excluded(&live.item)).then_some((live, s, total, hours_ago))
        })
        .collect();
    top_k(&mut scored, MAX_OBSERVATIONS, |a, b| {
        b.2.total_cmp(&a.2)
            .then_with(|| a.0.item.id.cmp(&b.0.item.id))
    });
    for (live, s, total, hours_ago) in scored {
        let d = dims(&[
            ("recency", s.recency),
            ("importance", s.importance),
            ("agent", s.agent),
            ("keyword", s.keyword),
        ]);
        out.push(entry(
            Section::RecentContext,
            &live.item,
            total,
            d,
            Note::Observation { hours_ago },
        ));
    }
}

/// Seed 004 retrieves when content is being drafted: the query asks for
/// exemplars or seeds, or its task names a kind of content.
pub(super) fn drafting(facts: &QueryFacts<'_>, exemplars: &[&Live]) -> bool {
    let kinds = &facts.query.kinds;
    if kinds.contains(&Kind::Exemplar) || kinds.contains(&Kind::Seed) {
        return true;
    }
    if !kinds.is_empty() {
        return false;
    }
    let words = &facts.rubric.task_words;
    let names = |w: &str| {
        let singular = w.strip_suffix('s').unwrap_or(w);
        DRAFT_WORDS.contains(&w) || DRAFT_WORDS.contains(&singular)
    };
    words.iter().any(|w| names(w))
        || exemplars.iter().any(|live| match &live.item.body {
            Body::Exemplar(e) => e.kind.as_deref().is_some_and(|k| {
                words
                    .iter()
                    .any(|w| w.eq_ignore_ascii_case(k) || w.strip_suffix('s') == Some(k))
            }),
            _ => false,
        })
}

fn winning_patterns(
    facts: &QueryFacts<'_>,
    exemplars: &[&Live],
    seeds: &[&Live],
    now: i64,
    out: &mut Vec<Entry>,
) {
    let candidates: Vec<Candidate<&Arc<Item>>> = exemplars
        .iter()
        .filter_map(|live| match &live.item.body {
            Body::Exemplar(e) => Some(Candidate {
                item: &live.item,
                performance_score: e.performance_score,
                days_since_posted: (now - e.posted_at) as f64 / SECS_PER_DAY,
            }),
            _ => None,
        })
        .collect();
    let any_retrievable =
        facts.wants(Kind::Exemplar) && !exemplar::retrieve(&candidates).is_empty();
    if any_retrievable {
        let retrieved = exemplar::retrieve_keeping(&candidates, |item| !facts.excluded(item));
        for r in retrieved {
            let d = dims(&[("engagement", r.engagement), ("decay", r.decay)]);
            out.push(entry(
                Section::WinningPatterns,
                r.item,
                r.weight,
                d,
                Note::None,
            ));
        }
        return;
    }
    if !facts.wants(Kind::Seed) {
        return;
    }
    let mut pending: Vec<(&Arc<Item>, f64)> = seeds
        .iter()
        .filter_map(|live| match &live.item.body {
            Body::Seed(s) if !facts.excluded(&live.item) => Some((&live.item, s.engagement_weight)),
            _ => None,
        })
        .collect();
    top_k(&mut pending, MAX_COLD_START_SEEDS, |a, b| {
        b.1.total_cmp(&a.1).then_with(|| a.0.id.cmp(&b.0.id))
    });
    for (item, weight) in pending.into_iter().take(MAX_COLD_START_SEEDS) {
        out.push(entry(
            Section::IdeasFromNotes,
            item,
            weight,
            dims(&[("engagement_weight", weight)]),
            Note::None,
        ));
    }
}
