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
use crate::harness::{self, Action};

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
    let text = |key: &str| input.get(key).and_then(Value::as_str).map(str::to_string);
    let event = event
        .map(str::to_string)
        .or_else(|| text("hook_event_name"))?;
    if subagent(&input) {
        return None;
    }
    let session = text("session_id");
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
    let query = |task: String, kinds: Vec<Kind>| Query {
        task,
        agent: agent.clone(),
        repo: repo.clone(),
        cwd: cwd.clone(),
        tags: tags.clone(),
        kinds,
        session_id: session.clone(),
        budget_chars: memd::protocol::DEFAULT_BUDGET_CHARS
            .min(agent_harness.context_cap().saturating_sub(500)),
        ..Query::default()
    };
    let Some(action) = agent_harness.action(&event) else {
        errln!("memctl hook: nothing to do for event `{event}`");
        return None;
    };
    // A resumed session has the line from its start.
    let tools_line = action == Action::Start && text("source").as_deref() != Some("resume");
    let request = match action {
        Action::Start => {
            // What qualifies without a task (experience, pinned lessons,
            // patterns and gotchas on role, history and recency) comes
            // here, once; each prompt then needs a task match.
            let mut start = query(
                String::new(),
                vec![
                    Kind::Experience,
                    Kind::Lesson,
                    Kind::Pattern,
                    Kind::AntiPattern,
                    Kind::Gotcha,
                ],
            );
            // After a compaction the agent's context no longer holds what
            // memd injected: ask without the session, so what it was shown
            // is not held back (it is in the session's audit already).
            if text("source").as_deref() == Some("compact") {
                start.session_id = None;
            }
            if tools_line {
                start.budget_chars -= TOOLS_LINE.chars().count() as u32 + 2;
            }
            RequestBody::Query(start)
        }
        Action::Prompt => {
            let prompt = text("prompt").unwrap_or_default();
            if trivial(&prompt) {
                return None;
            }
            RequestBody::Query(Query {
                task_match: true,
                ..query(prompt, Vec::new())
            })
        }
        Action::TurnEnd | Action::End => RequestBody::SessionEnd {
            session_id: session?,
            transcript_path: text("transcript_path"),
        },
    };
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
    let (output, outcome) = match client.request(request) {
        Ok(response) => match response.outcome {
            Outcome::Ok(Reply::Answer(answer)) if !answer.block.is_empty() || tools_line => {
                let block = if tools_line {
                    with_tools_line(answer.block)
                } else {
                    answer.block
                };
                let chars = block.chars().count() as u64;
                (
                    Some(agent_harness.inject(&event, &block).to_string()),
                    HookOutcome::Injected { chars },
                )
            }
            Outcome::Ok(Reply::SessionEnded { .. }) => (None, HookOutcome::Recorded),
            Outcome::Ok(_) => (None, HookOutcome::NothingRelevant),
            Outcome::Error(err) => {
                errln!("memctl hook: memd answered {:?}: {}", err.kind, err.message);
                let message = format!("{:?}: {}", err.kind, err.message);
                (None, HookOutcome::Failed { message })
            }
        },
        Err(err) => {
            errln!("memctl hook: {err}; the agent goes on without memd");
            let call = call(HookOutcome::Failed {
                message: err.to_string(),
            });
            activity::note(&call);
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
