//! Learning from use, in the daemon: direct feedback and tracked
//! applications (answered only once committed to the store), evaluations,
//! and the `log` and `export` views. What queries show is recorded by the
//! [`super::recorder`].

use std::collections::BTreeMap;

use serde::Serialize;

use crate::evaluate::{transcript, Judge, JudgeInput, ShownItem};
use crate::knowledge::view;
use crate::learning::state::Key;
use crate::learning::tag_relevance::{TagScore, EVALUATOR_WEIGHT, FEEDBACK_WEIGHT};
use crate::learning::{
    Application, Applications, Judgement, Learned, LearnedMap, Match, Pin, PinChange, SessionAudit,
    Transaction, WEAK_MATCH,
};
use crate::protocol::{
    ErrorKind, EvaluateReport, LogEntry, Reply, Response, SessionEvaluation, TagLine, TeamLine,
};
use crate::store::{LearnedWrite, Store};

use super::state::Shared;

fn internal(err: impl std::fmt::Display) -> Response {
    Response::error(ErrorKind::Internal, format!("could not commit: {err}"))
}

/// An item of any scope (the global roots or a project's) by id.
fn find(
    engine: &crate::engine::Engine,
    id: &str,
) -> Option<std::sync::Arc<crate::knowledge::Item>> {
    engine.get_anywhere(id).cloned()
}

/// The answer to feedback or tracking on an id no knowledge file defines.
fn unknown(id: &str) -> Response {
    Response::error(
        ErrorKind::NotFound,
        format!(
            "no item `{id}` is loaded: nothing was recorded (check the id with `memctl search`)"
        ),
    )
}

/// How much of a feedback note goes to the log.
const NOTE_LOGGED_CHARS: usize = 500;

/// A note as the log shows it: on one line, whatever it holds (a newline
/// or another control character cannot start a line that reads as memd's
/// own), and at most [`NOTE_LOGGED_CHARS`] characters of it.
fn loggable(note: &str) -> String {
    let note = note.trim();
    let mut out: String = note
        .chars()
        .take(NOTE_LOGGED_CHARS)
        .flat_map(|c| {
            let escape = c.is_control() || matches!(c, '\u{2028}' | '\u{2029}');
            let escaped: Vec<char> = if escape {
                c.escape_unicode().collect()
            } else {
                vec![c]
            };
            escaped
        })
        .collect();
    let rest = note.chars().count().saturating_sub(NOTE_LOGGED_CHARS);
    if rest > 0 {
        out.push_str(&format!("... ({rest} more characters)"));
    }
    out
}

/// Direct feedback (weight 2.0) on `id` for `tags`, or for the tags of the
/// query that last showed it; its `note`, if any, goes to the log with it.
pub fn feedback(
    shared: &Shared,
    store: &Store,
    id: &str,
    relevant: bool,
    tags: Vec<String>,
    note: Option<&str>,
) -> Response {
    if find(&shared.read().engine, id).is_none() {
        return unknown(id);
    }
    // Given without tags, it speaks of the showing it follows: that query's
    // tags, and how well the item matched its prompt.
    let last = shared.last_shown(id);
    // Shared with the team when it speaks of a showing in its repository.
    let place = last
        .as_ref()
        .filter(|_| tags.is_empty())
        .and_then(|l| l.place.clone());
    let (tags, shown): (Vec<String>, Match) = if tags.is_empty() {
        match last {
            Some(last) if !last.tags.is_empty() => (last.tags, last.shown),
            _ => {
                return Response::error(
                    ErrorKind::BadRequest,
                    format!("no tags to apply the feedback to: `{id}` was not shown with tags yet; give --tags"),
                )
            }
        }
    } else {
        let given: Vec<String> = tags
            .iter()
            .filter_map(|t| crate::learning::workspace_tag(t))
            .collect();
        if given.is_empty() {
            return Response::error(
                ErrorKind::BadRequest,
                format!("no workspace tag among --tags {}: `*`, `!tag`, `~tag` and `@context` name memd's own evidence", tags.join(",")),
            );
        }
        (given, Match::Strong)
    };
    let raw = if relevant { 1.0 } else { -1.0 };
    let writer = shared.writer();
    let own = shared.read().engine.own_tags(id);
    let (staged, judgement, changes) = {
        let mut learned = shared.learned_mut();
        let mut tx = Transaction::new(&mut learned);
        let judged = tx.learned().judged_tags(&own, &tags, shown);
        let (_, changes) = tx
            .item(id)
            .judge(id, &own, &tags, shown, raw, FEEDBACK_WEIGHT);
        let judgement = Judgement {
            session: None,
            tags: judged,
            raw,
            weight: FEEDBACK_WEIGHT,
        };
        tx.journal(id, None, judgement.clone());
        (tx.stage(), judgement, changes)
    };
    if let Err(err) = shared.write_staged(&writer, staged, |write| store.write_learned(write)) {
        return internal(err);
    }
    drop(writer);
    tracing::info!(
        "feedback on {}: {} for [{}]{}",
        loggable(id),
        if relevant { "relevant" } else { "irrelevant" },
        loggable(&judgement.tags.join(", ")),
        note.map(|n| format!(": {}", loggable(n)))
            .unwrap_or_default()
    );
    log_pin_changes(id, &changes);
    let reply = Response::ok(Reply::Judged(entry(
        &shared.read().engine,
        &shared.learned(),
        id,
    )));
    if let Some(place) = place {
        super::team::record(
            shared,
            &place,
            &tags,
            &[(id.to_string(), raw)],
            FEEDBACK_WEIGHT,
        );
    }
    reply
}

/// Pins `id` by hand for `tags` (where a query has all of them; none:
/// everywhere), or takes out its pins, automatic or not, for exactly those
/// tags. A pin by hand is never taken out by the seed's unpin rule.
pub fn pin(shared: &Shared, store: &Store, id: &str, tags: Vec<String>, pinned: bool) -> Response {
    if find(&shared.read().engine, id).is_none() {
        return unknown(id);
    }
    let mut tags: Vec<String> = tags
        .iter()
        .filter_map(|t| crate::learning::workspace_tag(t))
        .collect();
    tags.sort();
    tags.dedup();
    let writer = shared.writer();
    let staged = {
        let mut learned = shared.learned_mut();
        let mut tx = Transaction::new(&mut learned);
        let state = tx.item(id);
        let pins = state.pins_entry(id);
        let changed = if pinned {
            let there = pins.iter().any(|p| p.manual && p.tags == tags);
            if !there {
                pins.push(Pin {
                    manual: true,
                    tags: tags.clone(),
                });
            }
            !there
        } else {
            let before = pins.len();
            pins.retain(|p| p.tags != tags);
            before != pins.len()
        };
        if state.pins().get(id).is_some_and(Vec::is_empty) {
            state.set_pins(id, None);
        }
        // Unchanged, the transaction is dropped and puts back the empty
        // list it may have made.
        changed.then(|| tx.stage())
    };
    if let Some(staged) = staged {
        if let Err(err) = shared.write_staged(&writer, staged, |write| store.write_learned(write)) {
            return internal(err);
        }
        tracing::info!(
            "{}: {} by hand for [{}]",
            loggable(id),
            if pinned { "pinned" } else { "unpinned" },
            loggable(&tags.join(", "))
        );
    }
    drop(writer);
    Response::ok(Reply::Judged(entry(
        &shared.read().engine,
        &shared.learned(),
        id,
    )))
}

fn log_pin_changes(id: &str, changes: &[PinChange]) {
    for change in changes {
        match change {
            PinChange::Pinned(tags) => {
                tracing::info!("{id}: auto-pinned for [{}]", tags.join(", "))
            }
            PinChange::Unpinned(tags) => {
                tracing::info!("{id}: auto-unpinned for [{}]", tags.join(", "))
            }
        }
    }
}

/// An application of `id` (seed 003).
pub fn track(shared: &Shared, store: &Store, id: &str, application: Application) -> Response {
    if let Some(score) = application.effectiveness_score {
        if !(0.0..=1.0).contains(&score) {
            return Response::error(
                ErrorKind::BadRequest,
                format!("--score must be between 0 and 1, not {score}"),
            );
        }
    }
    if find(&shared.read().engine, id).is_none() {
        return unknown(id);
    }
    let writer = shared.writer();
    let (staged, reply) = {
        let mut learned = shared.learned_mut();
        let mut tx = Transaction::new(&mut learned);
        let learned = tx.item(id);
        let mut applications: Applications = learned.applications(id);
        applications.record(application);
        let reply = Reply::Tracked {
            id: id.to_string(),
            times_applied: applications.times_applied,
            effectiveness: applications.effectiveness,
        };
        learned.applications.insert(id.to_string(), applications);
        (tx.stage(), reply)
    };
    if let Err(err) = shared.write_staged(&writer, staged, |write| store.write_learned(write)) {
        return internal(err);
    }
    Response::ok(reply)
}

/// Marks a session ready for evaluation.
pub fn session_end(
    shared: &Shared,
    store: &Store,
    session: &str,
    transcript: Option<String>,
) -> Response {
    let _writer = shared.writer();
    let audit = {
        let mut sessions = shared.sessions();
        let audit = sessions.entry(session.to_string()).or_default();
        audit.ended = true;
        audit.processed = false;
        if transcript.is_some() {
            audit.transcript = transcript;
        }
        audit.updated_at = crate::time::now();
        audit.clone()
    };
    let write = LearnedWrite {
        sessions: vec![(session, &audit)],
        ..LearnedWrite::default()
    };
    if let Err(err) = store.write_learned(&write) {
        return internal(err);
    }
    Response::ok(Reply::SessionEnded {
        session_id: session.to_string(),
        shown: audit.shown.len() as u64,
    })
}

/// One item's learned state.
pub fn entry(engine: &crate::engine::Engine, learned: &Learned, id: &str) -> LogEntry {
    let item = find(engine, id);
    // A tag's weak-match evidence is listed where verdicts on weak matches
    // made it differ from the tag's own (every other verdict updates both).
    let same_as_plain = |scores: &LearnedMap<Key, TagScore>, tag: &str, s: &TagScore| {
        tag.strip_prefix(WEAK_MATCH)
            .and_then(|plain| scores.get(plain))
            .is_some_and(|p| {
                (p.score, p.positive, p.negative, p.trial)
                    == (s.score, s.positive, s.negative, s.trial)
            })
    };
    let mut tags: Vec<TagLine> = learned
        .tag_scores(id)
        .map(|scores| {
            scores
                .iter()
                .filter(|(tag, s)| !same_as_plain(scores, tag, s))
                .map(|(tag, s)| TagLine {
                    tag: tag.to_string(),
                    score: s.score,
                    positive: s.positive,
                    negative: s.negative,
                    held: s.held,
                    trial: s.trial,
                    to_confirm: s.to_confirm(),
                })
                .collect()
        })
        .unwrap_or_default();
    tags.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.tag.cmp(&b.tag)));
    let pins = learned.pins_of(id);
    let pinned = (!pins.is_empty()).then(|| {
        pins.iter()
            .map(|p| {
                let how = if p.manual { "manual" } else { "auto" };
                if p.tags.is_empty() {
                    how.to_string()
                } else {
                    format!("{how} for [{}]", p.tags.join(", "))
                }
            })
            .collect::<Vec<_>>()
            .join("; ")
    });
    LogEntry {
        id: id.to_string(),
        kind: item.as_ref().map(|i| i.kind()),
        title: item
            .as_ref()
            .map(|i| view::title(i))
            .unwrap_or_else(|| "(not loaded)".into()),
        pinned,
        tags,
        times_applied: learned.times_applied(id),
        effectiveness: learned.effectiveness(id),
        team: learned
            .teams
            .values()
            .flat_map(|team| {
                team.evidence(id)
                    .into_iter()
                    .flat_map(|e| e.members.clone())
                    .map(|(member, tally)| TeamLine {
                        repo: team.name.clone(),
                        own: member == team.member,
                        member,
                        verdicts: tally.verdicts,
                        relevant: tally.relevant as f64 / 1000.0,
                        irrelevant: tally.irrelevant as f64 / 1000.0,
                    })
            })
            .collect(),
    }
}

/// Seed 001's `log`: one item, or every item with learned state; sorted by
/// the mean of its tag scores when `by_score`, else by id.
pub fn log(shared: &Shared, id: Option<String>, by_score: bool) -> Response {
    let k = shared.read();
    let learned = shared.learned();
    let ids: Vec<String> = match id {
        Some(id) => vec![id],
        None => {
            let mut ids: Vec<String> = learned
                .tag_relevance()
                .keys()
                .chain(learned.pins().keys())
                .map(|id| id.to_string())
                .chain(learned.applications.keys().cloned())
                .chain(learned.teams.values().flat_map(|t| t.items()).cloned())
                .collect();
            ids.sort();
            ids.dedup();
            ids
        }
    };
    let mut entries: Vec<LogEntry> = ids
        .iter()
        .map(|id| entry(&k.engine, &learned, id))
        .collect();
    if by_score {
        // Over the evidence for every showing (a tag's weak-match evidence
        // is listed only where it differs).
        let mean = |e: &LogEntry| {
            let (sum, n) = e
                .tags
                .iter()
                .filter(|t| !t.tag.starts_with(WEAK_MATCH))
                .fold((0.0, 0usize), |(sum, n), t| (sum + t.score, n + 1));
            if n == 0 {
                0.0
            } else {
                sum / n as f64
            }
        };
        entries.sort_by(|a, b| mean(a).total_cmp(&mean(b)));
    }
    Response::ok(Reply::Log(entries))
}

#[derive(Serialize)]
struct Export<'a> {
    memd_export: u32,
    tag_relevance: BTreeMap<&'a str, BTreeMap<&'a str, TagScore>>,
    applications: BTreeMap<&'a str, &'a Applications>,
    pins: BTreeMap<&'a str, &'a [Pin]>,
}

/// All learned state as YAML, for backup or sharing in a repository.
pub fn export(shared: &Shared) -> Response {
    let learned = shared.learned();
    let export = Export {
        memd_export: 1,
        tag_relevance: learned
            .tag_relevance()
            .iter()
            .map(|(item, tags)| {
                (
                    item.as_str(),
                    tags.iter().map(|(t, s)| (t.as_str(), *s)).collect(),
                )
            })
            .collect(),
        applications: learned
            .applications
            .iter()
            .map(|(k, v)| (k.as_str(), v))
            .collect(),
        pins: learned
            .pins()
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_slice()))
            .collect(),
    };
    match serde_saphyr::to_string(&export) {
        Ok(yaml) => Response::ok(Reply::Exported(yaml)),
        Err(err) => Response::error(ErrorKind::Internal, err.to_string()),
    }
}

/// Sessions that ended and were not evaluated since.
pub fn pending(shared: &Shared) -> u64 {
    shared
        .sessions()
        .values()
        .filter(|a| a.ended && !a.processed)
        .count() as u64
}

/// Evaluates finished sessions but those in `skip` (or re-evaluates
/// `force` from the start): the judge runs outside every lock; its answers
/// are made live, then written (`commit_session`). A session whose judge
/// fails, or answers
/// for only some of its items, stays pending (for what was not judged) and
/// says why; one whose transcript is gone is done, and says so.
pub fn evaluate(
    shared: &Shared,
    store: &Store,
    judge: &Judge,
    limit: u32,
    force: Option<String>,
    skip: &[String],
) -> Response {
    let chosen: Vec<(String, SessionAudit)> = {
        let sessions = shared.sessions();
        match &force {
            Some(id) => match sessions.get(id) {
                Some(audit) => vec![(id.clone(), audit.clone())],
                None => {
                    return Response::error(
                        ErrorKind::NotFound,
                        format!("no session `{id}` was audited"),
                    )
                }
            },
            None => {
                let mut ready: Vec<(String, SessionAudit)> = sessions
                    .iter()
                    .filter(|(id, a)| a.ended && !a.processed && !skip.contains(id))
                    .map(|(id, a)| (id.clone(), a.clone()))
                    .collect();
                ready.sort_by_key(|(id, a)| (a.updated_at, id.clone()));
                if limit > 0 {
                    ready.truncate(limit as usize);
                }
                ready
            }
        }
    };
    let mut report = EvaluateReport::default();
    for (id, audit) in chosen {
        // Forced: the whole transcript, every item shown. Otherwise what
        // was added since the last evaluation, and the items shown since.
        let part = if force.is_some() {
            Part::ALL_AGAIN
        } else {
            Part {
                offset: audit.evaluated_bytes,
                first_item: audit.judged as usize,
                again: false,
            }
        };
        let outcome = evaluate_one(shared, store, judge, &id, audit, part);
        {
            let mut problems = shared
                .evaluation_problems
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            match &outcome.problem {
                Some(why) => problems.insert(id.clone(), why.clone()),
                None => problems.remove(&id),
            };
        }
        if outcome.problem.is_some() {
            // To the back of the queue, so one failing session does not
            // hold up the others.
            if let Some(a) = shared.sessions().get_mut(&id) {
                a.updated_at = crate::time::now();
            }
        }
        report.sessions.push(outcome);
    }
    report.pending = pending(shared);
    Response::ok(Reply::Evaluated(report))
}

/// What of a session an evaluation reads and judges.
#[derive(Clone, Copy)]
struct Part {
    /// Transcript bytes already read.
    offset: u64,
    /// Items shown, from the first, already judged.
    first_item: usize,
    /// Judged again on request: earlier verdicts are replaced.
    again: bool,
}

impl Part {
    /// The whole transcript, every item shown, judged again.
    const ALL_AGAIN: Part = Part {
        offset: 0,
        first_item: 0,
        again: true,
    };
}

fn evaluate_one(
    shared: &Shared,
    store: &Store,
    judge: &Judge,
    id: &str,
    audit: SessionAudit,
    part: Part,
) -> SessionEvaluation {
    let Part {
        offset,
        first_item,
        again: rejudge,
    } = part;
    let problem = |judged: u32, why: String| SessionEvaluation {
        session_id: id.to_string(),
        judged,
        problem: Some(why),
    };
    let mut done = Evaluated {
        seen: audit.updated_at,
        evaluated_bytes: audit.evaluated_bytes,
        judged: audit.shown.iter().skip(first_item).cloned().collect(),
    };
    let Some(path) = audit.transcript.clone() else {
        // Without a transcript nothing can be judged: the session is done.
        let _ = commit_session(shared, store, id, &done, &[], None, false);
        return problem(0, "no transcript was recorded for it; skipped".into());
    };
    let chunk = match transcript::read_from(std::path::Path::new(&path), offset) {
        Ok(chunk) => chunk,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            // Gone for good: nothing can be judged, and waiting will not
            // bring it back. The session is done, and says so.
            let _ = commit_session(shared, store, id, &done, &[], None, false);
            return problem(
                0,
                format!("its transcript {path} is gone; skipped, nothing judged"),
            );
        }
        Err(err) => return problem(0, format!("cannot read the transcript {path}: {err}")),
    };
    done.evaluated_bytes = chunk.next_offset;
    let items: Vec<ShownItem> = {
        let k = shared.read();
        audit
            .shown
            .iter()
            .skip(first_item)
            .filter_map(|item| find(&k.engine, item).map(|i| ShownItem::of(&i)))
            .collect()
    };
    if items.is_empty() {
        // Nothing shown since the last evaluation: nothing to judge.
        return match commit_session(shared, store, id, &done, &[], None, false) {
            Ok(_) => SessionEvaluation {
                session_id: id.to_string(),
                judged: 0,
                problem: None,
            },
            Err(err) => problem(0, format!("could not commit: {err}")),
        };
    }
    let text = crate::evaluate::excerpt(&chunk.turns);
    // What the agent did after each item was shown, computed once a prompt.
    let marks: Vec<Option<u64>> = items
        .iter()
        .map(|i| audit.shown_on.get(&i.id).copied())
        .collect();
    let mut done_after: Vec<(Option<u64>, String)> = Vec::new();
    for mark in &marks {
        if !done_after.iter().any(|(m, _)| m == mark) {
            done_after.push((
                *mark,
                crate::evaluate::agent_work_after(&chunk.turns, *mark),
            ));
        }
    }
    let work: Vec<&str> = marks
        .iter()
        .map(|mark| {
            done_after
                .iter()
                .find(|(m, _)| m == mark)
                .map_or("", |(_, w)| w.as_str())
        })
        .collect();
    let input = JudgeInput {
        session_id: id,
        tags: &audit.tags,
        repo: audit.repo.as_deref(),
        transcript: &text,
        work: &work,
        items: &items,
    };
    let mut scores = match judge.judge(&input) {
        Ok(scores) => scores,
        Err(why) => return problem(0, why),
    };
    // Only what it was shown counts; what it left out stays pending.
    let unknown: Vec<String> = scores
        .keys()
        .filter(|k| !items.iter().any(|i| &i.id == *k))
        .cloned()
        .collect();
    scores.retain(|k, _| !unknown.contains(k));
    let missing: Vec<&str> = items
        .iter()
        .map(|i| i.id.as_str())
        .filter(|i| !judge.abstains() && !scores.contains_key(*i))
        .collect();
    done.judged.retain(|i| !missing.contains(&i.as_str()));
    if !missing.is_empty() {
        // They are judged on this part of the transcript next time too.
        done.evaluated_bytes = audit.evaluated_bytes;
    }
    let judged = scores.len() as u32;
    let mut why = Vec::new();
    if !missing.is_empty() {
        why.push(format!(
            "the judge answered for {judged} of {} item(s); {} stay pending: {}",
            items.len(),
            missing.len(),
            missing.join(", ")
        ));
    }
    if !unknown.is_empty() {
        why.push(format!(
            "the judge named item(s) it was not shown, ignored: {}",
            unknown.join(", ")
        ));
    }
    match commit_session(
        shared,
        store,
        id,
        &done,
        &audit.tags,
        Some(&scores),
        rejudge,
    ) {
        Ok(added) => {
            if let Some(place) = audit.repo.as_deref() {
                let verdicts: Vec<(String, f64)> =
                    scores.iter().map(|(i, v)| (i.clone(), *v)).collect();
                super::team::record(shared, place, &audit.tags, &verdicts, EVALUATOR_WEIGHT);
            }
            if !added.is_empty() {
                why.push(format!(
                    "earlier verdicts on {} predate the journal memd keeps of them: this one was added, not put in their place",
                    added.join(", ")
                ));
            }
            SessionEvaluation {
                session_id: id.to_string(),
                judged,
                problem: (!why.is_empty()).then(|| why.join("; ")),
            }
        }
        Err(err) => problem(0, format!("could not commit: {err}")),
    }
}

/// Adds `judged` to the audit's judged items: `shown` is reordered so the
/// judged ones (those before and these) come first, in the order shown,
/// and the rest (left out by the judge, or shown meanwhile) after them.
fn mark_judged(audit: &mut SessionAudit, judged: &[String]) {
    let before = audit.judged as usize;
    let mut done = Vec::new();
    let mut rest = Vec::new();
    for (i, item) in std::mem::take(&mut audit.shown).into_iter().enumerate() {
        if i < before || judged.contains(&item) {
            done.push(item);
        } else {
            rest.push(item);
        }
    }
    audit.judged = done.len() as u32;
    done.extend(rest);
    audit.shown = done;
}

/// What an evaluation did to a session, applied to its live audit (which
/// queries and hooks may have changed while the judge ran).
struct Evaluated {
    /// `updated_at` of the audit the evaluation read.
    seen: i64,
    /// Transcript bytes read so far.
    evaluated_bytes: u64,
    /// Items this evaluation judged (or found nothing to judge of).
    judged: Vec<String>,
}

/// Applies a session's judgements (evaluator weight 1.0) and what the
/// evaluation did to its audit: made live, then written, under the store's
/// writer (queries go on meanwhile); if the write fails, both are put back.
/// The audit is the live one, so nothing shown or recorded meanwhile is lost; it stays
/// pending if it changed while the judge ran. Re-judged (`rejudge`), an
/// item's earlier verdicts from this session are replaced, in their place,
/// and its scores replayed from its journal; an item whose journal does not
/// account for its scores (judged before the journal was kept) has the new
/// verdict added, and is returned so the caller can say so.
fn commit_session(
    shared: &Shared,
    store: &Store,
    id: &str,
    done: &Evaluated,
    tags: &[String],
    scores: Option<&BTreeMap<String, f64>>,
    rejudge: bool,
) -> Result<Vec<String>, crate::store::StoreError> {
    let writer = shared.writer();
    // Read under the store's writer, which every journal write is made
    // under, so two forced evaluations of one session never replay a
    // stale journal.
    let mut journals = BTreeMap::new();
    if rejudge {
        for item in scores.into_iter().flatten().map(|(i, _)| i) {
            journals.insert(item.clone(), store.journal(item)?);
        }
    }
    let owns: Vec<Vec<String>> = {
        let k = shared.read();
        scores
            .into_iter()
            .flatten()
            .map(|(item, _)| k.engine.own_tags(item))
            .collect()
    };
    // Sessions, then what was learned: the order every path takes them
    // in, so this cannot deadlock. Both are let go before the store
    // writes.
    let mut sessions = shared.sessions();
    let mut audit = sessions.get(id).cloned().unwrap_or_default();
    let progress = (audit.evaluated_bytes, audit.judged, audit.processed);
    audit.evaluated_bytes = done.evaluated_bytes;
    mark_judged(&mut audit, &done.judged);
    // (`updated_at` is in seconds: a change within the same second still
    // shows in a longer `shown`.)
    if audit.updated_at == done.seen && audit.judged as usize == audit.shown.len() {
        audit.processed = true;
    }
    let mut learned = shared.learned_mut();
    let mut tx = Transaction::new(&mut learned);
    let mut added_not_replaced = Vec::new();
    for ((item, raw), own) in scores.into_iter().flatten().zip(&owns) {
        let shown = Match::among(&audit.weak, item);
        let new = |updated: &[String]| Judgement {
            session: Some(id.to_string()),
            tags: updated.to_vec(),
            raw: *raw,
            weight: EVALUATOR_WEIGHT,
        };
        let entries = journals.remove(item).unwrap_or_default();
        let earlier: Vec<u64> = entries
            .iter()
            .filter(|(_, j)| j.session.as_deref() == Some(id))
            .map(|(seq, _)| *seq)
            .collect();
        let all: Vec<Judgement> = entries.iter().map(|(_, j)| j.clone()).collect();
        // Judged only before weak matches were kept apart: its weak-match
        // evidence is what its journal replays to.
        tx.item(item).seed_weak(item);
        let names = tx.learned().judged_tags(own, tags, shown);
        let changes = if earlier.is_empty() || !tx.learned().replays_to_current(item, &all) {
            if !earlier.is_empty() {
                added_not_replaced.push(item.clone());
            }
            let (_, changes) = tx
                .item(item)
                .judge(item, own, tags, shown, *raw, EVALUATOR_WEIGHT);
            tx.journal(item, None, new(&names));
            changes
        } else {
            // The new verdict takes the first earlier one's place; the
            // others (there is one unless --force ran before the journal
            // was complete) go.
            let judgement = new(&names);
            let replayed: Vec<Judgement> = entries
                .iter()
                .filter_map(|(seq, j)| {
                    if *seq == earlier[0] {
                        Some(judgement.clone())
                    } else if earlier.contains(seq) {
                        None
                    } else {
                        Some(j.clone())
                    }
                })
                .collect();
            let (_, changes) = tx.item(item).rejudge(item, &replayed, tags);
            for &seq in &earlier {
                tx.drop_journal(item, seq);
            }
            tx.journal(item, Some(earlier[0]), judgement);
            changes
        };
        log_pin_changes(item, &changes);
    }
    tx.session(id, audit.clone());
    let staged = tx.stage();
    drop(learned);
    // Live with its verdicts; a query may add to it while the store
    // writes, and the recorder writes that after this.
    sessions.insert(id.to_string(), audit);
    drop(sessions);
    if let Err(err) = shared.write_staged(&writer, staged, |write| store.write_learned(write)) {
        // Not judged after all: what this evaluation did to the audit is
        // put back (the items it judged are pending again), and whatever
        // a query added meanwhile stays.
        if let Some(audit) = shared.sessions().get_mut(id) {
            (audit.evaluated_bytes, audit.judged) = (progress.0, progress.1);
            audit.processed &= progress.2;
        }
        return Err(err);
    }
    Ok(added_not_replaced)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_is_logged_on_one_line_and_capped() {
        let forged = "fine\n2026-11-25T00:00:00Z  INFO memd: feedback on X: relevant\r\u{1b}[2J";
        let logged = loggable(forged);
        assert!(!logged.contains(['\n', '\r', '\u{1b}']), "{logged}");
        assert!(logged.starts_with("fine\\u{a}2026"), "{logged}");
        let big = "x".repeat(2 * 1024 * 1024);
        let logged = loggable(&big);
        assert!(logged.len() < 600, "{}", logged.len());
        assert!(logged.ends_with(&format!(
            "... ({} more characters)",
            big.len() - NOTE_LOGGED_CHARS
        )));
        assert_eq!(loggable("  plain note "), "plain note");
    }
}
