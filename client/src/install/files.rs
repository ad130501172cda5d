//! The user's files as the install reads and writes them, through memd's
//! one safe write path ([`memd::safe_file`]): each file is read without
//! following a link it did not expect and decided on first ([`Plan`]);
//! only when every file of the install could be read and decided is
//! anything written ([`apply`]), each one backed up, replaced atomically
//! with its mode kept, and only if it is still what was read. With
//! `--dry-run`, nothing is written.

use std::path::{Path, PathBuf};

use memd::safe_file::{self, Current, Replace};

use super::json_doc::{self, Dialect, Doc};
use super::{Outcome, Step};

/// Where a file lies, which decides what links are allowed on the way.
#[derive(Debug, Clone, Copy)]
pub enum Place<'a> {
    /// The user's own configuration: a link at the file's end (a dotfiles
    /// repository's, linked in by stow) is followed to the user's file it
    /// leads to.
    User,
    /// Inside this repository, which may have been cloned from anyone: no
    /// link on the way may lead out of it.
    Project(&'a Path),
}

/// A file read for the install: where it really is and what it holds.
pub struct Read {
    /// The file as named (what the user is told).
    pub named: PathBuf,
    /// The file to read and replace: `named`, or where the user's own link
    /// leads.
    pub real: PathBuf,
    pub current: Option<Current>,
}

impl Read {
    /// The file's text: `""` when absent; an error naming it when it is not
    /// UTF-8.
    pub fn text(&self) -> Result<&str, String> {
        match &self.current {
            None => Ok(""),
            Some(current) => std::str::from_utf8(&current.bytes)
                .map_err(|e| format!("{}: not UTF-8 ({e}); left as it is", self.named.display())),
        }
    }
}

/// Reads `path` for the install. Any reason it cannot be read (another
/// user's, unreadable, not a regular file, a link memd does not follow, a
/// link out of the repository) is an error that names it: the file is then
/// neither treated as empty nor written.
pub fn read(path: &Path, place: Place<'_>) -> Result<Read, String> {
    let fail = |e: safe_file::SafeFileError| e.to_string();
    if let Place::Project(repo) = place {
        safe_file::confine(repo, path).map_err(fail)?;
    }
    let real = safe_file::resolve(path).map_err(fail)?;
    if let Place::Project(repo) = place {
        safe_file::confine(repo, &real).map_err(fail)?;
    }
    let current = safe_file::read(&real).map_err(fail)?;
    Ok(Read {
        named: path.to_path_buf(),
        real,
        current,
    })
}

/// A JSON settings file and its document (an empty object when absent or
/// blank); one the agent could not read either is an error, and left as
/// it is.
pub fn read_doc(path: &Path, place: Place<'_>, dialect: Dialect) -> Result<(Read, Doc), String> {
    let read = read(path, place)?;
    let doc = Doc::parse(read.text()?, dialect)
        .map_err(|e| format!("{}: {e}; left as it is", path.display()))?;
    Ok((read, doc))
}

/// The edited document for the file it was read from: written with the
/// mode for its place; a document memd's removals left empty (`{}`), which
/// only memd made, is removed.
pub fn plan_doc(read: Read, doc: &Doc, place: Place<'_>, dialect: Dialect) -> Result<Plan, String> {
    let text = doc.text();
    if text.trim() == json_doc::EMPTY.trim() && read.current.is_some() {
        return plan_removal(read);
    }
    let mode = match place {
        Place::User => PRIVATE,
        Place::Project(_) => SHARED,
    };
    plan(read, text, mode, dialect.reads())
}

/// Whether `bytes` read back as TOML.
pub fn is_toml(bytes: &[u8]) -> Result<(), String> {
    let text = std::str::from_utf8(bytes).map_err(|e| e.to_string())?;
    text.parse::<toml::Table>()
        .map(drop)
        .map_err(|e| format!("not TOML: {e}"))
}

/// What the install will do with one file or command, decided before
/// anything is written.
pub enum Plan {
    /// Nothing to write: the step as it is.
    Done(Step),
    /// A file to write.
    Write(Write),
    /// A file memd made to take away again (backed up first), if it is
    /// still what was read.
    Remove(Read),
}

/// A file to be written with `content`, if it is still what was read.
pub struct Write {
    pub read: Read,
    pub content: String,
    /// The mode of the file where there was none.
    pub new_mode: u32,
    /// What the content must read back as.
    pub check: fn(&[u8]) -> Result<(), String>,
    /// Said beside the step (part of it left to the user).
    pub detail: Option<String>,
}

/// `content` for the file `read`, unless it holds that already; an error
/// when the file could not be written (read-only, or in a directory this
/// user cannot write to), so that nothing is written.
pub fn plan(
    read: Read,
    content: String,
    new_mode: u32,
    check: fn(&[u8]) -> Result<(), String>,
) -> Result<Plan, String> {
    if read.current.as_ref().map(|c| c.bytes.as_slice()) == Some(content.as_bytes()) {
        return Ok(Plan::Done(Step::new(&read.named, Outcome::Unchanged)));
    }
    safe_file::check_writable(&read.real, read.current.as_ref()).map_err(|e| e.to_string())?;
    Ok(Plan::Write(Write {
        read,
        content,
        new_mode,
        check,
        detail: None,
    }))
}

/// The file `read` to remove, if there is one; an error when it could not
/// be (in a directory this user cannot write to).
pub fn plan_removal(read: Read) -> Result<Plan, String> {
    let Some(current) = read.current.as_ref() else {
        return Ok(Plan::Done(Step::new(&read.named, Outcome::NotThere)));
    };
    safe_file::check_writable(&read.real, Some(current)).map_err(|e| e.to_string())?;
    Ok(Plan::Remove(read))
}

/// A file the install owns whole (a service unit) planned for removal,
/// where it is.
pub fn plan_file_removal(path: &Path) -> Result<Plan, String> {
    plan_removal(read(path, Place::User)?)
}

/// Carries out one planned removal (with `dry_run`, says it would):
/// through memd's safe write path, the file backed up, then removed if it
/// still holds what was read.
pub fn remove(read: Read, dry_run: bool) -> Result<Step, String> {
    if dry_run {
        return Ok(Step::new(&read.named, Outcome::WouldRemove));
    }
    let Some(current) = read.current.as_ref() else {
        return Ok(Step::new(&read.named, Outcome::NotThere));
    };
    let backup = safe_file::remove(&read.real, current).map_err(|e| match e {
        safe_file::SafeFileError::Changed { .. } => {
            format!("{e}: it changed after memd read it; run the uninstall again")
        }
        e => e.to_string(),
    })?;
    Ok(Step {
        backup: Some(backup),
        ..Step::new(&read.named, Outcome::Removed)
    })
}

/// A file the install owns whole (a service unit): `content`, where the
/// user's configuration is.
pub fn plan_file(path: &Path, content: &str, new_mode: u32) -> Result<Plan, String> {
    let read = read(path, Place::User)?;
    read.text()?;
    plan(read, content.to_string(), new_mode, |_| Ok(()))
}

/// Carries out one planned write (with `dry_run`, says what it would
/// write): the directories made where missing (private in the user's
/// configuration), the old file backed up, the new one in its place.
pub fn apply(write: Write, dry_run: bool) -> Result<Step, String> {
    let Write {
        read,
        content,
        new_mode,
        check,
        detail,
    } = write;
    if dry_run {
        return Ok(Step {
            content: Some(content),
            detail,
            ..Step::new(&read.named, Outcome::WouldWrite)
        });
    }
    if let Some(dir) = read.real.parent() {
        if !dir.as_os_str().is_empty() && std::fs::symlink_metadata(dir).is_err() {
            let mode = if new_mode & 0o044 == 0 { 0o700 } else { 0o755 };
            safe_file::own_dir(dir, mode, false).map_err(|e| e.to_string())?;
        }
    }
    let how = Replace {
        new_mode,
        check: Some(&check),
        back_up: true,
        carry_appends: false,
    };
    let replaced = safe_file::replace(&read.real, read.current.as_ref(), content.as_bytes(), &how)
        .map_err(|e| match e {
            safe_file::SafeFileError::Changed { .. } => {
                format!("{e}: it changed after memd read it; run the install again")
            }
            e => e.to_string(),
        })?;
    let detail = match (detail, replaced.after) {
        (Some(a), Some(b)) => Some(format!("{a}; {b}")),
        (a, b) => a.or(b),
    };
    Ok(Step {
        backup: replaced.backup,
        detail,
        ..Step::new(&read.named, Outcome::Written)
    })
}

/// The mode of a new file of the user's own configuration: private, since
/// agents keep tokens beside their settings.
pub const PRIVATE: u32 = 0o600;
/// The mode of a new file in a repository, or a service unit.
pub const SHARED: u32 = 0o644;
