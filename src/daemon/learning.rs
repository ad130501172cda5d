//! Learning from use, in the daemon: direct feedback and tracked
//! applications (answered only once committed to the store), session audits
//! and the match-count auto-pin (written by the indexer thread, off the
//! query path), and the `log` and `export` views.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::engine::{Application, Applications, Learned, Pin, PinChange};
use crate::knowledge::view;
use crate::protocol::{ErrorKind, LogEntry, Reply, Response, TagLine};
use crate::scoring::tag_relevance::{TagScore, FEEDBACK_WEIGHT};
use crate::store::{LearnedWrite, SessionAudit, Store};

use super::state::Shared;

fn internal(err: impl std::fmt::Display) -> Response {
    Response::error(ErrorKind::Internal, format!("could not commit: {err}"))
}

/// Direct feedback (weight 2.0) on `id` for `tags`, or for the tags of the
/// query that last showed it.
pub fn feedback(
    shared: &Shared,
    store: &Store,
    id: &str,
    relevant: bool,
    tags: Vec<String>,
) -> Response {
    let tags: Vec<String> = if tags.is_empty() {
        match shared.last_tags(id) {
            Some(tags) if !tags.is_empty() => tags,
            _ => {
                return Response::error(
                    ErrorKind::BadRequest,
                    format!("no tags to apply the feedback to: `{id}` was not shown with tags yet; give --tags"),
                )
            }
        }
    } else {
        tags.iter()
            .map(|t| t.trim().to_lowercase())
            .filter(|t| !t.is_empty())
            .collect()
    };
    let raw = if relevant { 1.0 } else { -1.0 };
    let mut k = shared.write();
    let learned = k.engine.learned_mut();
    let before = (
        learned.tag_relevance.get(id).cloned(),
        learned.pins.get(id).cloned(),
    );
    let (updated, change) = learned.judge(id, &tags, raw, FEEDBACK_WEIGHT);
    let pin = learned.pins.get(id).cloned();
    let write = LearnedWrite {
        tag_scores: updated.iter().map(|(t, s)| (id, t.as_str(), *s)).collect(),
        pins: if change.is_some() {
            vec![(id, pin.as_ref())]
        } else {
            Vec::new()
        },
        ..LearnedWrite::default()
    };
    if let Err(err) = store.write_learned(&write) {
        restore(learned, id, before);
        return internal(err);
    }
    if let Some(change) = change {
        tracing::info!(
            "{id}: {}",
            if change == PinChange::Pinned {
                "auto-pinned"
            } else {
                "auto-unpinned"
            }
        );
    }
    Response::ok(Reply::Judged(entry(&k.engine, id)))
}

fn restore(
    learned: &mut Learned,
    id: &str,
    before: (
        Option<std::collections::HashMap<String, TagScore>>,
        Option<Pin>,
    ),
) {
    match before.0 {
        Some(scores) => learned.tag_relevance.insert(id.to_string(), scores),
        None => learned.tag_relevance.remove(id),
    };
    match before.1 {
        Some(pin) => learned.pins.insert(id.to_string(), pin),
        None => learned.pins.remove(id),
    };
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
    let mut k = shared.write();
    let mut applications: Applications = k.engine.learned().applications(id);
    applications.record(application);
    let write = LearnedWrite {
        applications: vec![(id, &applications)],
        ..LearnedWrite::default()
    };
    if let Err(err) = store.write_learned(&write) {
        return internal(err);
    }
    let reply = Reply::Tracked {
        id: id.to_string(),
        times_applied: applications.times_applied,
        effectiveness: applications.effectiveness,
    };
    k.engine
        .learned_mut()
        .applications
        .insert(id.to_string(), applications);
    Response::ok(reply)
}

/// Marks a session ready for evaluation.
pub fn session_end(
    shared: &Shared,
    store: &Store,
    session: &str,
    transcript: Option<String>,
) -> Response {
    let mut sessions = shared.sessions();
    let audit = sessions.entry(session.to_string()).or_default();
    audit.ended = true;
    audit.processed = false;
    if transcript.is_some() {
        audit.transcript = transcript;
    }
    audit.updated_at = crate::time::now();
    let write = LearnedWrite {
        sessions: vec![(session, &*audit)],
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

/// Records what a query showed a session, and counts lessons shown for the
/// match-count auto-pin. Runs on the indexer thread.
pub fn record_shown(
    shared: &Shared,
    store: &Store,
    session: Option<(String, SessionAudit)>,
    lessons: Vec<String>,
    tags: Vec<String>,
) {
    let mut k = shared.write();
    let learned = k.engine.learned_mut();
    let mut counts = Vec::new();
    let mut pins = Vec::new();
    for lesson in &lessons {
        let (subset, count, pinned) = learned.shown(lesson, &tags);
        counts.push((lesson.clone(), subset, count));
        if pinned {
            tracing::info!(
                "{lesson}: auto-pinned after {count} matches for [{}]",
                tags.join(", ")
            );
            pins.push((lesson.clone(), learned.pins.get(lesson).cloned()));
        }
    }
    let write = LearnedWrite {
        matches: counts
            .iter()
            .map(|(l, s, c)| (l.as_str(), s.as_str(), *c))
            .collect(),
        pins: pins.iter().map(|(l, p)| (l.as_str(), p.as_ref())).collect(),
        sessions: session.iter().map(|(id, a)| (id.as_str(), a)).collect(),
        ..LearnedWrite::default()
    };
    if let Err(err) = store.write_learned(&write) {
        tracing::warn!("could not record a session audit: {err}");
    }
}

/// One item's learned state.
pub fn entry(engine: &crate::engine::Engine, id: &str) -> LogEntry {
    let learned = engine.learned();
    let item = engine.get(id).cloned().or_else(|| {
        (1..=engine.projects().len() as u32).find_map(|scope| engine.get_in(id, scope).cloned())
    });
    let mut tags: Vec<TagLine> = learned
        .tag_scores(id)
        .map(|scores| {
            scores
                .iter()
                .map(|(tag, s)| TagLine {
                    tag: tag.clone(),
                    score: s.score,
                    positive: s.positive,
                    negative: s.negative,
                })
                .collect()
        })
        .unwrap_or_default();
    tags.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.tag.cmp(&b.tag)));
    let pinned = learned.pins.get(id).map(|p| {
        let how = if p.manual { "manual" } else { "auto" };
        if p.tags.is_empty() {
            how.to_string()
        } else {
            format!("{how} for [{}]", p.tags.join(", "))
        }
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
    }
}

/// Seed 001's `log`: one item, or every item with learned state; sorted by
/// the mean of its tag scores when `by_score`, else by id.
pub fn log(shared: &Shared, id: Option<String>, by_score: bool) -> Response {
    let k = shared.read();
    let learned = k.engine.learned();
    let ids: Vec<String> = match id {
        Some(id) => vec![id],
        None => {
            let mut ids: Vec<String> = learned
                .tag_relevance
                .keys()
                .chain(learned.applications.keys())
                .chain(learned.pins.keys())
                .cloned()
                .collect();
            ids.sort();
            ids.dedup();
            ids
        }
    };
    let mut entries: Vec<LogEntry> = ids.iter().map(|id| entry(&k.engine, id)).collect();
    if by_score {
        let mean = |e: &LogEntry| {
            if e.tags.is_empty() {
                0.0
            } else {
                e.tags.iter().map(|t| t.score).sum::<f64>() / e.tags.len() as f64
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
    pins: BTreeMap<&'a str, &'a Pin>,
}

/// All learned state as YAML, for backup or sharing in a repository.
pub fn export(shared: &Shared) -> Response {
    let k = shared.read();
    let learned = k.engine.learned();
    let export = Export {
        memd_export: 1,
        tag_relevance: learned
            .tag_relevance
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
        pins: learned.pins.iter().map(|(k, v)| (k.as_str(), v)).collect(),
    };
    match serde_saphyr::to_string(&export) {
        Ok(yaml) => Response::ok(Reply::Exported(yaml)),
        Err(err) => Response::error(ErrorKind::Internal, err.to_string()),
    }
}
