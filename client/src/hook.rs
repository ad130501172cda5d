//! `memctl hook <harness> <event>`: reads the harness's hook JSON on stdin
//! and prints what it expects, or nothing. A hook never blocks or breaks the
//! agent: whatever goes wrong (no daemon, a slow daemon, bad input, an
//! error), it exits 0 within its budget and says why on stderr only.
//!
//! The agents send the same shape: `session_id`, `transcript_path` (may be
//! null), `cwd`, `hook_event_name`, plus `source` (a session's start),
//! `prompt` (a prompt) or `reason` (its end). What memd does on each event,
//! and the output that injects context, are the agent's
//! ([`crate::harness`]).
//!
//! A session start after a compaction (`source: "compact"`) injects the
//! experience and pinned lessons again, the compacted context having lost
//! them.

use std::io::Read;
use std::path::Path;
use std::time::Duration;

use memd::protocol::{HookCall, HookOutcome, Kind, Outcome, Query, Reply, RequestBody};
use serde_json::Value;

use crate::activity;
use crate::client::{Client, ClientError};
use crate::env_tags;
use crate::harness::{self, Action, Harness};

/// How long a hook waits for the daemon in all.
pub const HOOK_TIMEOUT: Duration = Duration::from_millis(1500);
/// The line SessionStart ends with (except on a resume, whose context has
/// it): the agent can ask memd itself, through `memctl mcp` (registered as
/// `memd` by `memctl install`).
pub const TOOLS_LINE: &str = "memd's MCP tools: `search` the team's knowledge when unsure, `feedback` on an item that helped or did not belong, `remember` what you learned the hard way.";
/// Stdin beyond this is not read.
const MAX_INPUT_BYTES: u64 = 1024 * 1024;

/// Prompts that carry no task.
const TRIVIAL: &[&str] = &[
    "yes",
    "y",
    "no",
    "n",
    "ok",
    "okay",
    "continue",
    "go on",
    "go ahead",
    "proceed",
    "thanks",
    "thank you",
    "done",
    "next",
    "sure",
    "lgtm",
    "retry",
    "again",
];

/// Whether a prompt is too short or too bare to search for.
pub fn trivial(prompt: &str) -> bool {
    let norm: String = prompt
        .trim()
        .trim_end_matches(['.', '!', '?'])
        .to_lowercase();
    norm.split_whitespace().count() < 3 || TRIVIAL.contains(&norm.as_str())
}

/// Whether the input comes from a subagent's session.
fn subagent(input: &Value) -> bool {
    let set = |key: &str| {
        input
            .get(key)
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty())
    };
    set("agent_id")
        || input
            .get("is_subagent")
            .and_then(Value::as_bool)
            .unwrap_or(false)
        || input
            .get("transcript_path")
            .and_then(Value::as_str)
            .is_some_and(|p| p.contains("/subagents/"))
}

/// Where the hook runs and for whom: what every query of it carries.
struct Place {
    session: Option<String>,
    agent: Option<String>,
    cwd: Option<String>,
    repo: Option<String>,
    tags: Vec<String>,
}

impl Place {
    /// Read from the hook input: its `cwd` (else the working directory),
    /// the repository holding it and its tags; the role from `--agent`,
    /// `MEMD_AGENT` or the input's `agent_type`.
    fn of(input: &Value, agent: Option<String>) -> Place {
        let text = |key: &str| input.get(key).and_then(Value::as_str).map(str::to_string);
        let cwd = text("cwd").or_else(|| {
            std::env::current_dir()
                .ok()
                .map(|d| d.display().to_string())
        });
        let agent = agent
            .or_else(|| std::env::var("MEMD_AGENT").ok().filter(|a| !a.is_empty()))
            .or_else(|| text("agent_type"));
        let repo = cwd
            .as_deref()
            .and_then(|c| env_tags::repository_of(Path::new(c)))
            .map(|r| r.display().to_string());
        let tags = cwd
            .as_deref()
            .map(|c| env_tags::tags(Path::new(c)))
            .unwrap_or_default();
        Place {
            session: text("session_id"),
            agent,
            cwd,
            repo,
            tags,
        }
    }

    /// A query from here.
    fn query(&self, task: String, kinds: Vec<Kind>) -> Query {
        Query {
            task,
            agent: self.agent.clone(),
            repo: self.repo.clone(),
            cwd: self.cwd.clone(),
            tags: self.tags.clone(),
            kinds,
            session_id: self.session.clone(),
            ..Query::default()
        }
    }

    /// A session's start: what qualifies without a task (experience,
    /// pinned lessons, patterns and gotchas on role, history and recency),
    /// once; each prompt then needs a task match.
    fn start(&self) -> Query {
        self.query(
            String::new(),
            vec![
                Kind::Experience,
                Kind::Lesson,
                Kind::Pattern,
                Kind::AntiPattern,
                Kind::Gotcha,
            ],
        )
    }
}

/// Whether a block ends with the line on memd's tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ToolsLine {
    No,
    Yes,
    /// When the query was the first memd heard of its session.
    IfFirst,
}

/// What a hook asks memd for.
enum Ask {
    /// Context to inject: the blocks of these queries, in order.
    Context(Vec<(Query, ToolsLine)>),
    /// The session recorded for evaluation: its id and transcript.
    Record(String, Option<String>),
}

/// What to ask memd on `action`, from the hook input; `None` when there is
/// nothing to ask.
fn ask(harness: &dyn Harness, action: Action, input: &Value, place: &Place) -> Option<Ask> {
    let text = |key: &str| input.get(key).and_then(Value::as_str).map(str::to_string);
    let source = text("source");
    Some(match action {
        Action::Start => {
            let mut start = place.start();
            // After a compaction the agent's context no longer holds what
            // memd injected: ask without the session, so what it was shown
            // is not held back (it is in the session's audit already).
            if source.as_deref() == Some("compact") {
                start.session_id = None;
            }
            // A resumed session has the line from its start.
            let line = match source.as_deref() {
                Some("resume") => ToolsLine::No,
                _ => ToolsLine::Yes,
            };
            Ask::Context(vec![(start, line)])
        }
        Action::Prompt => {
            let mut parts = Vec::new();
            // The session's start comes with its first prompt (on later
            // prompts it holds what the session has not been shown).
            if harness.start_with_first_prompt() {
                parts.push((place.start(), ToolsLine::IfFirst));
            }
            let prompt = text("prompt").unwrap_or_default();
            if !trivial(&prompt) {
                let query = Query {
                    task_match: true,
                    ..place.query(prompt, Vec::new())
                };
                parts.push((query, ToolsLine::No));
            }
            if parts.is_empty() {
                return None;
            }
            Ask::Context(parts)
        }
        Action::TurnEnd | Action::End => {
            Ask::Record(place.session.clone()?, text("transcript_path"))
        }
    })
}

/// What went wrong talking to memd.
enum Failure {
    /// The connection failed: the call can only be noted locally.
    Transport(ClientError),
    /// memd answered with an error.
    Answered(String),
}

/// One request's answer.
fn request(client: &mut Client, body: RequestBody) -> Result<Reply, Failure> {
    let response = client.request(body).map_err(Failure::Transport)?;
    match response.outcome {
        Outcome::Ok(reply) => Ok(reply),
        Outcome::Error(err) => {
            errln!("memctl hook: memd answered {:?}: {}", err.kind, err.message);
            Err(Failure::Answered(format!(
                "{:?}: {}",
                err.kind, err.message
            )))
        }
    }
}

/// The context to inject: each query's block in order, within the agent's
/// cap (a query that shares the cap with one after it gets half of it at
/// most, and room is kept for the tools line where it may come).
fn context(
    client: &mut Client,
    harness: &dyn Harness,
    parts: Vec<(Query, ToolsLine)>,
) -> Result<Option<String>, Failure> {
    let line_chars = TOOLS_LINE.chars().count() as u32 + 2;
    let mut room =
        memd::protocol::DEFAULT_BUDGET_CHARS.min(harness.context_cap().saturating_sub(500));
    let count = parts.len();
    let mut blocks = Vec::new();
    for (i, (query, line)) in parts.into_iter().enumerate() {
        let share = if i + 1 < count { room / 2 } else { room };
        let reserve = if line == ToolsLine::No { 0 } else { line_chars };
        let query = Query {
            budget_chars: share.saturating_sub(reserve),
            ..query
        };
        let Reply::Answer(answer) = request(client, RequestBody::Query(query))? else {
            continue;
        };
        let with_line = match line {
            ToolsLine::Yes => true,
            ToolsLine::IfFirst => answer.first_of_session,
            ToolsLine::No => false,
        };
        let block = if with_line {
            with_tools_line(answer.block)
        } else {
            answer.block
        };
        room = room.saturating_sub(block.chars().count() as u32);
        if !block.trim().is_empty() {
            blocks.push(block);
        }
    }
    Ok(match blocks.len() {
        0 => None,
        1 => blocks.pop(),
        _ => Some(
            blocks
                .iter()
                .map(|b| b.trim_end())
                .collect::<Vec<_>>()
                .join("\n\n"),
        ),
    })
}

/// Runs a hook; returns what to print (nothing is a fine answer).
pub fn run(
    harness: &str,
    event: Option<&str>,
    agent: Option<String>,
    socket: &Path,
) -> Option<String> {
    let Some(agent_harness) = harness::named(harness) else {
        errln!(
            "memctl hook: unknown harness `{harness}` ({})",
            harness::names()
        );
        return None;
    };
    let mut raw = String::new();
    if let Err(err) = std::io::stdin()
        .take(MAX_INPUT_BYTES)
        .read_to_string(&mut raw)
    {
        errln!("memctl hook: cannot read the hook input: {err}");
        return None;
    }
    let input: Value = match serde_json::from_str(&raw) {
        Ok(v) => v,
        Err(err) => {
            errln!("memctl hook: the hook input is not JSON: {err}");
            return None;
        }
    };
    let event = event.map(str::to_string).or_else(|| {
        input
            .get("hook_event_name")
            .and_then(Value::as_str)
            .map(str::to_string)
    })?;
    if subagent(&input) {
        return None;
    }
    let Some(action) = agent_harness.action(&event) else {
        errln!("memctl hook: nothing to do for event `{event}`");
        return None;
    };
    let place = Place::of(&input, agent);
    let ask = ask(agent_harness, action, &input, &place)?;
    let call = |outcome| HookCall {
        harness: harness.to_string(),
        event: event.clone(),
        at: activity::now(),
        outcome,
    };
    let mut client = match Client::connect_with_timeout(socket, HOOK_TIMEOUT) {
        Ok(client) => client,
        Err(err) => {
            errln!("memctl hook: {err}; the agent goes on without memd");
            let outcome = match err {
                ClientError::NotRunning(_) => HookOutcome::Unreachable {
                    message: err.to_string(),
                },
                _ => HookOutcome::Failed {
                    message: err.to_string(),
                },
            };
            activity::note(&call(outcome));
            return None;
        }
    };
    let answered = match ask {
        Ask::Context(parts) => {
            context(&mut client, agent_harness, parts).map(|block| match block {
                Some(block) => {
                    let chars = block.chars().count() as u64;
                    let output = agent_harness.inject(&event, &block).to_string();
                    (Some(output), HookOutcome::Injected { chars })
                }
                None => (None, HookOutcome::NothingRelevant),
            })
        }
        Ask::Record(session_id, transcript_path) => {
            let body = RequestBody::SessionEnd {
                session_id,
                transcript_path,
            };
            request(&mut client, body).map(|reply| match reply {
                Reply::SessionEnded { .. } => (None, HookOutcome::Recorded),
                _ => (None, HookOutcome::NothingRelevant),
            })
        }
    };
    let (output, outcome) = match answered {
        Ok(done) => done,
        Err(Failure::Answered(message)) => (None, HookOutcome::Failed { message }),
        Err(Failure::Transport(err)) => {
            errln!("memctl hook: {err}; the agent goes on without memd");
            activity::note(&call(HookOutcome::Failed {
                message: err.to_string(),
            }));
            return None;
        }
    };
    // The daemon keeps the call for `memctl status`; where it cannot be
    // told, the local file does.
    let call = call(outcome);
    let noted = client.request(RequestBody::Hook(call.clone()));
    if !matches!(noted, Ok(ref r) if matches!(r.outcome, Outcome::Ok(_))) {
        activity::note(&call);
    }
    output
}

/// SessionStart's block, ending with the line on memd's tools (the query's
/// budget left room for it).
fn with_tools_line(block: String) -> String {
    if block.is_empty() {
        TOOLS_LINE.to_string()
    } else {
        format!("{}\n\n{TOOLS_LINE}", block.trim_end())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn session_start_ends_with_the_tools_line() {
        assert_eq!(with_tools_line(String::new()), TOOLS_LINE);
        assert_eq!(
            with_tools_line("## Lessons\n- one\n".into()),
            format!("## Lessons\n- one\n\n{TOOLS_LINE}")
        );
    }

    #[test]
    fn trivial_prompts_are_recognised() {
        for p in ["yes", "Continue.", "ok!", "go on", "fix it", "thank you"] {
            assert!(trivial(p), "{p}");
        }
        assert!(!trivial("implement webhook idempotency please"));
    }

    #[test]
    fn subagent_sessions_are_recognised() {
        assert!(subagent(&json!({"agent_id": "a-1"})));
        assert!(subagent(
            &json!({"transcript_path": "/p/sess/subagents/agent-1.jsonl"})
        ));
        assert!(!subagent(
            &json!({"session_id": "s", "transcript_path": "/p/s.jsonl"})
        ));
    }
}
