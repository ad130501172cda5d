//! Answering one request. Everything here is synchronous and short: a read
//! lock on the knowledge, the engine's work, a few bookkeeping locks.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::knowledge::view;
use crate::knowledge::FileKind;
use crate::protocol::{
    ErrorKind, JudgeNoise, Query, Reply, RequestBody, Response, RootStatus, StatusReport,
    PROTOCOL_VERSION,
};

use super::learning;
use super::recorder::{Recorder, Shown};
use super::state::{LastShown, Shared};
use super::watch::Message;
use crate::engine::Answered;
use crate::learning::{Application, Match};
use crate::store::Store;

/// How long a request waits for the indexer (reload, project registration).
pub(super) const INDEXER_WAIT: Duration = Duration::from_secs(30);
/// Working directories remembered as resolved to a project (or none).
const PLACES_CAP: usize = 4096;
/// Search results when the request asks for none.
const DEFAULT_SEARCH_LIMIT: usize = 10;

/// Handles requests against the shared state.
#[derive(Clone)]
pub struct Handler {
    pub shared: Arc<Shared>,
    pub store: Arc<Store>,
    pub indexer: Sender<Message>,
    pub recorder: Recorder,
    pub judge: Arc<crate::evaluate::Judge>,
}

/// What a request leaves to do once its reply is on its way: a query's
/// showing, handed to the recorder thread ([`Recorder::record`]). The
/// hand-off wakes that thread, which on a busy machine can take the CPU
/// from the request for as long as its batch takes; after the reply, the
/// client no longer waits for it. What the next request needs (the
/// session's audit, what each item was last shown with) is kept before the
/// reply; only the recorder's bookkeeping (persisting the audit, the
/// sessions' clocks, match counts, the aging of held-back evidence), which
/// was never waited for, comes after. Dropping it hands the showing over
/// too, so a reply that could not be written still records what was shown.
#[must_use = "dropping it hands the showing to the recorder; drop it after the reply"]
pub struct Deferred {
    recorder: Recorder,
    shown: Option<Shown>,
}

impl Deferred {
    /// Holds `shown` for the recorder, counted as waiting from now on.
    fn hold(&mut self, shown: Option<Shown>) {
        if shown.is_some() {
            self.recorder.expect();
        }
        self.shown = shown;
    }
}

impl Drop for Deferred {
    fn drop(&mut self) {
        if let Some(shown) = self.shown.take() {
            self.recorder.send(shown);
        }
    }
}

impl Handler {
    /// Answers one request, with what it leaves for the recorder handed
    /// over at once.
    pub fn handle(&self, request: RequestBody) -> Response {
        self.handle_deferring(request).0
    }

    /// Answers one request; what it leaves for the recorder is handed over
    /// when the [`Deferred`] is dropped, after the reply is written.
    pub fn handle_deferring(&self, request: RequestBody) -> (Response, Deferred) {
        let mut deferred = Deferred {
            recorder: self.recorder.clone(),
            shown: None,
        };
        let response = match request {
            RequestBody::Query(query) => {
                let (response, shown) = self.query(query);
                deferred.hold(shown);
                response
            }
            request => self.answer(request),
        };
        (response, deferred)
    }

    /// Answers every request but a query.
    fn answer(&self, request: RequestBody) -> Response {
        match request {
            RequestBody::Ping => Response::ok(Reply::Pong {
                daemon_version: env!("CARGO_PKG_VERSION").to_string(),
                pid: self.shared.info.pid,
            }),
            RequestBody::Status => Response::ok(Reply::Status(Box::new(self.status()))),
            // Answered by `handle_deferring`, which never passes one here.
            query @ RequestBody::Query(_) => self.handle(query),
            RequestBody::Explain { id, query } => {
                self.register_place(&query);
                let exclude = self.seen(&query);
                let k = self.shared.read();
                let learned = self.shared.learned();
                match k.engine.explain(&learned, &id, &query, &exclude) {
                    Ok(Some(explanation)) => Response::ok(Reply::Explanation(explanation)),
                    Ok(None) => not_found(&id),
                    Err(err) => Response::error(ErrorKind::BadRequest, err.to_string()),
                }
            }
            RequestBody::Get { id, query } => {
                self.register_place(&query);
                let k = self.shared.read();
                let scope = k.engine.scope_of(&query);
                match k.engine.get_in(&id, scope) {
                    Some(item) => Response::ok(Reply::Item(view::view(item))),
                    None => not_found(&id),
                }
            }
            RequestBody::Search { text, limit, query } => {
                self.register_place(&query);
                let k = self.shared.read();
                let scope = k.engine.scope_of(&query);
                let limit = if limit == 0 {
                    DEFAULT_SEARCH_LIMIT
                } else {
                    limit as usize
                };
                Response::ok(Reply::Hits(k.engine.search(&text, limit, scope)))
            }
            RequestBody::Reload => {
                let (tx, rx) = mpsc::channel();
                if self.indexer.send(Message::Reload(tx)).is_err() {
                    return Response::error(ErrorKind::Internal, "the indexer has stopped");
                }
                match rx.recv_timeout(INDEXER_WAIT) {
                    Ok(report) => Response::ok(Reply::Reloaded(report)),
                    Err(_) => {
                        Response::error(ErrorKind::Internal, "the reload did not finish in time")
                    }
                }
            }
            RequestBody::Add(new) => super::writer::add(self, new),
            RequestBody::TeamCompact { place } => super::team::compact(&self.shared, &place),
            RequestBody::Pin { id, tags, pinned } => {
                learning::pin(&self.shared, &self.store, &id, tags, pinned)
            }
            RequestBody::Ui => match super::ui::start(self) {
                Ok(running) => Response::ok(Reply::Ui { url: running.url() }),
                Err(err) => Response::error(
                    ErrorKind::Internal,
                    format!("the local page cannot start: {err}"),
                ),
            },
            RequestBody::Feedback {
                id,
                relevant,
                tags,
                note,
            } => learning::feedback(
                &self.shared,
                &self.store,
                &id,
                relevant,
                tags,
                note.as_deref(),
            ),
            RequestBody::Track {
                id,
                task_id,
                applied,
                helpful,
                score,
                note,
            } => learning::track(
                &self.shared,
                &self.store,
                &id,
                Application {
                    task_id,
                    applied_at: crate::time::now(),
                    applied,
                    helpful,
                    effectiveness_score: score,
                    feedback: note,
                },
            ),
            RequestBody::SessionEnd {
                session_id,
                transcript_path,
            } => learning::session_end(&self.shared, &self.store, &session_id, transcript_path),
            RequestBody::Log { id, sort_by_score } => {
                learning::log(&self.shared, id, sort_by_score)
            }
            RequestBody::Export => learning::export(&self.shared),
            RequestBody::Evaluate { limit, force, skip } => {
                learning::evaluate(&self.shared, &self.store, &self.judge, limit, force, &skip)
            }
            RequestBody::Hook(call) => {
                self.shared
                    .hooks
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .note(call);
                Response::ok(Reply::Noted)
            }
        }
    }

    /// Answers a query; what it showed, for the recorder, goes with it.
    fn query(&self, query: Query) -> (Response, Option<Shown>) {
        let started = Instant::now();
        self.register_place(&query);
        let exclude = self.seen(&query);
        let answered = {
            let k = self.shared.read();
            let learned = self.shared.learned();
            k.engine.answer(&learned, &query, &exclude)
        };
        let Answered {
            answer,
            held_back,
            weak,
        } = match answered {
            Ok(answered) => answered,
            Err(err) => {
                return (
                    Response::error(ErrorKind::BadRequest, err.to_string()),
                    None,
                )
            }
        };
        let (first_of_session, shown) = self.record(&query, &answer, held_back, &weak);
        let answer = crate::protocol::Answer {
            first_of_session,
            ..answer
        };
        if let Some(session) = query.session_id.as_deref().filter(|s| !s.is_empty()) {
            let injection = super::injections::Injection {
                at: crate::time::now(),
                session: session.to_string(),
                query: query.clone(),
                answer: answer.clone(),
            };
            self.shared
                .injections
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(injection);
        }
        let micros = started.elapsed().as_secs_f64() * 1e6;
        self.shared
            .latencies
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .record(micros);
        (Response::ok(Reply::Answer(answer)), shown)
    }

    /// The items the query's session has already been shown.
    fn seen(&self, query: &Query) -> HashSet<String> {
        let Some(session) = query.session_id.as_deref() else {
            return HashSet::new();
        };
        let sessions = self.shared.sessions();
        sessions
            .get(session)
            .map(|a| a.shown.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Records what an answer showed: the session's audit (in memory now;
    /// durably by the recorder thread, which writes it as it then is), the
    /// tags each item was shown with, and the lessons shown on a `weak`
    /// match (a verdict on them counts only for showings like it). Returns
    /// whether the query was its session's first, and what the recorder is
    /// to be handed ([`Deferred`]): the lessons shown for the match-count
    /// auto-pin, a session's first query (which ticks its context's session
    /// clock, even when nothing is shown), and the lessons learned evidence
    /// held back from a session's prompt.
    fn record(
        &self,
        query: &Query,
        answer: &crate::protocol::Answer,
        held_back: Vec<String>,
        weak: &[String],
    ) -> (bool, Option<Shown>) {
        let session_id = query.session_id.as_deref().filter(|s| !s.is_empty());
        if answer.items.is_empty() && session_id.is_none() {
            return (false, None);
        }
        let held_back = if session_id.is_some() {
            held_back
        } else {
            Vec::new()
        };
        let tags: Vec<String> = query
            .tags
            .iter()
            .filter_map(|t| crate::learning::workspace_tag(t))
            .collect();
        let mut new_session = false;
        let session = session_id.map(|id| {
            let mut sessions = self.shared.sessions();
            new_session = !sessions.contains_key(id);
            let audit = sessions.entry(id.to_string()).or_default();
            let prompt =
                (!query.task.trim().is_empty()).then(|| crate::evaluate::prompt_mark(&query.task));
            for item in &answer.items {
                if !audit.shown.contains(&item.id) {
                    audit.shown.push(item.id.clone());
                    if let Some(mark) = prompt {
                        audit.shown_on.insert(item.id.clone(), mark);
                    }
                    if Match::among(weak, &item.id) == Match::Weak {
                        audit.weak.push(item.id.clone());
                    }
                }
            }
            for tag in &tags {
                if !audit.tags.contains(tag) {
                    audit.tags.push(tag.clone());
                }
            }
            if audit.repo.is_none() {
                audit.repo = query.repo.clone().or_else(|| query.cwd.clone());
            }
            if !answer.items.is_empty() || new_session {
                audit.processed = false;
                audit.updated_at = crate::time::now();
            }
            id.to_string()
        });
        if answer.items.is_empty() && !new_session && held_back.is_empty() {
            return (false, None);
        }
        {
            let mut last = self
                .shared
                .last_shown
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            for item in &answer.items {
                last.insert(
                    item.id.clone(),
                    LastShown {
                        tags: tags.clone(),
                        shown: Match::among(weak, &item.id),
                        place: query.place().map(str::to_string),
                    },
                );
            }
        }
        let lessons = answer
            .items
            .iter()
            .filter(|i| i.kind == crate::protocol::Kind::Lesson)
            .map(|i| i.id.clone())
            .collect();
        let shown = Shown {
            session,
            new_session,
            lessons,
            held_back,
            tags,
        };
        (new_session, Some(shown))
    }

    /// Registers the repository a query comes from, the first time a query
    /// names it, so its `.claude/memory` and `.memd` are loaded before the
    /// answer.
    pub(super) fn register_place(&self, query: &Query) {
        let Some(place) = query.place() else {
            return;
        };
        let repo = {
            let mut places = self.shared.places.lock().unwrap_or_else(|e| e.into_inner());
            match places.get(place) {
                // A project refused before is looked at again: its owner
                // may have fixed what was wrong.
                Some(Some(repo)) if self.shared.read().refused_projects.contains_key(repo) => {}
                Some(_) => return,
                None => {}
            }
            let repo = repository_of(Path::new(place));
            // A cache, not a record: emptied when full (resolving a place
            // again is a few `stat`s, and registering it again nothing).
            if places.len() >= PLACES_CAP {
                places.clear();
            }
            places.insert(place.to_string(), repo.clone());
            repo
        };
        let Some(repo) = repo else { return };
        // Another user's project, or one others may write to, is never
        // loaded: its text would reach this user's prompt.
        if let Some(why) = crate::knowledge::trust::distrust_project(&repo) {
            let mut k = self.shared.write();
            if k.refused_projects.get(&repo) != Some(&why) {
                tracing::warn!("not loading the project {}: {why}", repo.display());
                k.refused_projects.insert(repo, why);
            }
            return;
        }
        if self.shared.write().refused_projects.remove(&repo).is_some() {
            tracing::info!("the project {} is trusted now: loading it", repo.display());
        }
        let (tx, rx) = mpsc::channel();
        if self.indexer.send(Message::Register(repo, tx)).is_ok() {
            let _ = rx.recv_timeout(INDEXER_WAIT);
        }
    }

    fn status(&self) -> StatusReport {
        let info = &self.shared.info;
        let (hooks, hook_failures) = self
            .shared
            .hooks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .report();
        let k = self.shared.read();
        let counts = k.engine.counts();
        let roots = k
            .roots
            .iter()
            .map(|r| RootStatus {
                path: r.path.display().to_string(),
                scope: r
                    .project
                    .as_ref()
                    .map_or("global".to_string(), |p| p.display().to_string()),
                exists: r.path.is_dir(),
                watch: r.watch.name().to_string(),
            })
            .collect();
        let ignored_files = k
            .engine
            .files()
            .iter()
            .filter_map(|(path, state)| match &state.kind {
                FileKind::Ignored(why) => Some(format!("{}: {why}", path.display())),
                _ => None,
            })
            .collect();
        StatusReport {
            daemon_version: env!("CARGO_PKG_VERSION").to_string(),
            protocol_version: PROTOCOL_VERSION,
            pid: info.pid,
            uptime_secs: info.started.elapsed().as_secs_f64(),
            config: info.config.as_ref().map(|p| p.display().to_string()),
            data_dir: info.data_dir.display().to_string(),
            socket: info.socket.display().to_string(),
            roots,
            files: counts.files as u64,
            ignored_files,
            items: counts
                .items
                .iter()
                .map(|(kind, n)| (kind.as_str().to_string(), *n as u64))
                .collect(),
            errors: k
                .engine
                .diagnostics()
                .iter()
                .map(|d| d.to_string())
                .collect(),
            startup: k.startup.clone(),
            semantic: k
                .engine
                .semantic()
                .map(|s| format!("{} ({} dimensions)", s.model().name(), s.model().dims())),
            last_reindex: k.last.clone(),
            query_latency: self
                .shared
                .latencies
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .report(),
            pending_evaluations: learning::pending(&self.shared),
            sessions: self.shared.sessions().len() as u64,
            recorder: self.recorder.status(),
            hooks,
            hook_failures,
            refused_projects: k
                .refused_projects
                .iter()
                .map(|(repo, why)| format!("{}: {why}", repo.display()))
                .collect(),
            teams: super::team::status(&self.shared, &k.engine),
            judge: {
                let agreement = self.shared.learned().agreement();
                JudgeNoise {
                    pairs: agreement.pairs,
                    disagreeing: agreement.disagreeing,
                    error: agreement.judge_error(),
                    filter_line: agreement.filter_line(),
                    pairs_needed: crate::learning::noise::MIN_PAIRS,
                    near_coin: agreement.near_coin(),
                    pairs_across: agreement.pairs_across,
                    disagreeing_across: agreement.disagreeing_across,
                    relevance_differs: agreement.relevance_differs(),
                }
            },
        }
    }
}

fn not_found(id: &str) -> Response {
    Response::error(
        ErrorKind::NotFound,
        format!("no item `{id}` is visible here"),
    )
}

/// The repository containing `place`: the nearest ancestor with a `.git`
/// or a `.memd`.
pub fn repository_of(place: &Path) -> Option<PathBuf> {
    place
        .ancestors()
        .find(|dir| dir.join(".git").exists() || dir.join(".memd").exists())
        .filter(|dir| dir.parent().is_some())
        .map(Path::to_path_buf)
}
