//! `memctl`: the thin client of the memd daemon. It links only memd's
//! protocol types (no engine), connects to the socket, sends one postcard
//! frame and prints the answer, as text or `--json`.
//!
//! - [`client`], [`peer`]: the connection, and who answers on it.
//! - [`harness`]: the agents memd wires into (Claude Code, Codex CLI,
//!   Gemini CLI, OpenCode), one file each behind one trait.
//! - [`hook`], [`env_tags`], [`activity`]: what the agents' hooks run.
//! - [`mcp`]: `memctl mcp`, the agent's tools over MCP (the only command
//!   that starts an async runtime).
//! - [`install`](mod@install), [`doctor`](mod@doctor): setting the agents up
//!   (and taking memd out again), and checking it.
//! - [`print`](mod@print): replies as text.

/// `print!` that never panics: a closed or full stdout (the reader went
/// away) is not a reason for memctl, or a hook, to fail.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($arg)*);
    }};
}

/// `println!` that never panics (see [`out!`]).
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// `eprintln!` that never panics (see [`out!`]).
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod activity;
mod client;
mod doctor;
mod env_tags;
mod harness;
mod hook;
mod install;
mod mcp;
mod peer;
mod print;
mod team;

use std::path::PathBuf;
use std::process::ExitCode;

use lexopt::prelude::*;
use memd::protocol::{Outcome, Query, Reply, RequestBody};

use client::{Client, ClientError};

const USAGE: &str = "\
memctl: talk to the memd daemon

Usage:
  memctl ping                 is the daemon up?
  memctl status               version, paths, roots, files, items, errors, latencies
  memctl query [TASK...] [QUERY]
                              the block for a context (the words are the task
                              when --task is not given)
  memctl explain ID [QUERY]   why an item is or is not shown for a context
  memctl get ID               one item
  memctl search TEXT [--limit N]
  memctl reload               re-read every root now
  memctl feedback ID --relevant|--irrelevant [--tags A,B] [--note TEXT]
                              direct feedback (weight 2.0) for those tags, or
                              for the tags of the query that last showed it
                              (the note goes to memd's log with it)
  memctl pin ID [--tags A,B] / memctl unpin ID [--tags A,B]
                              pin an item by hand where a query has all those
                              tags (none: everywhere); unpin takes out its pins,
                              automatic or not, for exactly those tags
  memctl track ID [--applied] [--helpful|--not-helpful] [--score S]
               [--note TEXT] [--task-id ID]
                              record an application (effectiveness EMA)
  memctl session-end SESSION [--transcript PATH]
                              mark a session ready for evaluation
  memctl log [ID] [--sort score] [--mine|--team]
                              learned per-tag relevance (seed 001's format),
                              and the team's verdicts where a repository
                              shares them (--mine: only one's own learned
                              state; --team: only the team's)
  memctl team init [--name NAME]
                              share the verdicts made in this repository's
                              sessions with everyone who pulls it
                              (.memd/team.toml; each member's verdicts in
                              .memd/learned/<member>.jsonl)
  memctl ui [--no-open]       the local page: what was injected and why, what
                              was learned; feedback and retiring an item (prints
                              its address, with its token, and opens it where a
                              browser can be)
  memctl team compact         replace your own events in this repository's
                              .memd/learned/ by one snapshot of what they add
                              up to (a backup kept; nobody else's file touched)
  memctl export               all learned state as YAML
  memctl add KIND FIELDS [--tags A,B] [--personal]
                              add an item to the knowledge files: KIND is
                              lesson (--text), gotcha (--title --fix),
                              anti_pattern (--name --problem --instead) or
                              pattern (--name --problem --solution
                              [--when-to-use] [--code]); any of them
                              [--category C]. It goes to <repo>/.memd/ (the
                              repository of the working directory), or with
                              --personal to the first configured root; the
                              file is appended to, never rewritten
  memctl evaluate [--limit N] [--force SESSION]
                              judge finished sessions (progress on stderr)
  memctl install [--project DIR] [--dry-run] [--no-service] [--agent ROLE]
                              add memd's hooks to Claude Code's settings.json
                              (user, or the project's), Codex's hooks file,
                              Gemini CLI's settings and OpenCode (a plugin),
                              turn Codex's hooks on, and install the service
                              unit; idempotent, with backups of edited files
                              (--json: each step as JSON)
  memctl uninstall [--project DIR] [--dry-run] [--no-service]
                              take out exactly what install added (hooks, MCP
                              registrations, approvals; the service stopped
                              and its units removed), every other byte of the
                              agents' settings kept, edited files backed up
  memctl doctor               every link from hook to daemon checked, each
                              failure with its fix (exit 1 when one fails)
  memctl mcp                  a Model Context Protocol server on stdio for the
                              agent (tools: search, get, explain, feedback,
                              remember), in the working directory's context
  memctl hook claude|codex|gemini|opencode [EVENT] [--agent ROLE]
                              for agent hooks: reads the hook's JSON on stdin
                              (SessionStart, UserPromptSubmit, SessionEnd;
                              Codex's Stop; Gemini CLI's BeforeAgent; memd's
                              OpenCode plugin's chat.message, session.idle)
                              and prints the context to inject; always exits 0

Every command takes --json (print the daemon's answer as JSON) and
--socket PATH (default: $MEMD_SOCKET, else $XDG_RUNTIME_DIR/memd/memd.sock,
else on macOS $TMPDIR/memd.sock, else $TMPDIR/memd-$USER/memd.sock).
--config and --data-dir are accepted for command lines shared with memd.

Query options: --task TEXT, --agent ROLE, --product NAME, --repo NAME|PATH,
--cwd DIR (default: the current directory), --path FILE, --os NAME,
--mcp-server NAME, --tags A,B, --keywords A,B, --kinds A,B,
--mode conservative|aggressive, --budget CHARS, --session ID, --now RFC3339,
--prompt (as the prompt hook asks: only items the task is about, through the
decision to show).
";

fn main() -> ExitCode {
    // A hook never breaks the agent: bad flags, errors and panics alike end
    // in exit 0, with the reason on stderr.
    let hook = std::env::args().nth(1).as_deref() == Some("hook");
    match std::panic::catch_unwind(run) {
        Ok(Ok(code)) => code,
        Ok(Err(err)) => {
            errln!("memctl: {err}");
            if hook {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(2)
            }
        }
        Err(_) if hook => ExitCode::SUCCESS,
        Err(_) => ExitCode::from(101),
    }
}

/// Parsed command line.
struct Args {
    command: String,
    positional: Vec<String>,
    json: bool,
    socket: Option<PathBuf>,
    limit: u32,
    query: Query,
    relevant: Option<bool>,
    applied: bool,
    helpful: Option<bool>,
    score: Option<f64>,
    note: Option<String>,
    task_id: Option<String>,
    transcript: Option<String>,
    sort_by_score: bool,
    force: Option<String>,
    limit_given: bool,
    dry_run: bool,
    no_service: bool,
    project: Option<PathBuf>,
    /// `memctl add`'s item fields, by name.
    fields: Vec<(String, String)>,
    personal: bool,
    /// `memctl log`: only one's own learned state, or only the team's.
    mine: bool,
    team: bool,
    /// `memctl team init --name`.
    team_name: Option<String>,
    /// `memctl ui --no-open`.
    no_open: bool,
}

/// `memctl add`'s field options.
const FIELD_OPTIONS: [&str; 10] = [
    "text",
    "title",
    "fix",
    "name",
    "problem",
    "instead",
    "solution",
    "when-to-use",
    "code",
    "category",
];

fn parse() -> Result<Option<Args>, Box<dyn std::error::Error>> {
    let mut parser = lexopt::Parser::from_env();
    let mut args = Args {
        command: String::new(),
        positional: Vec::new(),
        json: false,
        socket: None,
        limit: 10,
        query: Query::default(),
        relevant: None,
        applied: false,
        helpful: None,
        score: None,
        note: None,
        task_id: None,
        transcript: None,
        sort_by_score: false,
        force: None,
        limit_given: false,
        dry_run: false,
        no_service: false,
        project: None,
        fields: Vec::new(),
        personal: false,
        mine: false,
        team: false,
        team_name: None,
        no_open: false,
    };
    let q = &mut args.query;
    while let Some(arg) = parser.next()? {
        match arg {
            Value(v) if args.command.is_empty() => args.command = v.string()?,
            Value(v) => args.positional.push(v.string()?),
            Long("json") => args.json = true,
            Long("socket") => args.socket = Some(parser.value()?.into()),
            Long("config") | Long("data-dir") => {
                parser.value()?;
            }
            Long("limit") => {
                args.limit = parser.value()?.parse()?;
                args.limit_given = true;
            }
            Long("force") => args.force = Some(parser.value()?.string()?),
            Long("dry-run") => args.dry_run = true,
            Long("no-service") => args.no_service = true,
            Long("project") => args.project = Some(parser.value()?.into()),
            Long("personal") => args.personal = true,
            Long("mine") => args.mine = true,
            Long("no-open") => args.no_open = true,
            Long("team") => args.team = true,
            Long("name") if args.command == "team" => {
                args.team_name = Some(parser.value()?.string()?)
            }
            Long(name) if FIELD_OPTIONS.contains(&name) => {
                let name = name.replace('-', "_");
                let value = parser.value()?.string()?;
                args.fields.push((name, value));
            }
            // As the prompt hook asks: only what the task is about, through
            // the decision to show.
            Long("prompt") => q.task_match = true,
            Long("relevant") => args.relevant = Some(true),
            Long("irrelevant") => args.relevant = Some(false),
            Long("applied") => args.applied = true,
            Long("helpful") => args.helpful = Some(true),
            Long("not-helpful") => args.helpful = Some(false),
            Long("score") => args.score = Some(parser.value()?.parse()?),
            Long("note") => args.note = Some(parser.value()?.string()?),
            Long("task-id") => args.task_id = Some(parser.value()?.string()?),
            Long("transcript") => args.transcript = Some(parser.value()?.string()?),
            Long("sort") => args.sort_by_score = parser.value()?.string()? == "score",
            Long(name) if Query::OPTIONS.contains(&name) => {
                let name = name.to_string();
                let value = parser.value()?.string()?;
                q.set_option(&name, &value)?;
            }
            Long("help") | Short('h') => return Ok(None),
            Long("version") | Short('V') => {
                outln!("memctl {}", env!("CARGO_PKG_VERSION"));
                std::process::exit(0);
            }
            other => return Err(other.unexpected().into()),
        }
    }
    if args.query.cwd.is_none() {
        args.query.cwd = std::env::current_dir()
            .ok()
            .map(|d| d.display().to_string());
    }
    Ok((!args.command.is_empty()).then_some(args))
}

/// The repository and environment tags the hook would derive from the
/// working directory, where the command line gave none, so `memctl query`
/// and `memctl explain` run in a repository answer as its hooks do.
fn as_the_hook_sees_it(mut query: Query) -> Query {
    let Some(cwd) = query.cwd.clone() else {
        return query;
    };
    let cwd = std::path::Path::new(&cwd);
    if query.repo.is_none() {
        query.repo = env_tags::repository_of(cwd).map(|r| r.display().to_string());
    }
    if query.tags.is_empty() {
        query.tags = env_tags::tags(cwd);
    }
    query
}

/// Opens `url` in the browser where there is one to open it in (a
/// desktop session, or `$BROWSER`); says nothing otherwise.
fn open_browser(url: &str) {
    let opener: Option<(String, Vec<String>)> = if let Ok(browser) = std::env::var("BROWSER") {
        Some((browser, vec![url.to_string()]))
    } else if cfg!(target_os = "macos") {
        Some(("open".into(), vec![url.to_string()]))
    } else if std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some()
    {
        Some(("xdg-open".into(), vec![url.to_string()]))
    } else {
        None
    };
    if let Some((program, args)) = opener {
        let _ = std::process::Command::new(program)
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
    }
}

/// Hook calls that found no daemon, shown by `status`.
const HOOK_CALLS_SHOWN: usize = 5;

fn run() -> Result<ExitCode, Box<dyn std::error::Error>> {
    let Some(args) = parse()? else {
        out!("{USAGE}");
        return Ok(ExitCode::SUCCESS);
    };
    let one = |what: &str| -> Result<String, Box<dyn std::error::Error>> {
        args.positional
            .first()
            .cloned()
            .ok_or_else(|| format!("`memctl {}` needs {what}", args.command).into())
    };
    if args.command == "hook" {
        let socket = memd::protocol::socket_path(args.socket.clone());
        let harness = args.positional.first().map(String::as_str).unwrap_or("");
        let event = args.positional.get(1).map(String::as_str);
        if let Some(output) = hook::run(harness, event, args.query.agent.clone(), &socket) {
            outln!("{output}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    if args.command == "install" || args.command == "uninstall" {
        return install(&args);
    }
    if args.command == "mcp" {
        if args.query.cwd.is_none() {
            return Err("`memctl mcp` needs a working directory".into());
        }
        let socket = memd::protocol::socket_path(args.socket.clone());
        mcp::serve(socket, as_the_hook_sees_it(args.query.clone()))?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.command == "doctor" {
        return doctor(&args);
    }
    if args.command == "team" && args.positional.first().map(String::as_str) != Some("compact") {
        if args.positional.first().map(String::as_str) != Some("init") {
            return Err("`memctl team` takes `init` or `compact`".into());
        }
        let cwd = PathBuf::from(args.query.cwd.clone().ok_or("no working directory")?);
        let path = team::init(&cwd, args.team_name.as_deref())?;
        outln!(
            "{} written: this repository's verdicts go to .memd/learned/ (commit it and them)",
            path.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    if args.command == "evaluate" && args.force.is_none() {
        return evaluate_all(&args);
    }
    let request = match args.command.as_str() {
        "ping" => RequestBody::Ping,
        "status" => RequestBody::Status,
        "query" => {
            let mut query = args.query.clone();
            if query.task.is_empty() {
                query.task = args.positional.join(" ");
            }
            RequestBody::Query(as_the_hook_sees_it(query))
        }
        "explain" => RequestBody::Explain {
            id: one("an item id")?,
            query: as_the_hook_sees_it(args.query.clone()),
        },
        "get" => RequestBody::Get {
            id: one("an item id")?,
            query: args.query.clone(),
        },
        "search" => RequestBody::Search {
            text: args.positional.join(" "),
            limit: args.limit,
            query: args.query.clone(),
        },
        "reload" => RequestBody::Reload,
        "ui" => RequestBody::Ui,
        "pin" | "unpin" => RequestBody::Pin {
            id: one("an item id")?,
            tags: args.query.tags.clone(),
            pinned: args.command == "pin",
        },
        "team" => RequestBody::TeamCompact {
            place: args.query.cwd.clone().ok_or("no working directory")?,
        },
        "feedback" => RequestBody::Feedback {
            id: one("an item id")?,
            relevant: args
                .relevant
                .ok_or("`memctl feedback` needs --relevant or --irrelevant")?,
            tags: args.query.tags.clone(),
            note: args.note.clone(),
        },
        "track" => RequestBody::Track {
            id: one("an item id")?,
            task_id: args.task_id.clone(),
            applied: args.applied || args.helpful.is_some() || args.score.is_some(),
            helpful: args.helpful,
            score: args.score,
            note: args.note.clone(),
        },
        "session-end" => RequestBody::SessionEnd {
            session_id: one("a session id")?,
            transcript_path: args.transcript.clone(),
        },
        "log" => RequestBody::Log {
            id: args.positional.first().cloned(),
            sort_by_score: args.sort_by_score,
        },
        "export" => RequestBody::Export,
        "add" => RequestBody::Add(memd::protocol::NewItem {
            kind: one("a kind (lesson, gotcha, anti_pattern, pattern)")?.parse()?,
            fields: args.fields.clone(),
            tags: args.query.tags.clone(),
            scope: if args.personal {
                memd::protocol::AddScope::Personal
            } else {
                memd::protocol::AddScope::Project
            },
            query: args.query.clone(),
        }),
        "evaluate" => RequestBody::Evaluate {
            limit: 1,
            force: args.force.clone(),
            skip: Vec::new(),
        },
        other => return Err(format!("unknown command `{other}`\n\n{USAGE}").into()),
    };
    let socket = memd::protocol::socket_path(args.socket.clone());
    let started = std::time::Instant::now();
    let response = match Client::connect(&socket).and_then(|mut c| c.request(request)) {
        Ok(response) => response,
        Err(ClientError::NotRunning(path)) => {
            errln!(
                "memctl: memd is not running (nothing listens on {}).\nStart it with `memd serve` (or `cargo run --release -- serve --config config/memd.toml` in a clone).",
                path.display()
            );
            if args.command == "status" {
                print::local_hook_failures(&activity::latest(HOOK_CALLS_SHOWN));
            }
            return Ok(ExitCode::from(1));
        }
        Err(err) => return Err(err.into()),
    };
    let elapsed = started.elapsed();
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&response.outcome)?);
        return Ok(match response.outcome {
            Outcome::Ok(_) => ExitCode::SUCCESS,
            Outcome::Error(_) => ExitCode::from(1),
        });
    }
    match response.outcome {
        Outcome::Ok(mut reply) => {
            if let Reply::Log(entries) = &mut reply {
                print::keep_log(entries, args.mine, args.team);
            }
            print::reply(&reply, elapsed);
            if let Reply::Ui { url } = &reply {
                if !args.no_open {
                    open_browser(url);
                }
            }
            if let Reply::Status(_) = &reply {
                print::local_hook_failures(&activity::latest(HOOK_CALLS_SHOWN));
            }
            if let Reply::Answer(a) = &reply {
                if a.block.is_empty() {
                    errln!("memctl: nothing relevant for this query");
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Outcome::Error(err) => {
            errln!("memctl: {:?}: {}", err.kind, err.message);
            Ok(ExitCode::from(1))
        }
    }
}

/// Evaluates pending sessions one request at a time, showing progress on
/// stderr when there are several; stops at `--limit`, when none is left,
/// or when a session fails a second time.
fn evaluate_all(args: &Args) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let socket = memd::protocol::socket_path(args.socket.clone());
    let mut client = match Client::connect(&socket) {
        Ok(client) => client,
        Err(ClientError::NotRunning(path)) => {
            errln!(
                "memctl: memd is not running (nothing listens on {}).",
                path.display()
            );
            return Ok(ExitCode::from(1));
        }
        Err(err) => return Err(err.into()),
    };
    let max = if args.limit_given {
        args.limit as usize
    } else {
        usize::MAX
    };
    // One session a request, for progress; each session once a run, so a
    // failing one is neither judged twice nor in the way of the others.
    let mut done: Vec<memd::protocol::SessionEvaluation> = Vec::new();
    let mut total = None;
    let mut pending = 0;
    while done.len() < max {
        let response = client.request(RequestBody::Evaluate {
            limit: 1,
            force: None,
            skip: done.iter().map(|s| s.session_id.clone()).collect(),
        })?;
        let report = match response.outcome {
            Outcome::Ok(Reply::Evaluated(report)) => report,
            Outcome::Ok(_) => return Err("unexpected reply".into()),
            Outcome::Error(err) => {
                errln!("memctl: {:?}: {}", err.kind, err.message);
                return Ok(ExitCode::from(1));
            }
        };
        pending = report.pending;
        let Some(session) = report.sessions.into_iter().next() else {
            break;
        };
        let total = *total.get_or_insert(pending as usize + 1);
        if total > 1 && !args.json {
            errln!("[{}/{total}] {}", done.len() + 1, session.session_id);
        }
        done.push(session);
    }
    let report = memd::protocol::EvaluateReport {
        sessions: done,
        pending,
    };
    if args.json {
        // The same `{"ok": ...}` shape as every other command.
        let outcome = Outcome::Ok(Reply::Evaluated(report.clone()));
        outln!("{}", serde_json::to_string_pretty(&outcome)?);
    } else {
        print::reply(&Reply::Evaluated(report.clone()), std::time::Duration::ZERO);
    }
    let any_problem = report.sessions.iter().any(|s| s.problem.is_some());
    Ok(if any_problem {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `memctl doctor`: exit 1 when a check failed.
fn doctor(args: &Args) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .ok_or("HOME is not set")?;
    let socket = memd::protocol::socket_path(args.socket.clone());
    let cwd = std::env::current_dir()?;
    let checks = doctor::run(&socket, &home, &cwd);
    if args.json {
        let checks: Vec<_> = checks.iter().map(doctor::Check::to_json).collect();
        outln!("{}", serde_json::to_string_pretty(&checks)?);
    } else {
        for check in &checks {
            outln!("{}", check.line());
        }
    }
    Ok(if checks.iter().any(|c| c.ok == Some(false)) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `memctl install`, or `memctl uninstall`.
fn install(args: &Args) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .ok_or("HOME is not set")?;
    let memctl = std::env::current_exe()?;
    let memd = memctl.with_file_name("memd");
    let codex_version = install::codex_version();
    let options = install::Options {
        home,
        project: args.project.clone(),
        dry_run: args.dry_run,
        service: !args.no_service && args.project.is_none(),
        agent: args.query.agent.clone(),
        memd: if memd.exists() {
            memd
        } else {
            PathBuf::from("memd")
        },
        memctl,
        socket: memd::protocol::socket_path(args.socket.clone()),
        hook_socket: args.socket.clone().or_else(|| {
            std::env::var_os(memd::protocol::ENV_SOCKET)
                .filter(|s| !s.is_empty())
                .map(PathBuf::from)
        }),
        codex_key: install::codex_key(codex_version),
    };
    let (steps, next) = if args.command == "uninstall" {
        (install::uninstall(&options)?, Vec::new())
    } else {
        let steps = install::install(&options)?;
        let next = install::next_steps(&options, &steps);
        (steps, next)
    };
    if args.json {
        let steps: Vec<_> = steps.iter().map(install::Step::to_json).collect();
        outln!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({"steps": steps, "next": next}))?
        );
    } else {
        for step in &steps {
            outln!("{step}");
        }
        if !next.is_empty() {
            outln!();
            outln!("Next:");
            for line in &next {
                outln!("- {line}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
