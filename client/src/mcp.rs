//! `memctl mcp`: a Model Context Protocol server over stdio (rmcp, the
//! official SDK) through which the agent itself searches memd, reads and
//! explains an item, rates one (seed 001's direct feedback, weight 2.0)
//! and remembers something new (the daemon's safe write path). Thin like
//! the rest of memctl: each tool is one request on the daemon's socket,
//! answered in the context of the working directory the server was started
//! in (its repository, tags and project scope, as the hooks derive them).

use std::path::{Path, PathBuf};
use std::time::Duration;

use memd::protocol::{AddScope, Kind, NewItem, Outcome, Query, Reply, RequestBody};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{schemars, tool, tool_handler, tool_router, ServerHandler, ServiceExt};
use serde::Deserialize;

use crate::client::{Client, ClientError};
use crate::print;

/// How long a tool waits for the daemon: a daemon that hangs gives a tool
/// error, never a stuck agent.
const DAEMON_TIMEOUT: Duration = Duration::from_secs(10);

/// How an error from a daemon that did not answer starts.
const NO_ANSWER: &str = "memd did not answer";
/// Search results when the call asks for none.
const DEFAULT_LIMIT: u32 = 8;
/// The most a search returns, whatever the call asks.
const MAX_LIMIT: u32 = 50;

/// Runs the server on stdin and stdout until the client closes them;
/// every call is made in `context` (the working directory, its repository
/// and tags).
pub fn serve(socket: PathBuf, context: Query) -> Result<(), Box<dyn std::error::Error>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let server = Memd::new(socket, context)
            .serve(rmcp::transport::io::stdio())
            .await?;
        server.waiting().await?;
        Ok(())
    })
}

/// The server: where the daemon is, and the context every call is in.
#[derive(Clone)]
struct Memd {
    socket: PathBuf,
    context: Query,
    tool_router: ToolRouter<Self>,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct SearchArgs {
    /// What to look for, in plain words.
    text: String,
    /// Only these kinds (pattern, anti_pattern, gotcha, lesson, learning,
    /// observation, exemplar, seed, experience).
    #[serde(default)]
    kinds: Vec<String>,
    /// At most this many items (default 8, at most 50).
    limit: Option<u32>,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct IdArgs {
    /// The item's id, as `search` gives it.
    id: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct ExplainArgs {
    /// The item's id.
    id: String,
    /// The task to explain it against (default: none, as at session start).
    task: Option<String>,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct FeedbackArgs {
    /// The item's id.
    id: String,
    /// Whether it was relevant to the work here.
    relevant: bool,
    /// Why, in a few words (kept in memd's log with the verdict).
    note: Option<String>,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct RememberArgs {
    /// lesson, gotcha, anti_pattern or pattern.
    kind: String,
    /// lesson: the lesson itself (required).
    text: Option<String>,
    /// gotcha: a one-line title (required).
    title: Option<String>,
    /// gotcha: how to fix or avoid it (required).
    fix: Option<String>,
    /// anti_pattern, pattern: a short name (required).
    name: Option<String>,
    /// anti_pattern, pattern: the problem (required).
    problem: Option<String>,
    /// anti_pattern: what to do instead (required).
    instead: Option<String>,
    /// pattern: the solution (required).
    solution: Option<String>,
    /// pattern: when to use it.
    when_to_use: Option<String>,
    /// pattern: a code example.
    code: Option<String>,
    /// Any kind: its technical area (e.g. database, ci, auth).
    category: Option<String>,
    /// Any kind: free tags.
    #[serde(default)]
    tags: Vec<String>,
    /// project (default: this repository only) or personal (everywhere).
    scope: Option<String>,
}

#[tool_router]
impl Memd {
    fn new(socket: PathBuf, context: Query) -> Self {
        Memd {
            socket,
            context,
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        annotations(read_only_hint = true, open_world_hint = false),
        description = "Search the team's knowledge (lessons, gotchas, patterns, anti-patterns, learnings, observations) for what is relevant to a question or task. Returns items best first: id, kind, a one-line summary and where it is written."
    )]
    async fn search(&self, Parameters(args): Parameters<SearchArgs>) -> CallToolResult {
        let kinds: Vec<Kind> = match args.kinds.iter().map(|k| k.parse()).collect() {
            Ok(kinds) => kinds,
            Err(err) => return failure(err),
        };
        let limit = args.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
        // Ask for more when filtering by kind, so the filter leaves enough.
        let asked = if kinds.is_empty() { limit } else { limit * 4 };
        let request = RequestBody::Search {
            text: args.text,
            limit: asked,
            query: self.context.clone(),
        };
        match self.ask(request).await {
            Ok(Reply::Hits(hits)) => {
                let lines: Vec<String> = hits
                    .iter()
                    .filter(|h| kinds.is_empty() || kinds.contains(&h.kind))
                    .take(limit as usize)
                    .map(print::hit_line)
                    .collect();
                if lines.is_empty() {
                    success("Nothing in memd matches that.".to_string())
                } else {
                    success(lines.join("\n"))
                }
            }
            other => unexpected(other),
        }
    }

    #[tool(
        annotations(read_only_hint = true, open_world_hint = false),
        description = "One knowledge item in full, by id."
    )]
    async fn get(&self, Parameters(args): Parameters<IdArgs>) -> CallToolResult {
        let request = RequestBody::Get {
            id: args.id,
            query: self.context.clone(),
        };
        match self.ask(request).await {
            Ok(Reply::Item(item)) => success(print::item_text(&item)),
            other => unexpected(other),
        }
    }

    #[tool(
        annotations(read_only_hint = true, open_world_hint = false),
        description = "Why an item is or is not put into the prompt here (its scores and the rules that decided), optionally for a given task."
    )]
    async fn explain(&self, Parameters(args): Parameters<ExplainArgs>) -> CallToolResult {
        let query = Query {
            task: args.task.unwrap_or_default(),
            ..self.context.clone()
        };
        match self.ask(RequestBody::Explain { id: args.id, query }).await {
            Ok(Reply::Explanation(e)) => success(print::explanation(&e)),
            other => unexpected(other),
        }
    }

    #[tool(
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = false
        ),
        description = "Tell memd whether an item it showed (or you found) was relevant to the work here, so it learns where the item helps. Use it when an item clearly helped, or clearly did not belong."
    )]
    async fn feedback(&self, Parameters(args): Parameters<FeedbackArgs>) -> CallToolResult {
        let request = RequestBody::Feedback {
            id: args.id,
            relevant: args.relevant,
            tags: self.context.tags.clone(),
            note: args.note,
        };
        match self.ask(request).await {
            Ok(Reply::Judged(entry)) => success(format!("Recorded.\n{}", print::log_entry(&entry))),
            other => unexpected(other),
        }
    }

    #[tool(
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        ),
        description = "Remember something worth knowing next time: a lesson (text), a gotcha (title, fix), an anti_pattern (name, problem, instead) or a pattern (name, problem, solution). It is added to the project's knowledge (scope project, the default) or the user's (scope personal) and found by later sessions."
    )]
    async fn remember(&self, Parameters(args): Parameters<RememberArgs>) -> CallToolResult {
        let kind: Kind = match args.kind.parse() {
            Ok(kind) => kind,
            Err(err) => return failure(err),
        };
        let scope = match args.scope.as_deref().map(str::trim) {
            None | Some("") | Some("project") => AddScope::Project,
            Some("personal") => AddScope::Personal,
            Some(other) => return failure(format!("scope is project or personal, not `{other}`")),
        };
        let fields: Vec<(String, String)> = [
            ("text", args.text),
            ("title", args.title),
            ("fix", args.fix),
            ("name", args.name),
            ("problem", args.problem),
            ("instead", args.instead),
            ("solution", args.solution),
            ("when_to_use", args.when_to_use),
            ("code", args.code),
            ("category", args.category),
        ]
        .into_iter()
        .filter_map(|(name, value)| value.map(|v| (name.to_string(), v)))
        .collect();
        let request = RequestBody::Add(NewItem {
            kind,
            fields,
            tags: args.tags,
            scope,
            query: self.context.clone(),
        });
        match self.ask(request).await {
            Ok(Reply::Added { id, file }) => success(format!("Remembered as {id} in {file}.")),
            // The daemon may still write it once it catches up; remembering
            // the same again then lands once (the daemon finds it there).
            Err(err) if err.starts_with(NO_ANSWER) => failure(format!(
                "{err}. It may still be written once memd catches up: remembering exactly the same again is safe (it is added once)"
            )),
            other => unexpected(other),
        }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Memd {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("memd", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "memd holds the team's knowledge for this work. Search it before guessing; rate what it showed you; remember what you learned the hard way.",
            )
    }
}

impl Memd {
    /// One request on the daemon's socket (off the runtime's thread, so the
    /// server keeps reading its input), its error as text for a tool error.
    async fn ask(&self, request: RequestBody) -> Result<Reply, String> {
        let socket = self.socket.clone();
        let response = tokio::task::spawn_blocking(move || {
            Client::connect_with_timeout(&socket, DAEMON_TIMEOUT)
                .and_then(|mut c| c.request(request))
        })
        .await
        .map_err(|err| format!("the request to memd failed: {err}"))?
        .map_err(|err| match err {
            ClientError::NotRunning(path) => not_running(&path),
            other => format!("{NO_ANSWER}: {other}"),
        })?;
        match response.outcome {
            Outcome::Ok(reply) => Ok(reply),
            Outcome::Error(e) => Err(e.message),
        }
    }
}

fn not_running(path: &Path) -> String {
    format!(
        "memd is not running (nothing listens on {}); start it with `memd serve`",
        path.display()
    )
}

fn success(text: String) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text)])
}

fn failure(text: impl std::fmt::Display) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text.to_string())])
}

fn unexpected(reply: Result<Reply, String>) -> CallToolResult {
    match reply {
        Err(message) => failure(message),
        Ok(other) => failure(format!("memd answered something else: {other:?}")),
    }
}
