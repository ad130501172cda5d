//! The safe write path (`memctl add`, the MCP tool `remember`): a new item
//! appended to the knowledge file for its kind, in the project's `.memd/`
//! or the first configured root. The directory and the file must be this
//! user's and not links; the text is appended (what was there stays byte
//! for byte) and read back by the loader before anything is written; the
//! file is replaced atomically (a temporary file, fsync, rename, fsync of
//! the directory); then the indexer applies it before the reply, so the
//! next query sees the item.

use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::Mutex;

use crate::engine::GLOBAL;
use crate::knowledge::append::{self, AppendError};
use crate::knowledge::read::read_regular;
use crate::protocol::{AddScope, ErrorKind, NewItem, Reply, Response};

use super::handler::{repository_of, Handler, INDEXER_WAIT};
use super::watch::Message;

/// One add at a time: two appends to one file must not race.
static WRITING: Mutex<()> = Mutex::new(());

/// Why an add failed, as the caller is told.
#[derive(Debug, thiserror::Error)]
enum WriteError {
    #[error(transparent)]
    Append(#[from] AppendError),
    #[error("{0}")]
    Place(String),
    #[error("{what} {}: {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
}

fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> WriteError {
    let path = path.to_path_buf();
    move |source| WriteError::Io { what, path, source }
}

/// Adds `new` and answers with its id and file.
pub fn add(handler: &Handler, new: NewItem) -> Response {
    match write(handler, &new) {
        Ok((id, file)) => Response::ok(Reply::Added {
            id,
            file: file.display().to_string(),
        }),
        Err(err @ WriteError::Io { .. }) => Response::error(ErrorKind::Internal, err.to_string()),
        Err(err) => Response::error(ErrorKind::BadRequest, err.to_string()),
    }
}

fn write(handler: &Handler, new: &NewItem) -> Result<(String, PathBuf), WriteError> {
    append::check_fields(new.kind, &new.fields)?;
    handler.register_place(&new.query);
    let (dir, scope) = match new.scope {
        AddScope::Project => {
            let place = new
                .query
                .place()
                .ok_or_else(|| WriteError::Place("no absolute working directory given".into()))?;
            let repo = repository_of(Path::new(place)).ok_or_else(|| {
                WriteError::Place(format!(
                    "{place} is not inside a repository (no .git or .memd above it); use the personal scope"
                ))
            })?;
            let scope = handler.shared.read().engine.scope_of(&new.query);
            (repo.join(".memd"), scope)
        }
        AddScope::Personal => {
            let k = handler.shared.read();
            let root = k
                .roots
                .iter()
                .find(|r| r.project.is_none())
                .map(|r| r.path.clone())
                .ok_or_else(|| WriteError::Place("no knowledge root is configured".into()))?;
            (root, GLOBAL)
        }
    };
    let _writing = WRITING.lock().unwrap_or_else(|e| e.into_inner());
    ensure_own_dir(&dir, new.scope == AddScope::Personal)?;
    let path = dir.join(append::file_name(new.kind));
    let existing = read_own_file(&path)?;
    let existing = existing
        .as_deref()
        .map(|b| {
            std::str::from_utf8(b)
                .map_err(|_| WriteError::Place(format!("{} is not UTF-8", path.display())))
        })
        .transpose()?;
    let (id, text) = {
        let k = handler.shared.read();
        append::add(&path, existing, new.kind, &new.fields, &new.tags, |id| {
            k.engine.id_taken(id, scope)
        })?
    };
    replace(&path, text.as_bytes())?;
    let (tx, rx) = mpsc::channel();
    if handler
        .indexer
        .send(Message::Written(path.clone(), tx))
        .is_ok()
    {
        let _ = rx.recv_timeout(INDEXER_WAIT);
    }
    Ok((id, path))
}

/// Makes sure `dir` is a directory of this user's, not a link (a personal
/// root may be one, as configured), creating it when absent.
fn ensure_own_dir(dir: &Path, may_be_link: bool) -> Result<(), WriteError> {
    let meta = match std::fs::symlink_metadata(dir) {
        Ok(meta) => meta,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dir).map_err(io("cannot create", dir))?;
            std::fs::symlink_metadata(dir).map_err(io("cannot read", dir))?
        }
        Err(err) => return Err(io("cannot read", dir)(err)),
    };
    let meta = if meta.file_type().is_symlink() && may_be_link {
        std::fs::metadata(dir).map_err(io("cannot read", dir))?
    } else {
        meta
    };
    if !meta.is_dir() {
        return Err(WriteError::Place(format!(
            "{} is not a directory (a link or a file): nothing is written there",
            dir.display()
        )));
    }
    if meta.uid() != super::own_uid() {
        return Err(WriteError::Place(format!(
            "{} belongs to another user: nothing is written there",
            dir.display()
        )));
    }
    Ok(())
}

/// The bytes of `path` when it exists: a regular file of this user's, not
/// a link.
fn read_own_file(path: &Path) -> Result<Option<Vec<u8>>, WriteError> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(io("cannot read", path)(err)),
    };
    if !meta.is_file() || meta.uid() != super::own_uid() {
        return Err(WriteError::Place(format!(
            "{} is not a regular file of this user's: it is not written to",
            path.display()
        )));
    }
    let bytes =
        read_regular(path).map_err(|e| WriteError::Place(format!("{}: {e}", path.display())))?;
    Ok(Some(bytes.bytes))
}

/// Replaces `path` with `bytes` so that a reader sees the old file or the
/// new one, never half of one, and a crash keeps one of them.
fn replace(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let mode = std::fs::metadata(path).map_or(0o644, |m| m.permissions().mode() & 0o777);
    let temp = dir.join(format!(".{name}.{}.memd-tmp", std::process::id()));
    let written = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temp, path)?;
        std::fs::File::open(dir)?.sync_all()
    })();
    written.map_err(|e| {
        let _ = std::fs::remove_file(&temp);
        io("cannot write", path)(e)
    })
}
