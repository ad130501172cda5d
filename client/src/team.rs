//! The team's side of memctl: `memctl team init` opts a repository in to
//! sharing its verdicts (`.memd/team.toml`, written through the safe write
//! path, never over an existing one), and what `memctl status` adds from
//! git: how many of one's own events are not committed yet.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use memd::safe_file;

/// The settings file a team shares, in the repository's `.memd/`.
const TEAM_FILE: &str = "team.toml";

/// A repository name as events record it: letters, digits, `.`, `_`, `-`.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 100
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// Opts the repository of `cwd` in; returns the file written.
pub fn init(cwd: &Path, name: Option<&str>) -> Result<PathBuf, String> {
    let repo = crate::env_tags::repository_of(cwd).ok_or_else(|| {
        format!(
            "{} is not inside a repository (no .git above it)",
            cwd.display()
        )
    })?;
    let name = match name {
        Some(n) => n.to_string(),
        None => repo
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
    };
    if !valid_name(&name) {
        return Err(format!(
            "`{name}` cannot name the repository in the team's files (letters, digits, `.`, `_`, `-`); give --name"
        ));
    }
    let memd = repo.join(".memd");
    safe_file::own_dir(&memd, 0o755, false).map_err(|e| e.to_string())?;
    let path = memd.join(TEAM_FILE);
    let text = format!(
        "# memd: verdicts on this repository's knowledge, made in its agents'\n\
         # sessions (the evaluator's and direct feedback), are shared with\n\
         # everyone who pulls it: one append-only file per member in\n\
         # .memd/learned/. Commit them with the rest; a merge never conflicts.\n\
         [team]\n\
         # The repository's name in the team's files, the same in every clone.\n\
         name = \"{name}\"\n\
         # A teammate's verdicts count this much of one's own (0 to 1).\n\
         teammate_weight = 0.5\n"
    );
    let how = safe_file::Replace::default();
    safe_file::update(&path, &how, |current| match current {
        Some(_) => Err(InitError(format!(
            "{} exists already: the repository shares its verdicts",
            path.display()
        ))),
        None => Ok(Some(text.clone().into_bytes())),
    })
    .map_err(|e| e.0)?;
    // `memctl team compact` keeps a backup beside one's file: not for git.
    let learned = memd.join("learned");
    safe_file::own_dir(&learned, 0o755, false).map_err(|e| e.to_string())?;
    let ignore = learned.join(".gitignore");
    safe_file::update(&ignore, &safe_file::Replace::default(), |current| {
        Ok::<_, InitError>(current.is_none().then(|| b"*.memd-backup-*\n".to_vec()))
    })
    .map_err(|e| e.0)?;
    Ok(path)
}

impl From<safe_file::SafeFileError> for InitError {
    fn from(e: safe_file::SafeFileError) -> Self {
        InitError(e.to_string())
    }
}

/// An error of [`init`]'s write, as text.
pub struct InitError(pub String);

/// Lines of `path` in the working tree that its last commit does not have
/// (all of them when it was never committed); `None` when git cannot say.
pub fn uncommitted_lines(repo: &Path, path: &Path) -> Option<u64> {
    let relative = path.strip_prefix(repo).ok()?;
    let now = std::fs::read(path).ok()?;
    let lines = |b: &[u8]| b.iter().filter(|&&c| c == b'\n').count() as u64;
    let committed = Command::new("git")
        .arg("-C")
        .arg(repo)
        .arg("show")
        .arg(format!("HEAD:{}", relative.display()))
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let before = if committed.status.success() {
        lines(&committed.stdout)
    } else {
        0
    };
    Some(lines(&now).saturating_sub(before))
}
