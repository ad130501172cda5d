//! `memctl install` and `memctl uninstall`: memd's hooks, MCP server and
//! approvals put into (or taken out of) each agent's user settings, as its
//! file in `crate::harness` says (or a repository's own Claude Code
//! settings, with `--project`), and the service unit for the platform.
//! Idempotent: a second run changes nothing. A file that is changed is
//! backed up first; `--dry-run` shows the changes and writes nothing.
//! Uninstall takes out exactly what install added: every other byte of the
//! user's files stays.
//!
//! - [`hooks`]: memd's hooks in an agent's JSON settings.
//! - [`json_doc`]: JSON settings edited as text, comments and layout kept.
//! - [`mcp_servers`]: `memctl mcp` as the agents register it.
//! - [`service`]: systemd units or the LaunchAgent.
//! - [`files`]: each file read and decided first, then written through
//!   memd's safe write path (`memd::safe_file`), backed up.

pub(crate) mod files;
pub(crate) mod hooks;
pub(crate) mod json_doc;
pub mod mcp_servers;
mod service;

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use files::Plan;

use crate::harness::{self, claude};

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

impl Options {
    /// Options for unit tests: a user's install with the default socket,
    /// nothing written.
    #[cfg(test)]
    pub fn for_tests() -> Options {
        Options {
            home: PathBuf::from("/home/me"),
            project: None,
            dry_run: true,
            service: false,
            agent: None,
            memctl: PathBuf::from("/usr/bin/memctl"),
            memd: PathBuf::from("/usr/bin/memd"),
            socket: PathBuf::from("/run/user/1000/memd/memd.sock"),
            hook_socket: None,
            codex_key: CODEX_KEY,
        }
    }
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
    /// Uninstall: memd is not in the file (or there is no file).
    NotThere,
    /// The agent is not on this machine: nothing of it was touched.
    NotFound,
    /// Uninstall: the file, which held only what memd put there, was
    /// removed (and backed up).
    Removed,
    /// `--dry-run`: it would be removed.
    WouldRemove,
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
            Outcome::NotThere => "not_there",
            Outcome::NotFound => "not_found",
            Outcome::Removed => "removed",
            Outcome::WouldRemove => "would_remove",
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
    pub(crate) fn new(target: impl Into<Target>, outcome: Outcome) -> Step {
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
pub(crate) struct Target(String);

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
            Outcome::NotThere => write!(f, "{target}: memd is not in it")?,
            Outcome::NotFound => write!(
                f,
                "{target}: not found on this machine, left out (install it, then run `memctl install` again)"
            )?,
            Outcome::Removed => write!(f, "{target}: removed")?,
            Outcome::WouldRemove => write!(f, "{target}: would remove")?,
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

/// `word` quoted for the shell hook commands run in.
pub fn shell_word(word: &str) -> String {
    hooks::shell_word(word)
}

/// The name of Codex's hooks feature since 0.169.
#[cfg(test)]
const CODEX_KEY: &str = "hooks";

/// The installed Codex's version, if Codex is installed.
pub fn codex_version() -> Option<(u32, u32, u32)> {
    harness::codex::config::installed_version()
}

/// The name of Codex's hooks feature for that version.
pub fn codex_key(version: Option<(u32, u32, u32)>) -> &'static str {
    harness::codex::config::key_for(version)
}

/// What to do next on this machine, after the install's steps: which
/// socket the hooks use, how memd gets started, and Codex's trust step,
/// which is the user's to take.
pub fn next_steps(options: &Options, steps: &[Step]) -> Vec<String> {
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
        for harness in harness::ALL {
            next.extend(harness.next_steps());
        }
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
        Some(repo) => plans.push(claude::install_project(repo, options)?),
        None => {
            for harness in harness::ALL {
                if harness.detected(&options.home) {
                    plans.extend(harness.install(options)?);
                } else {
                    plans.push(Plan::Done(Step::new(
                        harness.label().to_string(),
                        Outcome::NotFound,
                    )));
                }
            }
        }
    }
    if options.service {
        plans.extend(service::plan_units(options)?);
    }
    let mut done = carry_out(plans, options.dry_run)?;
    if options.service && !options.dry_run {
        done.extend(service::start(options, &done));
    }
    Ok(done)
}

/// Runs the whole uninstall: what install added taken out of every agent's
/// user settings (or the project's), and the service stopped and its units
/// removed. Every file is read and decided first, as for install.
pub fn uninstall(options: &Options) -> Result<Vec<Step>, String> {
    let mut plans = Vec::new();
    match &options.project {
        Some(repo) => plans.push(claude::uninstall_project(repo)?),
        None => {
            for harness in harness::ALL {
                plans.extend(harness.uninstall(options)?);
            }
        }
    }
    let mut done = Vec::new();
    if options.service {
        let units = service::plan_removal(options)?;
        // Stopped before its units go.
        if !options.dry_run && units.iter().any(|p| matches!(p, Plan::Remove(_))) {
            done.extend(service::stop(options));
        }
        plans.extend(units);
    }
    done.extend(carry_out(plans, options.dry_run)?);
    Ok(done)
}

/// Carries out the planned writes and removals in order.
fn carry_out(plans: Vec<Plan>, dry_run: bool) -> Result<Vec<Step>, String> {
    let mut done = Vec::new();
    for plan in plans {
        let step = match plan {
            Plan::Done(step) => Ok(step),
            Plan::Write(write) => files::apply(write, dry_run),
            Plan::Remove(read) => files::remove(read, dry_run),
        };
        match step {
            Ok(step) => done.push(step),
            Err(err) => return Err(written_before(err, &done)),
        }
    }
    Ok(done)
}

/// A write that failed part way, with what was written before it (each
/// with its backup), so the user knows where things stand.
fn written_before(err: String, done: &[Step]) -> String {
    let written: Vec<String> = done
        .iter()
        .filter(|s| matches!(s.outcome, Outcome::Written | Outcome::Removed))
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
