//! What an item's evidence says in one context ([`Assessment`]): seed
//! 001's average over the context's tags, or the context's own record,
//! or a wider scope (its evidence where its own tags were absent, its
//! record everywhere, its verdicts in every context pooled as far as
//! contexts predict each other), and the verdict of the scope that
//! decides ([`crate::learning::tag_relevance::verdict_scoped`]).

use super::{
    context_record, has_weak_evidence, HashMap, Key, Learned, Match, ELSEWHERE, EVERYWHERE,
    WEAK_MATCH,
};
use crate::learning::noise::MIN_OWN_SHARE;
use crate::learning::tag_relevance::{
    evidence, verdict_at, verdict_scoped, Evidence, Scope, TagEvidence, TagScore, TagVerdict,
    CONTEXT_RECORD, MIN_CONTEXTS_FOR_EVERYWHERE, MIN_EVALS_EARLY, MIN_EVALS_FOR_FILTER,
};
use crate::scoring::lesson::{PROBATION_MIN_TASK_POINTS, PROBATION_SHOW_TASK_POINTS};

/// A context as [`Learned::assess_in`] reads it for every item a query
/// assesses: its tags, each one's [`tag_weight`](crate::learning::tag_relevance::tag_weight), and the key of its own
/// record ([`context_record`]).
pub struct Context<'c> {
    tags: &'c [String],
    weights: Vec<f64>,
    record: Option<&'c str>,
}

/// What was learned about an item in one context, and what it decides.
#[derive(Debug, Clone, PartialEq)]
pub struct Assessment {
    /// Over the context's tags.
    pub here: Evidence,
    /// Elsewhere ([`Learned::elsewhere`]): where its own tags were absent.
    pub elsewhere: Evidence,
    /// Those tags, as `!tag` (none when it has no evidence where any of
    /// its own tags was absent).
    pub elsewhere_tags: Vec<String>,
    /// Its record in every context ([`EVERYWHERE`]), where that record
    /// decided (judged irrelevant in enough contexts to count), or its
    /// verdicts in every context did ([`Scope::Pooled`]).
    pub everywhere: Option<Evidence>,
    /// Filtered, on probation, or kept with a boost.
    pub verdict: TagVerdict,
    /// The evidence that decided it.
    pub decided: Scope,
    /// The showings the evidence read was earned on: weak-match evidence
    /// for a weak match, once the item has any ([`Match::Weak`]).
    pub read: Match,
    /// memd: the item was never judged in this context (a tag of it has no
    /// evidence), so what its tags hold was earned elsewhere, through the
    /// tags this context shares with others (a language, a framework): it
    /// orders here but does not filter ([`Learned::assess`]).
    pub borrowed: bool,
    /// What the team's files say about it, where the project shares its
    /// verdicts ([`Assessment::with_team`]).
    pub team: Option<std::sync::Arc<crate::learning::team::TeamEvidence>>,
    /// Its own record in this context ([`CONTEXT_RECORD`]), once it has
    /// [`MIN_EVALS_FOR_FILTER`] judged sessions, or [`MIN_EVALS_EARLY`]
    /// that speak against it ([`Evidence::early`]): what decides here in
    /// place of the average over the context's tags ([`Scope::Context`]).
    pub record: Option<Evidence>,
    /// memd: on a prompt that matches it well, where what decides keeps
    /// it, its own record in this context over every showing (the
    /// weak-match record, [`WEAK_MATCH`] before [`CONTEXT_RECORD`], which
    /// every verdict moves) when that record filters it or is on trial
    /// ([`TagScore::trial`]): it is then a re-check
    /// ([`TagVerdict::Probation`]) until its next verdict on a strong match
    /// ([`Learned::assess_in`]) that leaves the record over the line and
    /// off trial.
    pub every_showing: Option<Evidence>,
    /// memd: where it decided ([`Scope::Pooled`]), its verdicts in every
    /// context it was judged in, read for this one.
    pub pooled: Option<Pooled>,
    /// memd: what decided keeps it by seed 001's filter line, so that a
    /// [`TagVerdict::Probation`] is memd's own re-check (the record that
    /// decided is on trial, [`TagScore::trial`], or the record over every
    /// showing filters it), not that of a lesson the line filters, shown
    /// again after its wait. The seed, which has neither, shows such a
    /// lesson where it is pinned.
    pub kept_by_the_line: bool,
}

/// An item's verdicts in every context it was judged in, read for one
/// context ([`crate::learning::noise::Agreement::pooled`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pooled {
    /// Its (relevant, irrelevant) verdicts in this context.
    pub here: (f64, f64),
    /// Its (relevant, irrelevant) verdicts in the other contexts, summed.
    pub elsewhere: (f64, f64),
    /// How many other contexts they came from.
    pub contexts: usize,
    /// How often an item's relevance differs between two contexts
    /// ([`crate::learning::noise::Agreement::relevance_differs`]).
    pub differs: f64,
    /// How likely it is to be relevant here: the share of relevant items,
    /// and after its verdicts.
    pub odds: crate::learning::noise::Odds,
}

impl Assessment {
    /// memd: evidence that the context changed. The item is filtered here,
    /// and its own record here ([`Assessment::record`]) holds at least the
    /// seed's [`MIN_EVALS_FOR_FILTER`] sessions that judged it relevant:
    /// it had helped here, and on its latest verdicts it no longer does.
    /// Or it is a re-check because its record here over every showing
    /// filters it ([`Assessment::every_showing`], not on trial), and that
    /// record holds as many relevant verdicts: where a context has few
    /// sessions, the verdicts that found it relevant came on prompts that
    /// matched it in passing as often as on those that matched it well, and
    /// its record on strong matches may hold fewer. (A lesson filtered on
    /// its first verdicts, or never relevant here, says nothing about a
    /// change.)
    pub fn turned(&self) -> bool {
        match self.verdict {
            TagVerdict::Filtered => self
                .record
                .is_some_and(|r| r.positive >= MIN_EVALS_FOR_FILTER),
            TagVerdict::Probation(_) => self
                .every_showing
                .is_some_and(|r| !r.trial && r.positive >= MIN_EVALS_FOR_FILTER),
            TagVerdict::Boost(_) => false,
        }
    }

    /// memd: how old its evidence here is: the prompts it was held back
    /// from since its latest verdict here ([`Evidence::held`]), on its own
    /// record here where it has one, else over the context's tags.
    pub fn held(&self) -> f64 {
        self.record.map_or(self.here.held, |r| r.held)
    }

    /// memd: the task points a prompt's match must be worth for the item,
    /// on probation ([`TagVerdict::Probation`]), to be shown there as a
    /// re-check: seed 001's strongest band
    /// ([`PROBATION_SHOW_TASK_POINTS`]), or the band its wait counts
    /// ([`PROBATION_MIN_TASK_POINTS`]) where its own record here
    /// ([`Assessment::record`]) has more verdicts for it than against it
    /// ([`Evidence::for_it_on_balance`]). Such a record is filtered by the
    /// seed's EMA reading its latest verdicts, two wrong ones in a row
    /// among many right ones as readily as a change, and a re-check only
    /// on the strongest band came too seldom to settle which where a
    /// context's sessions are few or its topics many. A record against it
    /// waits for the strongest band: a weaker match is as often a prompt
    /// on another topic that shares a word with it, where a verdict says
    /// nothing of its own. Measured (the learning bench, evaluator, 20%;
    /// chosen on seeds 1-4, reported on 9-24): BENCHMARKS.md, "Learning
    /// per context".
    pub fn recheck_points(&self) -> u8 {
        if self.record.is_some_and(|r| r.for_it_on_balance()) {
            PROBATION_MIN_TASK_POINTS
        } else {
            PROBATION_SHOW_TASK_POINTS
        }
    }

    /// The assessment with the team's evidence (`team`, read with the
    /// teammates' `weight`): where nothing here says the item is relevant
    /// and nothing here filters it, the team's evidence decides (it
    /// filters only when two members or more lean against the item) and
    /// its boost is added.
    pub fn with_team(
        mut self,
        team: std::sync::Arc<crate::learning::team::TeamEvidence>,
        weight: f64,
    ) -> Assessment {
        use crate::learning::team::TeamVerdict;
        if let TagVerdict::Boost(own) = self.verdict {
            if self.here.level <= 0.0 || self.borrowed {
                match team.verdict(weight) {
                    TeamVerdict::Filtered => {
                        self.verdict = TagVerdict::Filtered;
                        self.decided = Scope::Team;
                        self.kept_by_the_line = false;
                    }
                    TeamVerdict::Boost(boost) => self.verdict = TagVerdict::Boost(own + boost),
                }
            }
        }
        self.team = Some(team);
        self
    }
}

/// [`evidence`] over `tags` from an item's per-tag `scores` as showings
/// like `read` have them ([`Match::key`]), each tag weighing `weight(tag)`.
fn evidence_over<'a>(
    scores: Option<&HashMap<Key, TagScore>>,
    tags: impl IntoIterator<Item = &'a str>,
    read: Match,
    weight: impl Fn(&str) -> f64,
) -> Evidence {
    evidence(tags.into_iter().map(|tag| TagEvidence {
        weight: weight(tag),
        score: scores.and_then(|s| read.score_in(s, tag).copied()),
    }))
}

impl Learned {
    /// What was learned about `item` in the context of `tags` (its evidence
    /// for every showing, [`Match::Strong`]).
    pub fn evidence(&self, item: &str, tags: &[String]) -> Evidence {
        self.evidence_as(item, tags, Match::Strong)
    }

    /// [`Learned::evidence`] as showings like `read` have it.
    fn evidence_as(&self, item: &str, tags: &[String], read: Match) -> Evidence {
        evidence_over(
            self.tag_scores(item),
            tags.iter().map(String::as_str),
            read,
            |tag| self.weight(tag),
        )
    }

    /// Where an item's evidence counts besides this context's tags: each
    /// of its `own` tags that some context has had but `tags` lacks, as
    /// `!tag`: the contexts its author did not write it for. Tags no
    /// context ever had (`security`) say nothing here.
    pub fn elsewhere(&self, own: &[String], tags: &[String]) -> Vec<String> {
        own.iter()
            .filter(|t| self.tag_stats.contains_key(*t) && !tags.contains(t))
            .map(|t| format!("{ELSEWHERE}{t}"))
            .collect()
    }

    /// The assessment of an item nothing was learned about: no evidence
    /// either way (the common case on the query path, decided without a
    /// tag's weight).
    pub fn nothing_learned(&self, own: &[String], tags: &[String]) -> Assessment {
        let none = Evidence::default();
        Assessment {
            here: none,
            elsewhere: none,
            elsewhere_tags: self.elsewhere(own, tags),
            everywhere: None,
            verdict: TagVerdict::Boost(0.0),
            decided: Scope::Here,
            read: Match::Strong,
            borrowed: false,
            team: None,
            record: None,
            every_showing: None,
            pooled: None,
            kept_by_the_line: true,
        }
    }

    /// What was learned about `item` (with its `own` tags) in the context
    /// of `tags` for a showing that matched as `shown` does, and the
    /// verdict ([`verdict_scoped`]). A weak match reads the item's
    /// weak-match evidence; an item judged only before that evidence was
    /// kept (it has none until its next verdict, [`Learned::seed_weak`]) is
    /// read from its evidence for every showing, which is the same.
    pub fn assess(&self, item: &str, own: &[String], tags: &[String], shown: Match) -> Assessment {
        let record = context_record(tags);
        let context = self.context(tags, record.as_deref());
        self.assess_in(item, || own.to_vec(), &context, shown)
    }

    /// The context of `tags` as [`Learned::assess_in`] reads it, with the
    /// key of its own record ([`context_record`] of `tags`): made once for
    /// a query that assesses many items in it.
    pub fn context<'c>(&self, tags: &'c [String], record: Option<&'c str>) -> Context<'c> {
        Context {
            tags,
            weights: tags.iter().map(|t| self.weight(t)).collect(),
            record,
        }
    }

    /// [`Learned::assess`] in a `context` made once for many items, its
    /// `own` tags read only when it has evidence where they were absent.
    pub fn assess_in(
        &self,
        item: &str,
        own: impl FnOnce() -> Vec<String>,
        context: &Context<'_>,
        shown: Match,
    ) -> Assessment {
        let tags = context.tags;
        let scores = self.tag_scores(item);
        let Some(scores) = scores else {
            return self.nothing_learned(&own(), tags);
        };
        let line = self.filter_line();
        let read = match shown {
            Match::Weak if has_weak_evidence(scores) => Match::Weak,
            _ => Match::Strong,
        };
        // Judged here: every tag of this context has evidence (a judgement
        // updates each tag of its context). Otherwise what the tags hold was
        // earned in other contexts that share some of them, and one
        // repository's verdicts do not filter a lesson in another that
        // only shares its language: here decides the order only, and a
        // wider scope filters where it has earned it (Everywhere: judged
        // irrelevant in two contexts or more).
        let mut borrowed = false;
        let here = evidence(tags.iter().zip(&context.weights).map(|(tag, &weight)| {
            let score = read.score_in(scores, tag).copied();
            borrowed |= score.is_none();
            TagEvidence { weight, score }
        }));
        let has_elsewhere = scores.keys().any(|k| {
            k.strip_prefix(WEAK_MATCH)
                .unwrap_or(k)
                .starts_with(ELSEWHERE)
        });
        let scores = Some(scores);
        // Without evidence where its own tags were absent, there is none
        // elsewhere to read (a lesson's own tags may be the words of its
        // text, which each query would read again).
        let elsewhere_tags = if has_elsewhere {
            self.elsewhere(&own(), tags)
        } else {
            Vec::new()
        };
        let elsewhere = evidence_over(
            scores,
            elsewhere_tags.iter().map(String::as_str),
            read,
            |_| 1.0,
        );
        let record = || evidence_over(scores, [EVERYWHERE], read, |_| 1.0);
        // Its record everywhere is looked at only when nothing narrower
        // decided, and the contexts it was judged in (a walk over them) are
        // counted only when that record would decide.
        let wider = [(Scope::Elsewhere, elsewhere)].into_iter().chain(
            std::iter::once_with(|| (Scope::Everywhere, record())).filter(|&(_, all)| {
                !matches!(verdict_at(all, line), TagVerdict::Boost(_))
                    && self.against_in_at_least(item, read, MIN_CONTEXTS_FOR_EVERYWHERE)
            }),
        );
        // A context with the seed's three judged sessions of its own
        // decides on its own record, not on what the tags it shares hold;
        // one with fewer, where its verdicts speak against the item clearly
        // enough ([`MIN_EVALS_EARLY`]).
        let own_record = context
            .record
            .map(|key| evidence_over(scores, [key], read, |_| 1.0))
            .and_then(|r| {
                if r.evals >= MIN_EVALS_FOR_FILTER {
                    return Some(r);
                }
                self.early(r, record).map(|odds| Evidence {
                    early: Some(odds),
                    ..r
                })
            });
        let deciding = match own_record {
            Some(own_record) => own_record,
            None if borrowed => Evidence { evals: 0.0, ..here },
            None => here,
        };
        let (outcome, decided) = match verdict_scoped(deciding, wider, line) {
            (outcome, Scope::Here) if own_record.is_some() => (outcome, Scope::Context),
            decided => decided,
        };
        // Kept on what is narrower, it is read on its verdicts in every
        // context it was judged in, where this context's own evidence is
        // not for it: the average over the tags is not positive, or no
        // verdict here found it relevant (what the tags hold beyond that
        // was earned in the contexts pooled, each read as far as it
        // predicts this one).
        let pooled = match (outcome, decided) {
            (TagVerdict::Boost(_), Scope::Here | Scope::Context) => self
                .pooled_in(item, context, read, deciding.level)
                .filter(|p| p.odds.against()),
            _ => None,
        };
        let (outcome, decided) = match pooled {
            Some(p) => (
                verdict_at(
                    Evidence {
                        early: Some(p.odds),
                        ..record()
                    },
                    line,
                ),
                Scope::Pooled,
            ),
            None => (outcome, decided),
        };
        // Kept on a strong match while its own record here over every
        // showing filters it: the verdicts on passing matches say it no
        // longer helps here (a drift), or that those prompts were not about
        // it, and its next verdict on a strong match tells which; until
        // then it is a re-check. One relevant verdict that lifts that record
        // over the line puts it on trial ([`TagScore::trial`]), as it does a
        // record that filters: a re-check still, until the next verdict
        // confirms it. (Measured, the learning bench, held-out seeds 9-16:
        // without the trial here a stale lesson came back as a kept one on
        // one wrong verdict, with the drift's verdicts read as a noisier
        // judge and the line lowered under its strong-match record; stale
        // lessons stopped by session 5 in stacks 32 -> 37 of 45, by 15 in
        // sparse 38 -> 43 of 45, precision and recall within 0.002.) Only
        // while a record's moves are more the lesson's than the judge's
        // noise ([`MIN_OWN_SHARE`]).
        let every_showing = context
            .record
            .filter(|_| read == Match::Strong && matches!(outcome, TagVerdict::Boost(_)))
            .filter(|_| self.boost_share() >= MIN_OWN_SHARE)
            .map(|key| evidence_over(scores, [key], Match::Weak, |_| 1.0))
            .filter(|all| all.evals >= MIN_EVALS_FOR_FILTER && (all.level < line || all.trial));
        // Where the line keeps it, a probation is a trial's re-check or the
        // record over every showing's.
        let decided_on = match decided {
            Scope::Here | Scope::Context => Some(deciding),
            Scope::Elsewhere => Some(elsewhere),
            Scope::Everywhere => Some(record()),
            Scope::Pooled | Scope::Team => None,
        };
        let kept_by_the_line = decided_on.is_some_and(|e| {
            let at_once = Evidence {
                trial: false,
                held: 0.0,
                ..e
            };
            matches!(verdict_at(at_once, line), TagVerdict::Boost(_))
        });
        let outcome = match outcome {
            TagVerdict::Boost(boost) if every_showing.is_some() => TagVerdict::Probation(boost),
            outcome => outcome,
        };
        // The seed's boost, in the share of it the judge's noise leaves.
        let outcome = outcome.boost_times(self.boost_share());
        let everywhere = matches!(decided, Scope::Everywhere | Scope::Pooled).then(record);
        Assessment {
            here,
            elsewhere,
            elsewhere_tags,
            everywhere,
            verdict: outcome,
            decided,
            read,
            borrowed,
            team: None,
            record: own_record,
            every_showing,
            pooled,
            kept_by_the_line,
        }
    }

    /// The contexts `item` was shown and judged in, as showings like
    /// `read` have it: of those it was shown to a session in, the ones
    /// whose every tag has evidence for it (a judgement updates each tag of
    /// its context).
    pub fn contexts_judged(&self, item: &str, read: Match) -> usize {
        self.judged_contexts(item, read).count()
    }

    /// The contexts where `item` was shown and judged irrelevant on
    /// balance (as showings like `read` have it, its own record there,
    /// [`CONTEXT_RECORD`], is below 0; in a context without one, as in a
    /// store from before the records, the evidence over the context's
    /// tags): how many repositories its record everywhere speaks against
    /// it for.
    pub fn contexts_against(&self, item: &str, read: Match) -> usize {
        self.judged_contexts(item, read)
            .filter(|&against| against)
            .count()
    }

    /// The odds that filter an item on its own record in a context (`r`)
    /// before the seed's three judged sessions there ([`MIN_EVALS_EARLY`]),
    /// read with its record in every context (`all`, looked up only once
    /// `r` has enough sessions: this runs for every candidate judged
    /// here); `None` where they do not.
    fn early(
        &self,
        r: Evidence,
        all: impl FnOnce() -> Evidence,
    ) -> Option<crate::learning::noise::Odds> {
        if r.evals < MIN_EVALS_EARLY {
            return None;
        }
        let all = all();
        let here = (r.positive, r.evals - r.positive);
        let elsewhere = (
            (all.positive - here.0).max(0.0),
            (all.evals - all.positive - here.1).max(0.0),
        );
        self.noise
            .agreement()
            .odds(here, elsewhere)
            .filter(crate::learning::noise::Odds::against)
    }

    /// `item`'s verdicts in every context it was judged in, read for
    /// `context` ([`Scope::Pooled`]): only where it was judged here at
    /// least once (one repository's verdicts never filter it in another)
    /// and its evidence here is not for it (the average over the
    /// context's tags, `level`, is not positive, or no verdict here found
    /// it relevant), and on [`MIN_EVALS_EARLY`] judged sessions in all (as
    /// on its own record here, never on one verdict); `None` where
    /// [`crate::learning::noise::Agreement::pooled`] is.
    fn pooled_in(
        &self,
        item: &str,
        context: &Context<'_>,
        read: Match,
        level: f64,
    ) -> Option<Pooled> {
        let scores = self.tag_scores(item)?;
        let here = context
            .record
            .and_then(|key| read.score_in(scores, key))
            .map_or((0.0, 0.0), |s| {
                (f64::from(s.positive), f64::from(s.negative))
            });
        let judged_here = here.0 + here.1;
        if judged_here < 1.0 || (level > 0.0 && here.0 > 0.0) {
            return None;
        }
        let agreement = self.noise.agreement();
        let mut elsewhere = (0.0, 0.0);
        let mut contexts = 0;
        let others = self
            .records_in_contexts(item, read, context.record)
            .inspect(|&(p, q)| {
                elsewhere.0 += p;
                elsewhere.1 += q;
                contexts += 1;
            });
        let odds = agreement.pooled(here, others)?;
        if judged_here + elsewhere.0 + elsewhere.1 < MIN_EVALS_EARLY {
            return None;
        }
        Some(Pooled {
            here,
            elsewhere,
            contexts,
            differs: agreement.relevance_differs()?,
            odds,
        })
    }

    /// `item`'s (relevant, irrelevant) verdicts in each context it was
    /// shown and judged in that has its own record, as showings like
    /// `read` have it, but `except`.
    fn records_in_contexts<'a>(
        &'a self,
        item: &str,
        read: Match,
        except: Option<&'a str>,
    ) -> impl Iterator<Item = (f64, f64)> + 'a {
        let scores = self.tag_scores(item);
        let mut record = String::new();
        self.shown_in(item).filter_map(move |key| {
            record.clear();
            record.push_str(CONTEXT_RECORD);
            record.push_str(key);
            if except == Some(record.as_str()) {
                return None;
            }
            let s = read.score_in(scores?, &record)?;
            Some((f64::from(s.positive), f64::from(s.negative)))
        })
    }

    /// The contexts (their keys) `item` was shown to a session in.
    fn shown_in<'a>(&'a self, item: &str) -> impl Iterator<Item = &'a String> + 'a {
        self.matches
            .get(item)
            .into_iter()
            .flat_map(|shown| shown.keys())
    }

    /// Whether `item` was judged irrelevant on balance in at least `n`
    /// contexts ([`Learned::contexts_against`]), counting no further.
    fn against_in_at_least(&self, item: &str, read: Match, n: usize) -> bool {
        n == 0
            || self
                .judged_contexts(item, read)
                .filter(|&against| against)
                .nth(n - 1)
                .is_some()
    }

    /// For each context `item` was shown and judged in, whether it was
    /// judged irrelevant there on balance ([`Learned::contexts_against`]).
    /// One look-up of its record there, or one pass over the context's
    /// tags: a query asks this of every item its record everywhere would
    /// filter.
    fn judged_contexts<'a>(&'a self, item: &str, read: Match) -> impl Iterator<Item = bool> + 'a {
        let scores = self.tag_scores(item);
        let mut record = String::new();
        let mut tags = Vec::new();
        self.shown_in(item).filter_map(move |key| {
            let scores = scores?;
            // Its own record there, once it has one: the tags a context
            // shares with others hold their verdicts too.
            record.clear();
            record.push_str(CONTEXT_RECORD);
            record.push_str(key);
            if let Some(own) = read.score_in(scores, &record) {
                return Some(own.level() < 0.0);
            }
            tags.clear();
            for tag in key.split(',') {
                tags.push(TagEvidence {
                    weight: self.weight(tag),
                    score: Some(*read.score_in(scores, tag)?),
                });
            }
            Some(evidence(tags.iter().copied()).level < 0.0)
        })
    }
}
