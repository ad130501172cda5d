//! The `memd` binary: `serve` (the daemon), `query` (one query, in
//! process) and `validate`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use lexopt::prelude::*;

use memd::config::{Config, Overrides};
use memd::engine::Engine;
use memd::knowledge::scan::knowledge_files;
use memd::knowledge::{load_file, FileKind};
use memd::protocol::{Mode, Query};

const USAGE: &str = "\
memd: relevant team knowledge for coding agents

Usage:
  memd serve [PATHS]          run the daemon (in the foreground) on its socket
  memd query [OPTIONS]        run one query in process and print the block
  memd validate PATH...       check knowledge files (or directories of them)

Query options:
  --task TEXT                 the task or prompt
  --agent ROLE                the agent's role, e.g. backend-engineer
  --product NAME              the product being worked on
  --repo NAME|PATH            the repository
  --cwd DIR                   the working directory
  --path FILE                 a file in play (repeatable)
  --os NAME                   the OS (default: this one)
  --mcp-server NAME           an available MCP server (repeatable)
  --tags A,B                  environment tags (repeatable)
  --keywords A,B              recent conversation keywords (repeatable)
  --kinds A,B                 only these kinds (pattern, anti_pattern, gotcha,
                              experience, lesson, learning, observation,
                              exemplar, seed)
  --mode conservative|aggressive
  --budget CHARS              block size cap (default 9000)
  --now RFC3339               score as of this instant
  --json                      print {\"block\", \"items\": [...]} as JSON

Paths (memd and memctl alike):
  --config FILE               config file (env MEMD_CONFIG)
  --data-dir DIR              data directory (env MEMD_DATA_DIR)
  --socket PATH               the daemon's socket (env MEMD_SOCKET)
  --root DIR                  add a knowledge root (repeatable)

Logs go to stderr; the level comes from RUST_LOG, else the config's
[daemon] log (default info).
";

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(err) => {
            eprintln!("memd: {}", report(&err));
            ExitCode::from(2)
        }
    }
}

/// The error and its causes on one line, each cause once: the library's
/// messages already name their immediate cause.
fn report(err: &anyhow::Error) -> String {
    let mut line = err.to_string();
    for cause in err.chain().skip(1) {
        let cause = cause.to_string();
        if !line.contains(&cause) {
            line.push_str(": ");
            line.push_str(&cause);
        }
    }
    line
}

fn run() -> Result<ExitCode> {
    let mut parser = lexopt::Parser::from_env();
    let command = match parser.next()? {
        Some(Value(cmd)) => cmd.string()?,
        Some(Long("help") | Short('h')) | None => {
            print!("{USAGE}");
            return Ok(ExitCode::SUCCESS);
        }
        Some(Long("version") | Short('V')) => {
            println!("memd {}", env!("CARGO_PKG_VERSION"));
            return Ok(ExitCode::SUCCESS);
        }
        Some(other) => return Err(other.unexpected().into()),
    };
    match command.as_str() {
        "serve" => serve(parser),
        "query" => query(parser),
        "validate" => validate(parser),
        other => bail!("unknown command `{other}`\n\n{USAGE}"),
    }
}

fn query(mut parser: lexopt::Parser) -> Result<ExitCode> {
    let mut paths = Overrides::default();
    let mut q = Query::default();
    let mut explicit_mode = None;
    let mut explicit_budget = None;
    let mut json = false;
    while let Some(arg) = parser.next()? {
        match arg {
            Long("config") => paths.config = Some(parser.value()?.into()),
            Long("data-dir") => paths.data_dir = Some(parser.value()?.into()),
            Long("root") => paths.roots.push(parser.value()?.into()),
            Long("mode") => {
                explicit_mode = Some(
                    parser
                        .value()?
                        .string()?
                        .parse::<Mode>()
                        .map_err(anyhow::Error::msg)?,
                )
            }
            Long("budget") => explicit_budget = Some(parser.value()?.parse::<u32>()?),
            Long(name) if Query::OPTIONS.contains(&name) => {
                let name = name.to_string();
                let value = parser.value()?.string()?;
                q.set_option(&name, &value).map_err(anyhow::Error::msg)?;
            }
            Long("json") => json = true,
            Long("help") | Short('h') => {
                print!("{USAGE}");
                return Ok(ExitCode::SUCCESS);
            }
            other => return Err(other.unexpected().into()),
        }
    }
    let config = Config::load(&paths)?;
    let mut engine = Engine::new(&config);
    engine.set_model(config.semantic_model()?);
    engine.load_roots(&config.roots);
    for d in engine.diagnostics() {
        eprintln!("memd: warning: {d}");
    }
    q.mode = explicit_mode.unwrap_or(config.query.mode);
    q.budget_chars = explicit_budget.unwrap_or(config.query.budget_chars);
    // Outside the daemon nothing was learned: the seeds' rules on the files.
    let answer = engine.query(&memd::learning::Learned::default(), &q)?;
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&answer).context("encoding the answer")?
        );
    } else if answer.block.is_empty() {
        eprintln!("memd: nothing relevant for this query");
    } else {
        println!("{}", answer.block);
    }
    Ok(ExitCode::SUCCESS)
}

fn serve(mut parser: lexopt::Parser) -> Result<ExitCode> {
    let mut paths = Overrides::default();
    let mut socket = None;
    while let Some(arg) = parser.next()? {
        match arg {
            Long("config") => paths.config = Some(parser.value()?.into()),
            Long("data-dir") => paths.data_dir = Some(parser.value()?.into()),
            Long("root") => paths.roots.push(parser.value()?.into()),
            Long("socket") => socket = Some(PathBuf::from(parser.value()?)),
            Long("help") | Short('h') => {
                print!("{USAGE}");
                return Ok(ExitCode::SUCCESS);
            }
            other => return Err(other.unexpected().into()),
        }
    }
    let config = Config::load(&paths)?;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(&config.daemon.log));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let socket = memd::protocol::socket_path(socket);
    memd::daemon::run(memd::daemon::ServeOptions { config, socket })?;
    Ok(ExitCode::SUCCESS)
}

fn validate(mut parser: lexopt::Parser) -> Result<ExitCode> {
    let mut targets: Vec<PathBuf> = Vec::new();
    while let Some(arg) = parser.next()? {
        match arg {
            Value(path) => targets.push(path.into()),
            Long("help") | Short('h') => {
                print!("{USAGE}");
                return Ok(ExitCode::SUCCESS);
            }
            other => return Err(other.unexpected().into()),
        }
    }
    if targets.is_empty() {
        bail!("validate needs at least one file or directory");
    }
    let mut engine = Engine::default();
    let mut missing = 0;
    for target in &targets {
        if target.is_dir() {
            for file in knowledge_files(target) {
                engine.apply(load_file(&file));
            }
        } else if target.exists() {
            engine.apply(load_file(target));
        } else {
            eprintln!("{}: no such file or directory", target.display());
            missing += 1;
        }
    }
    for (path, state) in engine.files() {
        if let FileKind::Ignored(why) = &state.kind {
            eprintln!("{}: ignored: {why}", path.display());
        }
    }
    let diagnostics = engine.diagnostics();
    for d in &diagnostics {
        println!("{d}");
    }
    let counts = engine.counts();
    let items: usize = counts.items.values().sum();
    let errors = diagnostics.len() + missing;
    eprintln!(
        "{} file(s), {items} item(s), {errors} error(s)",
        counts.files + counts.ignored
    );
    Ok(if errors == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
