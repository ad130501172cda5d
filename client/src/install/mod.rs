//! `memctl install`: memd's hooks into Claude Code's `settings.json` (user
//! or project) and Codex CLI's hooks file, Codex's hooks turned on, memd's
//! MCP server registered with both agents (user scope), and the service
//! unit for the platform. Idempotent: a second run changes nothing.
//! A file that is changed is backed up first; `--dry-run` shows the changes
//! and writes nothing.
//!
//! - [`hooks`]: merging the hooks into a harness's JSON settings.
//! - [`codex_config`]: Codex's hooks feature on in its `config.toml`.
//! - [`mcp_servers`]: `memctl mcp` registered with Claude Code and Codex.
//! - [`service`]: systemd units or the LaunchAgent.
//! - [`files`]: each file read and decided first, then written through
//!   memd's safe write path (`memd::safe_file`), backed up.

mod codex_config;
mod files;
mod hooks;
pub mod mcp_servers;
mod service;

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use files::{Place, Plan};

/// What to install.
pub struct Options {
    pub home: PathBuf,
    /// Project-level Claude Code settings in this repository, instead of
    /// the user's.
    pub project: Option<PathBuf>,
    pub dry_run: bool,
    pub service: bool,
    /// `--agent ROLE` passed to the hooks.
    pub agent: Option<String>,
    /// The `memctl` and `memd` the hooks and units should run.
    pub memctl: PathBuf,
    pub memd: PathBuf,
    /// The socket `memctl` talks to, which the LaunchAgent has launchd
    /// create.
    pub socket: PathBuf,
    /// The socket to write into the hook commands: the one given with
    /// `--socket` or `MEMD_SOCKET`; `None` for the default.
    pub hook_socket: Option<PathBuf>,
    /// The name of Codex's hooks feature for the installed Codex.
    pub codex_key: &'static str,
}

/// What became of one file or command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The file was written (and the old one backed up, if any).
    Written,
    /// The file already had this content.
    Unchanged,
    /// `--dry-run`: it would be written with the content shown.
    WouldWrite,
    /// memd's hooks are in the settings already.
    AlreadyThere,
    /// Codex's hooks are on (and memd's MCP server registered) already.
    HooksOn,
    /// memd's MCP server is registered already.
    Registered,
    /// The file is not one memd can safely edit; the detail says what to do.
    LeftAlone,
    /// The service-manager command ran.
    Ran,
    /// The service-manager command failed; the detail says why.
    CouldNotRun,
}

impl Outcome {
    /// The outcome's name in `--json` output.
    fn name(self) -> &'static str {
        match self {
            Outcome::Written => "written",
            Outcome::Unchanged => "unchanged",
            Outcome::WouldWrite => "would_write",
            Outcome::AlreadyThere => "already_there",
            Outcome::HooksOn => "hooks_on",
            Outcome::Registered => "registered",
            Outcome::LeftAlone => "left_alone",
            Outcome::Ran => "ran",
            Outcome::CouldNotRun => "could_not_run",
        }
    }
}

/// One step of the install: a file or a command, and what became of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The file, or the command line.
    pub target: String,
    pub outcome: Outcome,
    /// Why, or what to do, where there is something to say.
    pub detail: Option<String>,
    /// Where the old file was copied before it was replaced.
    pub backup: Option<PathBuf>,
    /// With `--dry-run`: what would be written.
    pub content: Option<String>,
}

impl Step {
    fn new(target: impl Into<Target>, outcome: Outcome) -> Step {
        Step {
            target: target.into().0,
            outcome,
            detail: None,
            backup: None,
            content: None,
        }
    }

    /// The step for `memctl install --json`.
    pub fn to_json(&self) -> Value {
        json!({
            "target": self.target,
            "outcome": self.outcome.name(),
            "detail": self.detail,
            "backup": self.backup,
            "content": self.content,
        })
    }
}

/// A step's target: a path or a command line.
struct Target(String);

impl From<&Path> for Target {
    fn from(path: &Path) -> Self {
        Target(path.display().to_string())
    }
}

impl From<&PathBuf> for Target {
    fn from(path: &PathBuf) -> Self {
        Target(path.display().to_string())
    }
}

impl From<String> for Target {
    fn from(line: String) -> Self {
        Target(line)
    }
}

impl fmt::Display for Step {
    /// One line (and, for a dry run, the content that would be written).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let target = &self.target;
        match self.outcome {
            Outcome::Written => write!(f, "{target}: written")?,
            Outcome::Unchanged => write!(f, "{target}: unchanged")?,
            Outcome::WouldWrite => write!(f, "{target}: would write")?,
            Outcome::AlreadyThere => write!(f, "{target}: memd's hooks are already there")?,
            Outcome::HooksOn => write!(
                f,
                "{target}: Codex hooks are on already, and memd's MCP server is registered"
            )?,
            Outcome::Registered => write!(f, "{target}: memd's MCP server is registered already")?,
            Outcome::LeftAlone => write!(f, "{target}: left as it is")?,
            Outcome::Ran => write!(f, "ran: {target}")?,
            Outcome::CouldNotRun => write!(f, "could not run `{target}`")?,
        }
        if let Some(detail) = &self.detail {
            write!(f, ": {detail}")?;
        }
        if let Some(backup) = &self.backup {
            write!(f, " (backup: {})", backup.display())?;
        }
        if let Some(content) = &self.content {
            write!(f, "\n{}", content.trim_end())?;
        }
        Ok(())
    }
}

/// The hook events memd is installed for in a harness.
pub fn hook_events(harness: &str) -> &'static [&'static str] {
    hooks::events(harness)
}

/// Whether a hook command is memd's for this harness and event.
pub fn is_memd_command(command: &str, harness: &str, event: &str) -> bool {
    hooks::is_memd_command(command, harness, event)
}

/// `word` quoted for the shell hook commands run in.
pub fn shell_word(word: &str) -> String {
    hooks::shell_word(word)
}

/// The name of Codex's hooks feature since 0.169.
pub const CODEX_KEY: &str = codex_config::KEY;

/// Whether Codex's config turns its hooks feature on or off, under either
/// name; `None` when it does not say.
pub fn codex_hooks_setting(config: &str) -> Option<bool> {
    codex_config::setting(config)
}

/// The installed Codex's version, if Codex is installed.
pub fn codex_version() -> Option<(u32, u32, u32)> {
    codex_config::installed_version()
}

/// The name of Codex's hooks feature for that version.
pub fn codex_key(version: Option<(u32, u32, u32)>) -> &'static str {
    codex_config::key_for(version)
}

/// What to do next on this machine, after the install's steps: which
/// socket the hooks use, how memd gets started, and Codex's trust step,
/// which is the user's to take.
pub fn next_steps(
    options: &Options,
    steps: &[Step],
    codex: Option<(u32, u32, u32)>,
) -> Vec<String> {
    let mut next = Vec::new();
    let socket = options.socket.display();
    next.push(match &options.hook_socket {
        Some(_) => format!(
            "The hooks talk to memd on {socket}: it is written into each hook command, so the agents need no MEMD_SOCKET."
        ),
        None => format!(
            "The hooks talk to memd on {socket}, the default path (install with --socket PATH or MEMD_SOCKET set to write another into the hooks)."
        ),
    });
    let serve = match &options.hook_socket {
        Some(s) => format!(
            "memd serve --socket {}",
            hooks::shell_word(&s.to_string_lossy())
        ),
        None => "memd serve".to_string(),
    };
    let service_failed = steps.iter().any(|s| s.outcome == Outcome::CouldNotRun);
    next.push(if options.service && !options.dry_run && !service_failed {
        "memd starts with the service on the first hook; `memctl status` shows it.".to_string()
    } else if options.service && service_failed {
        format!("The service could not be started (see above): start memd with `{serve}` meanwhile.")
    } else {
        format!("Start memd yourself, and keep it running: `{serve}` (or install without --no-service).")
    });
    if options.project.is_none() {
        let version = codex.map_or("Codex (not installed yet)".to_string(), |(a, b, c)| {
            format!("Codex {a}.{b}.{c}")
        });
        next.push(format!(
            "{version} runs memd's hooks only once you trust them, and skips them without a word until then: run `codex` once and choose \"Trust all and continue\" at \"Hooks need review\" (again after any install that changes a hook command); or pass --dangerously-bypass-hook-trust to `codex exec`. memd never trusts them for you."
        ));
    }
    next.push("Then check every link from hook to daemon: `memctl doctor`.".to_string());
    next
}

/// Runs the whole install; returns its steps in order. Every file is read
/// and decided first: when one cannot be (unreadable, not JSON or TOML, a
/// link memd does not follow), nothing at all is written.
pub fn install(options: &Options) -> Result<Vec<Step>, String> {
    let mut plans = Vec::new();
    match &options.project {
        Some(repo) => plans.push(hooks::install_hooks(
            &repo.join(".claude/settings.json"),
            options,
            "claude",
            Place::Project(repo),
        )?),
        None => {
            let home = &options.home;
            plans.push(hooks::install_hooks(
                &home.join(".claude/settings.json"),
                options,
                "claude",
                Place::User,
            )?);
            plans.push(hooks::install_hooks(
                &home.join(".codex/hooks.json"),
                options,
                "codex",
                Place::User,
            )?);
            plans.push(codex_config::configure_codex(
                &home.join(".codex/config.toml"),
                options.codex_key,
                &mcp_servers::Server::for_install(options),
            )?);
            plans.push(mcp_servers::register_claude(
                &home.join(".claude.json"),
                options,
            )?);
        }
    }
    if options.service {
        plans.extend(service::plan_units(options)?);
    }
    let mut done = Vec::new();
    for plan in plans {
        match plan {
            Plan::Done(step) => done.push(step),
            Plan::Write(write) => match files::apply(write, options.dry_run) {
                Ok(step) => done.push(step),
                Err(err) => return Err(written_before(err, &done)),
            },
        }
    }
    if options.service && !options.dry_run {
        done.extend(service::start(options, &done));
    }
    Ok(done)
}

/// A write that failed part way, with what was written before it (each
/// with its backup), so the user knows where things stand.
fn written_before(err: String, done: &[Step]) -> String {
    let written: Vec<String> = done
        .iter()
        .filter(|s| s.outcome == Outcome::Written)
        .map(Step::to_string)
        .collect();
    match written.is_empty() {
        true => format!("{err}; nothing was written"),
        false => format!("{err}; written before it: {}", written.join("; ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_read_as_lines_and_as_json() {
        let step = Step {
            backup: Some(PathBuf::from("/h/s.json.memd-backup-1")),
            ..Step::new(Path::new("/h/s.json"), Outcome::Written)
        };
        assert_eq!(
            step.to_string(),
            "/h/s.json: written (backup: /h/s.json.memd-backup-1)"
        );
        assert_eq!(step.to_json()["outcome"], "written");
        assert_eq!(step.to_json()["backup"], "/h/s.json.memd-backup-1");
        let failed = Step {
            detail: Some("no bus: run it yourself".into()),
            ..Step::new(
                "systemctl --user daemon-reload".to_string(),
                Outcome::CouldNotRun,
            )
        };
        assert_eq!(
            failed.to_string(),
            "could not run `systemctl --user daemon-reload`: no bus: run it yourself"
        );
    }
}
