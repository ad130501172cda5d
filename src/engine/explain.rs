//! `explain`: every gate, dimension and threshold that decides whether one
//! item is shown for a context, in words and numbers.

use std::collections::{BTreeMap, HashSet};

use crate::knowledge::item::Confidence;
use crate::knowledge::Body;
use crate::learning::tag_relevance::{self, Scope, TagVerdict};
use crate::protocol::{Explanation, Query};
use crate::scoring::lesson::{self, MIN_TASK_SIMILARITY};
use crate::scoring::rubric::{self, score_anti_pattern};
use crate::scoring::{exemplar, learning, observation};
use crate::time::{format_instant, SECS_PER_DAY, SECS_PER_HOUR};

use super::features::Features;
use super::select::task::Task;
use super::select::{self, decision, drafting, gotcha_match, lessons, QueryFacts};
use super::{query_now, Engine, QueryError};
use crate::learning::state::Assessment;
use crate::learning::{Learned, Match, WEAK_MATCH};

/// Seed 000's task cut-offs, as the explanation says them.
fn cutoffs() -> String {
    format!("cut-offs: {}", levels(&rubric::TASK_CUTOFFS))
}

/// A table of task points by level, as the explanation says it.
fn levels(table: &[(f64, u8)]) -> String {
    let parts: Vec<String> = table
        .iter()
        .map(|(at, points)| format!(">= {at:.2} for {points}"))
        .collect();
    parts.join(", ")
}

/// Dimension A of seed 000's rubric, as the explanation says it: from the
/// similarity's cut-offs, or from the estimate when the decision decides
/// the prompt.
fn task_reason(task: &Task<'_>, live: &super::Live, points: u8) -> String {
    let sim = task.similarity(live);
    match task.decided() {
        None => format!(
            "A task match: similarity {sim:.2} -> {points}/3 ({})",
            cutoffs()
        ),
        Some(candidates) if candidates.has(live) => {
            format!(
                "A task match: relevance estimate {:.2} -> {points}/3 (the decision to show decides this prompt; levels: {})",
                candidates.estimate(live).1,
                levels(&super::relevance::TASK_LEVELS)
            )
        }
        Some(_) => format!(
            "A task match: 0/3 (similarity {sim:.2}: not among the {} items most similar to the prompt that the decision to show weighs)",
            super::relevance::CANDIDATES
        ),
    }
}

/// The filter line as explain gives it: seed 001's -0.1, or the line the
/// judge's noise puts below it, and why ([`crate::learning::noise`]).
fn filter_line_text(learned: &crate::learning::Learned) -> String {
    use crate::learning::noise::NOISE_Z;
    let agreement = learned.agreement();
    let line = learned.filter_line();
    match (agreement.disagreement(), agreement.judge_error()) {
        (Some(d), Some(e)) if line < tag_relevance::NEGATIVE_SCORE_THRESHOLD => format!(
            "{line:.3} (seed 001's {}, lowered: the judge's verdicts on one item in one context disagree in {:.1}% of {} pairs of them, as a judge wrong {:.1}% of the time would, and memd filters only {NOISE_Z} standard deviations of that noise below a relevant lesson's score)",
            tag_relevance::NEGATIVE_SCORE_THRESHOLD,
            d * 100.0,
            agreement.pairs,
            e * 100.0
        ),
        _ => tag_relevance::NEGATIVE_SCORE_THRESHOLD.to_string(),
    }
}

/// An evidence's figures as explain gives them: its average, judged
/// sessions and the prompts it was held back from since.
fn figures(e: &tag_relevance::Evidence) -> String {
    format!(
        "average {} over {:.1} judged sessions, held back from {:.0} prompts since",
        average(e),
        e.evals,
        e.held
    )
}

/// An evidence's average as explained: with its level in the evaluator's
/// unit when direct feedback made it differ.
fn average(e: &tag_relevance::Evidence) -> String {
    if (e.avg - e.level).abs() < 5e-4 {
        format!("{:.3}", e.avg)
    } else {
        format!(
            "{:.3} ({:.3} in the evaluator's unit, which the filter line and the boost read: direct feedback weighs {}; the pin lines read the first)",
            e.avg,
            e.level,
            tag_relevance::FEEDBACK_WEIGHT
        )
    }
}

/// The task match a re-check needs ([`Assessment::recheck_points`]), in
/// words.
fn recheck_band(a: &Assessment) -> String {
    let points = a.recheck_points();
    if points < lesson::PROBATION_SHOW_TASK_POINTS {
        format!(
            "{points} points (memd: not only {}, as its own record in this context has more verdicts for it than against it)",
            lesson::PROBATION_SHOW_TASK_POINTS
        )
    } else {
        format!("{points} points")
    }
}

/// [`recheck_band`] of a judged lesson, seed 001's strongest band where
/// nothing was learned about it.
fn recheck_band_of(judged: &lessons::Judged) -> String {
    judged.assessment.as_deref().map_or_else(
        || format!("{} points", lesson::PROBATION_SHOW_TASK_POINTS),
        recheck_band,
    )
}

/// An optional value for people: the value, or `none`.
fn one(value: Option<&String>) -> &str {
    value.map_or("none", String::as_str)
}

/// A list for people: `[a, b]`.
fn list(values: &[String]) -> String {
    format!("[{}]", values.join(", "))
}

fn confidence_name(c: Option<Confidence>) -> &'static str {
    match c {
        Some(Confidence::High) => "high",
        Some(Confidence::Medium) => "medium",
        Some(Confidence::Low) => "low",
        None => "untested",
    }
}

/// An explanation as it is written: its reasons, dimensions and score.
#[derive(Default)]
struct Notes {
    reasons: Vec<String>,
    dims: BTreeMap<String, f64>,
    score: Option<f64>,
}

impl Notes {
    fn put(&mut self, k: &str, v: f64) {
        self.dims.insert(k.to_string(), v);
    }

    fn say(&mut self, reason: String) {
        self.reasons.push(reason);
    }
}

/// Explains `id` for `query`; `None` when no such item is visible to it.
pub(super) fn explain(
    engine: &Engine,
    learned: &Learned,
    id: &str,
    query: &Query,
    exclude: &HashSet<String>,
) -> Result<Option<Explanation>, QueryError> {
    let scope = engine.scope_of(query);
    let Some(live) = engine.live_in(id, scope) else {
        return Ok(None);
    };
    let now = query_now(query)?;
    // The one selection the query gets: what it shows and what its
    // decision to show made of each candidate.
    let sims = engine.similarities(&query.task);
    let candidates = select::candidates(engine, query, &sims);
    let facts = QueryFacts::new(engine, learned, query, now, exclude);
    let selection = select::select_with(engine, &facts, &sims, candidates.as_ref());
    let considered = selection.decided.iter().find(|c| c.id == id).cloned();
    let answer = crate::render::render(selection.entries, query.budget_chars as usize);
    let shown = answer.items.iter().find(|i| i.id == id);
    let task = Task::new(&sims, candidates.as_ref());
    let sim = task.similarity(live);
    let points = task.points(live);
    let item = &live.item;
    let mut n = Notes::default();
    let embedded = super::is_embedded(live.kind);
    if let (Some((lexical, cosine)), Some(semantic), true) =
        (sims.parts(live.doc), engine.semantic(), embedded)
    {
        let f = semantic.fusion();
        n.say(format!(
            "similarity {sim:.2} = {} x lexical {lexical:.2} + {} x meaning {:.2} (cosine {cosine:.2} with model {}, above {} rescaled to 0..1)",
            f.lexical,
            f.semantic,
            f.semantic_part(cosine),
            semantic.model().name(),
            f.floor,
        ));
    }
    if exclude.contains(id) {
        n.say("already shown in this session: not shown again".to_string());
    }
    if !query.kinds.is_empty() && !query.kinds.contains(&live.kind) {
        let kinds: Vec<String> = query.kinds.iter().map(|k| k.to_string()).collect();
        n.say(format!("the query asks only for {}", list(&kinds)));
    }
    let agent = facts.rubric.agent.clone();
    match &item.body {
        Body::Pattern(p) => {
            pattern(&facts, &task, live, p, &mut n);
        }
        Body::AntiPattern(a) => {
            let s = score_anti_pattern(a, points, &facts.rubric);
            n.put("task", f64::from(s.task));
            n.put("role", f64::from(s.role));
            n.put("similarity", sim);
            n.score = Some(f64::from(s.total()));
            n.say(task_reason(&task, live, s.task));
            n.say(format!(
                "C role: roles {}, adjacent {}; agent {} -> {}/2",
                list(&a.roles),
                list(&a.adjacent_roles),
                one(agent.as_ref()),
                s.role
            ));
            n.say(format!(
                "total {}/5 (anti-patterns use A + C only; shown at >= {}, at most {})",
                s.total(),
                rubric::ANTI_PATTERN_THRESHOLD,
                rubric::MAX_ANTI_PATTERNS
            ));
        }
        Body::Gotcha(g) => {
            let m = gotcha_match(g.category.as_deref(), points, &facts);
            n.put("domain", f64::from(u8::from(m.domain)));
            n.put("task_keyword", f64::from(u8::from(m.task_keyword)));
            n.put("similarity", sim);
            n.score = Some(f64::from(m.total()));
            n.say(format!(
                "category {}: {} the agent's domain ({}); the task {} about it (a word of the task is its category, or a task match: {}) (shown when either; at most {})",
                one(g.category.as_ref()),
                if m.domain { "is" } else { "is not" },
                list(&facts.rubric.domains),
                if m.task_keyword { "is" } else { "is not" },
                match task.decided() {
                    Some(_) => format!(
                        "relevance estimate >= {:.2}",
                        super::relevance::SHOW_AT
                    ),
                    None => format!("similarity {sim:.2} >= {MIN_TASK_SIMILARITY:.2}"),
                },
                rubric::MAX_GOTCHAS
            ));
        }
        Body::Experience(e) => {
            n.say(format!(
                "experience of `{}`: shown to that agent always, first; the query's agent is {}",
                e.agent,
                one(agent.as_ref())
            ));
        }
        Body::Lesson(_) => {
            lesson(
                &facts,
                &task,
                live,
                selection.lessons.changed.as_ref(),
                &mut n,
            );
        }
        Body::Learning(l) => {
            if let Features::Learning(t) = &live.features {
                let s = learning::similarity(
                    &t.keywords,
                    &t.context,
                    &t.error_type,
                    facts.keyword_terms(),
                    facts.context_terms(),
                );
                n.put("keyword", s.keyword);
                n.put("context", s.context);
                n.put("error_type", s.error_type);
                n.score = Some(s.total());
                n.say(format!(
                    "similarity {} x keyword {:.2} + {} x context {:.2} + {} x error type {:.2} = {:.3} (shown at >= {}, at most {})",
                    learning::KEYWORD_WEIGHT,
                    s.keyword,
                    learning::CONTEXT_WEIGHT,
                    s.context,
                    learning::ERROR_TYPE_WEIGHT,
                    s.error_type,
                    s.total(),
                    learning::MIN_SIMILARITY,
                    learning::MAX_LEARNINGS
                ));
            }
            if let Some(e) = facts
                .learned
                .applications(id)
                .effectiveness
                .or(l.effectiveness)
            {
                n.put("effectiveness", e);
            }
        }
        Body::Observation(o) => {
            let hours = (now - o.created_at) as f64 / SECS_PER_HOUR;
            let same = matches!(&live.features, Features::Observation { agent, .. } if *agent != 0 && *agent == facts.agent_hash);
            let s = observation::score(
                o.kind,
                hours,
                same,
                facts.observation_keywords().overlap(&o.content),
            );
            n.put("recency", s.recency);
            n.put("importance", s.importance);
            n.put("agent", s.agent);
            n.put("keyword", s.keyword);
            n.score = Some(s.total());
            n.say(format!(
                "{} x recency {:.3} ({hours:.1} h old) + {} x importance {:.1} ({}) + {} x agent {:.0} + {} x keywords {:.2} = {:.3}; the {:?} mode keeps >= {}",
                observation::RECENCY_WEIGHT,
                s.recency,
                observation::IMPORTANCE_WEIGHT,
                s.importance,
                o.kind.as_str(),
                observation::AGENT_WEIGHT,
                s.agent,
                observation::KEYWORD_WEIGHT,
                s.keyword,
                s.total(),
                query.mode,
                observation::min_score(query.mode)
            ));
        }
        Body::Exemplar(e) => {
            let days = (now - e.posted_at) as f64 / SECS_PER_DAY;
            n.put("decay", exemplar::decay(days));
            n.say(format!(
                "posted {days:.1} days ago: decay {:.3}; performance score {:?}; retrieved only when the task drafts content (it {})",
                exemplar::decay(days),
                e.performance_score,
                if drafting(&facts, &[live]) { "does" } else { "does not" }
            ));
        }
        Body::Seed(s) => {
            n.put("engagement_weight", s.engagement_weight);
            n.say(format!(
                "a seed: shown only when no exemplar can be retrieved and the task drafts content; weight {}",
                s.engagement_weight
            ));
        }
    }
    if let (Some(candidates), true) = (&candidates, embedded) {
        decision_to_show(candidates, live, considered.as_ref(), &mut n);
    }
    n.say(match shown {
        Some(_) => "shown in this context".to_string(),
        None => "not shown in this context".to_string(),
    });
    let (score, mut dims) = match shown {
        Some(s) => (Some(s.score), s.dimensions.clone()),
        None => (n.score, n.dims),
    };
    if let (Some((lexical, cosine)), true) = (sims.parts(live.doc), embedded) {
        dims.insert("lexical".to_string(), f64::from(lexical));
        dims.insert("cosine".to_string(), f64::from(cosine));
    }
    Ok(Some(Explanation {
        id: id.to_string(),
        kind: live.kind,
        shown: shown.is_some(),
        score,
        dimensions: dims,
        reasons: n.reasons,
    }))
}

/// Seed 000's rubric for a pattern, dimension by dimension.
fn pattern(
    facts: &QueryFacts<'_>,
    task: &Task<'_>,
    live: &super::Live,
    p: &crate::knowledge::item::Pattern,
    n: &mut Notes,
) {
    let item = &live.item;
    let sim = task.similarity(live);
    let id = &item.id;
    let agent = facts.rubric.agent.clone();
    let extra = facts.learned.times_applied(id);
    let s = select::patterns::score(facts, p, item, task.points(live));
    for (k, v) in [
        ("task", s.task),
        ("product", s.product),
        ("role", s.role),
        ("history", s.history),
        ("recency", s.recency),
    ] {
        n.put(k, f64::from(v));
    }
    n.put("similarity", sim);
    n.score = Some(f64::from(s.total()));
    n.say(task_reason(task, live, s.task));
    n.say(format!(
        "B product: learned from {}, applies to {}, stack {}; query product {}, tags {} -> {}/2",
        one(p.learned_from.product.as_ref()),
        list(&p.applies_to),
        list(&p.stack),
        one(facts.rubric.product.as_ref()),
        list(&facts.rubric.tags),
        s.product
    ));
    n.say(format!(
        "C role: roles {}, adjacent {}, category {}; agent {} with domains {} -> {}/2",
        list(&p.roles),
        list(&p.adjacent_roles),
        one(p.category.as_ref()),
        one(agent.as_ref()),
        list(&facts.rubric.domains),
        s.role
    ));
    n.say(format!(
        "D history: confidence {}, applied {} times ({} in the file, {} recorded) -> {}/2 (high and >= {}: 2; high or medium: 1)",
        confidence_name(p.confidence),
        p.times_applied + extra,
        p.times_applied,
        extra,
        s.history,
        rubric::PROVEN_APPLICATIONS
    ));
    n.say(format!(
        "E recency: learned {} -> {}/1 (within {} days: 1)",
        p.learned_from
            .date
            .map_or("on an unknown date".to_string(), |d| format!(
                "on {}",
                format_instant(d)
            )),
        s.recency,
        rubric::RECENCY_WINDOW_DAYS
    ));
    let total = s.total();
    n.say(format!(
        "total {total}/10: {} (at most {} patterns)",
        if total >= rubric::FULL_THRESHOLD {
            format!(">= {}, shown with its code", rubric::FULL_THRESHOLD)
        } else if total >= rubric::SHOW_THRESHOLD {
            format!(
                ">= {}, shown with problem and solution",
                rubric::SHOW_THRESHOLD
            )
        } else if total >= rubric::FALLBACK_THRESHOLD {
            format!(
                ">= {}, shown only while fewer than {} patterns reach {}",
                rubric::FALLBACK_THRESHOLD,
                rubric::FALLBACK_WHEN_FEWER_THAN,
                rubric::SHOW_THRESHOLD
            )
        } else {
            format!("below {}, never shown", rubric::FALLBACK_THRESHOLD)
        },
        rubric::MAX_PATTERNS
    ));
}

/// Seed 001's judgement of a lesson: its gate, stack, learned evidence,
/// pins and outcome. `changed`: the change the prompt shows, as the
/// selection found it ([`lessons::Noted::changed`]).
fn lesson(
    facts: &QueryFacts<'_>,
    task: &Task<'_>,
    live: &super::Live,
    changed: Option<&lessons::Change>,
    n: &mut Notes,
) {
    let sim = task.similarity(live);
    let item = &live.item;
    let id = &item.id;
    let learned = facts.learned;
    let context = lessons::Context::new(facts);
    let Some(judged) = lessons::judge(facts, &context, live, task.band(live)) else {
        unreachable!("a lesson is judged as one");
    };
    n.say(match &judged.gate {
        Ok(()) => "structural prerequisites (os, repos, paths, mcp_servers): satisfied".to_string(),
        Err(why) => format!("structural prerequisites: {why} (a hard gate)"),
    });
    let another_stack = judged
        .fit
        .unwrap_or_else(|| context.fit(facts, live))
        .another_stack;
    n.put("another_stack", f64::from(u8::from(another_stack)));
    if another_stack {
        n.say(format!(
            "written for another stack: its own tags (a lesson given none: the words of its text) name [{}], workspaces memd has seen, and none of them is among [{}]; on a prompt it comes after every lesson that is not and after every re-check of a filtered one on a match of {} points (a re-check on a weaker match is set with it, by band), and until it is judged relevant here it is a candidate only on a prompt that shows a change here (a lesson that had helped here held back from it by its own record, or two such lessons re-checked on it, their records over every showing filtering them): {}",
            context.seen.among(item.stack_words()).join(", "),
            facts.tags.join(", "),
            lesson::PROBATION_SHOW_TASK_POINTS,
            match changed {
                Some(change) => format!("this one does ({})", change.shown_by()),
                None => "this one does not".to_string(),
            }
        ));
    }
    let on_prompt = facts.on_prompt;
    let band = judged.band;
    let shown = Match::of_band(band);
    let assessment = &judged
        .assessment
        .as_deref()
        .cloned()
        .unwrap_or_else(|| context.assess(facts, live, band));
    let read = assessment.read;
    let e = assessment.here;
    n.put("tag_avg", e.avg);
    n.put("tag_level", e.level);
    n.put("tag_evals", e.evals);
    n.put("tag_held_back", e.held);
    n.put("similarity", sim);
    let weights: Vec<String> = facts
        .tags
        .iter()
        .map(|t| format!("{t} x{:.2}", learned.weight(t)))
        .collect();
    let evidence_read = match (shown, read) {
        (Match::Strong, _) => String::new(),
        (Match::Weak, Match::Weak) => format!(
            " (this prompt matches it only in passing, band {band}: read from its verdicts on such matches and on strong ones, `{WEAK_MATCH}tag` in memctl log)"
        ),
        (Match::Weak, Match::Strong) => format!(
            " (this prompt matches it only in passing, band {band}, but it was judged before memd kept such verdicts apart: read from all of them)"
        ),
    };
    let over = format!(
        "tag relevance{evidence_read} over [{}] (weights: how well each tag tells contexts apart): {}",
        weights.join(", "),
        figures(&e)
    );
    // A wider scope's (or the context's own record's) figures, named as
    // `name`, also as dimensions `<key>_avg` and `<key>_evals`.
    let mut scope = |key: &str, name: String, a: tag_relevance::Evidence| {
        n.put(&format!("{key}_avg"), a.avg);
        n.put(&format!("{key}_evals"), a.evals);
        format!("; {name}: {}", figures(&a))
    };
    let elsewhere = if assessment.elsewhere_tags.is_empty() {
        String::new()
    } else {
        scope(
            "elsewhere",
            format!(
                "where its own tags were absent ([{}])",
                assessment.elsewhere_tags.join(", ")
            ),
            assessment.elsewhere,
        )
    };
    let everywhere = assessment.everywhere.map_or_else(String::new, |a| {
        scope(
            "everywhere",
            format!(
                "in every context it was judged in ({} of them, irrelevant on balance in {})",
                learned.contexts_judged(id, read),
                learned.contexts_against(id, read)
            ),
            a,
        )
    });
    let record = assessment.record.map_or_else(String::new, |r| {
        scope(
            "record",
            format!(
                "its own record in this context (`{}` in memctl log)",
                read.key(facts.record_key.as_deref().unwrap_or_default())
            ),
            r,
        )
    });
    let borrowed = if assessment.borrowed && e.evals > 0.0 {
        "; never judged in this context (a tag of it has no verdict), so these verdicts come from other contexts through the tags it shares with them, and they order it here but do not filter it (memd: one repository's verdicts do not filter a lesson in another)"
    } else {
        ""
    };
    let team = match &assessment.team {
        Some(t) => {
            n.put("team_level", t.level());
            n.put("team_evals", t.evals());
            let members: Vec<String> = t
                .members
                .iter()
                .map(|(member, tally)| {
                    format!(
                        "{member} {} verdict(s), balance {:+.2}",
                        tally.verdicts,
                        tally.balance()
                    )
                })
                .collect();
            format!(
                "; the team's verdicts in this repository (its members' files in .memd/learned): {}; level {:+.3} over {:.1} (each member counts for at most {} verdicts; it filters only when {} members or more lean against it)",
                members.join(", "),
                t.level(),
                t.evals(),
                crate::learning::team::MEMBER_CAP,
                crate::learning::team::MIN_MEMBERS_TO_FILTER
            )
        }
        None => String::new(),
    };
    let over = format!("{over}{record}{borrowed}{elsewhere}{everywhere}{team}");
    let (which, deciding) = match assessment.decided {
        Scope::Here => ("here", e),
        Scope::Elsewhere => (
            "where its own tags were absent, and nothing here says relevant",
            assessment.elsewhere,
        ),
        Scope::Everywhere => (
            "in every context it was judged in, and nothing here says relevant",
            assessment.everywhere.unwrap_or_default(),
        ),
        Scope::Team => ("by the team", e),
        Scope::Pooled => (
            "on its verdicts in every context it was judged in, read for this one",
            assessment.everywhere.unwrap_or_default(),
        ),
        Scope::Context => (
            "on its own record in this context",
            assessment.record.unwrap_or_default(),
        ),
    };
    let wait = tag_relevance::probation_wait(deciding.against());
    let line = learned.filter_line();
    n.put("filter_line", line);
    let line = filter_line_text(learned);
    // memd's rule before the seed's three sessions, where it filtered.
    let early = deciding.early.map(|odds| {
        n.put("early_prior", odds.prior);
        n.put("early_now", odds.now);
        format!(
            "{over}: filtered on its own record in this context after {:.0} judged session(s), before the seed's {} (memd's rule, not the seed's): its verdicts here, read through the judge's error ({}), leave it a {:.2} chance of being relevant here, less than half the {:.2} it had before them (the share of judged lessons found relevant, with its own verdicts in other contexts); it gets another chance once held back from {wait:.0} prompts it matches (a task match of {} points or more)",
            deciding.evals,
            tag_relevance::MIN_EVALS_FOR_FILTER,
            learned
                .agreement()
                .judge_error()
                .map_or_else(|| "not read".to_string(), |e| format!("about {:.0}%", e * 100.0)),
            odds.now,
            odds.prior,
            lesson::PROBATION_MIN_TASK_POINTS
        )
    });
    let share = learned.boost_share();
    n.put("boost_share", share);
    let boost = |b: f64| {
        if share < 1.0 {
            format!(
                "boost {b:+.5}: seed 001's times {share:.2}, the share of its score's spread the judge's noise leaves (memd)"
            )
        } else {
            format!("boost {b:+.5}")
        }
    };
    if let Some(p) = assessment.pooled {
        n.put("pooled_prior", p.odds.prior);
        n.put("pooled_now", p.odds.now);
        n.put("relevance_differs", p.differs);
    }
    if let Some(all) = assessment.every_showing {
        n.put("every_showing_avg", all.avg);
        n.put("every_showing_evals", all.evals);
    }
    n.say(match assessment.verdict {
        TagVerdict::Filtered if assessment.decided == Scope::Team => format!(
            "{over}: filtered by the team's verdicts, and nothing here says relevant; it is shown again when the team's verdicts or this engineer's own say it is relevant (`memctl feedback {id} --relevant`)"
        ),
        TagVerdict::Filtered if assessment.pooled.is_some() => {
            let p = assessment.pooled.unwrap_or_else(|| unreachable!());
            format!(
                "{over}: filtered on its verdicts in every context it was judged in, read for this one (memd's rule, not the seed's, in place of the average over this context's tags, which holds other contexts' verdicts through the tags they share): {:.0} relevant and {:.0} irrelevant here, {:.0} and {:.0} in {} other context(s), each read through the judge's error ({}) and the others through how often a lesson's relevance differs between two contexts (about {:.0}%, from the judge's verdicts on one lesson in two contexts), leave it a {:.2} chance of being relevant here, less than half the {:.2} share of judged lessons found relevant; it gets another chance once held back from {wait:.0} prompts it matches (a task match of {} points or more)",
                p.here.0,
                p.here.1,
                p.elsewhere.0,
                p.elsewhere.1,
                p.contexts,
                learned
                    .agreement()
                    .judge_error()
                    .map_or_else(|| "not read".to_string(), |e| format!("about {:.0}%", e * 100.0)),
                p.differs * 100.0,
                p.odds.now,
                p.odds.prior,
                lesson::PROBATION_MIN_TASK_POINTS
            )
        }
        TagVerdict::Filtered if early.is_some() => early.unwrap_or_default(),
        TagVerdict::Filtered if read == Match::Weak => format!(
            "{over}: filtered {which} on prompts that match it in passing (>= {} sessions and below {line}); a verdict on a prompt that matches it well (a task match of {} points or more) counts here too",
            tag_relevance::MIN_EVALS_FOR_FILTER,
            lesson::PROBATION_MIN_TASK_POINTS
        ),
        TagVerdict::Filtered => format!(
            "{over}: filtered {which} (>= {} sessions and below {line}); it gets another chance once held back from {wait:.0} prompts it matches (a task match of {} points or more) since it was last judged (memd: three for each verdict more against it than for it, over every verdict alike or with the seed's forgetting, whichever is more; at least three)",
            tag_relevance::MIN_EVALS_FOR_FILTER,
            lesson::PROBATION_MIN_TASK_POINTS
        ),
        TagVerdict::Probation(b) if assessment.every_showing.is_some() => {
            let all = assessment.every_showing.unwrap_or_default();
            let (state, why) = if all.trial {
                (
                    format!("is on trial: it was below {line}, and a judged session since found it relevant ({})", figures(&all)),
                    "one verdict is as likely the judge's error as a change, so until the verdicts since the run against it began are on balance for it, it is still a re-check",
                )
            } else {
                (
                    format!("is below {line}: {}", figures(&all)),
                    "those verdicts say either that it does not help here (or no longer does) or that those prompts were not about it, and its next judged session on a prompt that matches it well settles which: until then it is a re-check",
                )
            };
            format!(
                "{over}: kept {which}, but its own record in this context over every showing (`{}` in memctl log, which verdicts on prompts that match it only in passing move too) {state}; {why}, shown only on a task match of {}, after the lessons that are kept ({}; memd's rule, not the seed's)",
                Match::Weak.key(facts.record_key.as_deref().unwrap_or_default()),
                recheck_band(assessment),
                boost(b)
            )
        }
        TagVerdict::Probation(b) if deciding.trial => format!(
            "{over}: on trial: it was filtered {which}, and a judged session since found it relevant; until {} (memd: the verdicts since the run against it began, at most {} of them against it, on balance for it: one more for it than against it), it is shown only on a task match of {}, after the lessons that are kept ({})",
            if deciding.to_confirm > 1.0 {
                format!("{} more relevant verdicts confirm it", deciding.to_confirm.ceil())
            } else {
                "one more relevant verdict confirms it".to_string()
            },
            tag_relevance::MIN_EVALS_FOR_FILTER,
            recheck_band(assessment),
            boost(b)
        ),
        TagVerdict::Probation(b) => format!(
            "{over}: on probation: it was filtered {which}, and has since been held back from {wait:.0} prompts or more, so it may be shown again on a task match of {}, after the lessons that are kept, to be judged anew ({})",
            recheck_band(assessment),
            boost(b)
        ),
        TagVerdict::Boost(b) if deciding.level < tag_relevance::NEGATIVE_SCORE_THRESHOLD
            && deciding.evals >= tag_relevance::MIN_EVALS_FOR_FILTER =>
        {
            format!("{over}: kept, above the line {line}, {}", boost(b))
        }
        TagVerdict::Boost(b) => format!("{over}: kept, {}", boost(b)),
    });
    let pins = learned.pins_of(id);
    let pinned_here = judged.pinned;
    let mut pin_lines: Vec<String> = pins
        .iter()
        .map(|p| {
            format!(
                "auto-pinned for [{}] ({})",
                p.tags.join(", "),
                if p.tags.iter().all(|t| facts.tags.contains(t)) {
                    "applies here"
                } else {
                    "not here"
                }
            )
        })
        .collect();
    if judged.manual {
        pin_lines.insert(0, "pinned in its file".to_string());
    }
    if !pin_lines.is_empty() {
        n.say(pin_lines.join("; "));
    }
    n.put("task_band", f64::from(band));
    n.say(if !on_prompt {
        if pinned_here {
            format!(
                "no task (session start): pinned lessons are shown, at most {}",
                lesson::MAX_PINNED
            )
        } else {
            "no task (session start): only pinned lessons are shown".to_string()
        }
    } else {
        format!(
            "task similarity {sim:.2} (band {band}; {}): {} the candidate threshold {MIN_TASK_SIMILARITY}, pinned or not; the task band orders first, then RRF of the lexical and tag rankings plus the boost, at most {}{}",
            cutoffs(),
            if band > 0 { "meets" } else { "below" },
            lesson::MAX_LESSONS,
            if task.decided().is_some() {
                "; the decision to show then gates what this order keeps"
            } else {
                ""
            }
        )
    });
    n.say(format!(
        "seed 001's outcome: {}",
        match judged.on_prompt(changed) {
            lessons::Outcome::NoTaskMatch => "no task match".to_string(),
            lessons::Outcome::NotPinned => "not pinned, so not at session start".to_string(),
            lessons::Outcome::Gated => "held by its structural prerequisites".to_string(),
            lessons::Outcome::Filtered { .. } => "filtered by what was learned".to_string(),
            lessons::Outcome::ProbationTooWeak => format!(
                "on probation, and the prompt's task match is below {}",
                recheck_band_of(&judged)
            ),
            lessons::Outcome::AnotherStack { .. } =>
                "written for another stack, and the prompt shows no change here: not a candidate"
                    .to_string(),
            lessons::Outcome::Candidate {
                probation: true, ..
            } if judged.rechecked_on(changed) => {
                let change = changed.expect("re-checked on a change");
                let held = match judged.outcome {
                    lessons::Outcome::ProbationTooWeak => format!(
                        "on probation here, its wait over but the prompt's task match below {}",
                        recheck_band_of(&judged)
                    ),
                    _ => "filtered here".to_string(),
                };
                let order = if judged.weak_recheck_on(changed) {
                    format!(
                        "; on a match below {} points, it is set with the lessons written for another stack, by band, not before them",
                        lesson::PROBATION_SHOW_TASK_POINTS
                    )
                } else {
                    String::new()
                };
                format!(
                    "a candidate, on probation: {held}, but the prompt shows a change here ({}, {:.0} prompts held back since its latest verdict), and what filters this one is older ({:.0} prompts held back since its latest verdict here): a lesson that did not help on the topic may now; re-checked once, its verdict then decides{order}",
                    change.shown_by(),
                    change.held,
                    judged.assessment.as_deref().map_or(0.0, |a| a.held()),
                )
            }
            lessons::Outcome::Candidate {
                probation: true, ..
            } if !on_prompt => "a candidate, on probation: pinned, and what decides keeps it by seed 001's filter line (it is on trial, or its record over every showing filters it), so it is shown at session start as the seed shows a pinned lesson; its verdicts then decide".to_string(),
            lessons::Outcome::Candidate {
                probation: true, ..
            } => "a candidate, on probation".to_string(),
            lessons::Outcome::Candidate { .. } => "a candidate".to_string(),
        }
    ));
}

/// The decision to show on a prompt, as selection made it
/// (`considered`, when its kind's rules put the item forward): the
/// estimate, what it read, and the one threshold and cap.
fn decision_to_show(
    candidates: &decision::Candidates<'_>,
    live: &super::Live,
    considered: Option<&decision::Considered>,
    n: &mut Notes,
) {
    let (evidence, p, outcome) = match considered {
        Some(c) => (c.evidence, c.estimate, Some((c.outcome, c.rank))),
        // Not put forward by its kind's rules: its estimate all the same.
        None => {
            let (evidence, p) = candidates.estimate(live);
            (evidence, p, None)
        }
    };
    let parts: Vec<String> = super::relevance::Evidence::NAMES
        .iter()
        .zip(evidence.features())
        .map(|(n, v)| format!("{n} {v:.2}"))
        .collect();
    n.say(format!(
        "relevance estimate {p:.2} from {} ({})",
        parts.join(", "),
        decision::rule()
    ));
    n.say(match outcome {
        Some((decision::Outcome::Shown, rank)) => {
            format!("the decision to show keeps it (candidate {rank} by estimate)")
        }
        Some((decision::Outcome::Below, _)) => format!(
            "estimate {p:.2} is below {}: not about this prompt",
            super::relevance::SHOW_AT
        ),
        Some((decision::Outcome::OverCap, rank)) => format!(
            "candidate {rank} by estimate: the {} before it took the places",
            super::relevance::MAX_SHOWN
        ),
        None if p < super::relevance::SHOW_AT => format!(
            "its kind's rules did not put it forward, and its estimate {p:.2} is below {} too: not about this prompt",
            super::relevance::SHOW_AT
        ),
        None => "its kind's rules did not put it forward, so the decision to show did not weigh it".to_string(),
    });
    n.put("relevance", p);
}
