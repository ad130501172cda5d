//! The write path (`memctl add`, the MCP tool `remember`): a new item
//! appended to the knowledge file for its kind, in the project's `.memd/`
//! or the first configured root. The directory and the file must be this
//! user's and not links; the text is appended (what was there stays byte
//! for byte) and read back by the loader before anything is written; the
//! file is replaced through [`crate::safe_file`] (lock, compare, exclusive
//! temporary file, fsync, read back, rename), deciding again from the new
//! content when another writer changed it meanwhile; then the indexer
//! applies it before the reply, so the next query sees the item.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::Mutex;

use crate::engine::GLOBAL;
use crate::knowledge::append::{self, Added, AppendError};
use crate::protocol::{AddScope, ErrorKind, NewItem, Reply, Response};
use crate::safe_file::{self, SafeFileError};

use super::handler::{repository_of, Handler, INDEXER_WAIT};
use super::watch::Message;

/// One add at a time in this daemon (another process's adds wait for the
/// directory's lock in [`safe_file`]).
static WRITING: Mutex<()> = Mutex::new(());

/// Why an add failed, as the caller is told.
#[derive(Debug, thiserror::Error)]
enum WriteError {
    #[error(transparent)]
    Append(#[from] AppendError),
    #[error("{0}")]
    Place(String),
    #[error(transparent)]
    File(#[from] SafeFileError),
    #[error("refused: `{field}` looks like it holds {what}; the knowledge files are shared with everyone who pulls the repository, so nothing was written. Leave the credential out (name where it is kept instead)")]
    Secret { field: String, what: &'static str },
}

/// Adds `new` and answers with its id and file.
pub fn add(handler: &Handler, new: NewItem) -> Response {
    match write(handler, &new) {
        Ok((id, file)) => Response::ok(Reply::Added {
            id,
            file: file.display().to_string(),
        }),
        Err(err @ WriteError::File(SafeFileError::Io { .. })) => {
            Response::error(ErrorKind::Internal, err.to_string())
        }
        Err(err) => Response::error(ErrorKind::BadRequest, err.to_string()),
    }
}

fn write(handler: &Handler, new: &NewItem) -> Result<(String, PathBuf), WriteError> {
    append::check_fields(new.kind, &new.fields)?;
    for (field, value) in &new.fields {
        if let Some(what) = crate::knowledge::secrets::find(value) {
            return Err(WriteError::Secret {
                field: field.clone(),
                what,
            });
        }
    }
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
            // What memd would not load, it does not write to either.
            if let Some(why) = crate::knowledge::trust::distrust_project(&repo) {
                return Err(WriteError::Place(format!(
                    "memd does not load this project's knowledge ({why}): nothing is written there"
                )));
            }
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
    safe_file::own_dir(&dir, 0o755, new.scope == AddScope::Personal)?;
    let path = dir.join(append::file_name(new.kind));
    let mut id = String::new();
    let how = safe_file::Replace {
        carry_appends: true,
        ..safe_file::Replace::default()
    };
    let updated = safe_file::update(&path, &how, |current| {
        if let Some(why) =
            current.and_then(|c| crate::knowledge::trust::distrust_mode(c.mode, c.gid))
        {
            return Err(WriteError::Place(format!(
                "{} is {why}: memd does not load it, so nothing is written to it",
                path.display()
            )));
        }
        let existing = current
            .map(|c| {
                std::str::from_utf8(&c.bytes)
                    .map_err(|_| WriteError::Place(format!("{} is not UTF-8", path.display())))
            })
            .transpose()?;
        let k = handler.shared.read();
        let added = append::add(&path, existing, new.kind, &new.fields, &new.tags, |id| {
            k.engine.id_taken(id, scope)
        })?;
        Ok::<_, WriteError>(match added {
            Added::New { id: new_id, text } => {
                id = new_id;
                Some(text.into_bytes())
            }
            Added::There { id: there } => {
                id = there;
                None
            }
        })
    })?;
    if let Some(after) = updated.replaced.after {
        tracing::warn!("{}: written, but {after}", path.display());
    }
    applied(handler, &path);
    Ok((id, path))
}

/// Has the indexer apply `path`, which memd just wrote, and waits for it,
/// so the next query sees the change.
fn applied(handler: &Handler, path: &Path) {
    let (tx, rx) = mpsc::channel();
    if handler
        .indexer
        .send(Message::Written(path.to_path_buf(), tx))
        .is_ok()
    {
        let _ = rx.recv_timeout(INDEXER_WAIT);
    }
}

/// The lines of `text` in `range` (0-based line numbers).
fn lines_in(text: &str, range: &std::ops::Range<usize>) -> String {
    text.split_inclusive('\n')
        .enumerate()
        .filter(|(i, _)| range.contains(i))
        .map(|(_, l)| l)
        .collect()
}

/// What retiring an item did.
pub struct Retired {
    pub file: PathBuf,
    /// The lines taken out.
    pub removed: String,
    /// The file as it was.
    pub backup: Option<PathBuf>,
}

/// Where item `id` is defined (any scope): its file and first line.
pub fn source_of(handler: &Handler, id: &str) -> Option<(PathBuf, usize)> {
    let k = handler.shared.read();
    let item = k.engine.get_anywhere(id)?;
    Some((
        item.source.file.to_path_buf(),
        item.source.pos.line as usize,
    ))
}

/// The lines retiring `id` would take out of its file, as they are now.
pub fn retire_plan(handler: &Handler, id: &str) -> Result<(PathBuf, String), String> {
    let (path, line) = source_of(handler, id).ok_or_else(|| format!("no item `{id}` is loaded"))?;
    let current = safe_file::read(&path)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("{} is gone", path.display()))?;
    let text = std::str::from_utf8(&current.bytes)
        .map_err(|_| format!("{} is not UTF-8", path.display()))?;
    let (_, range) =
        crate::knowledge::retire::without(text, &path, id, line).map_err(|e| e.to_string())?;
    let removed = lines_in(text, &range);
    Ok((path, removed))
}

/// Takes item `id` out of its knowledge file through the safe write path
/// (the rest byte for byte, read back by the loader, a backup kept), then
/// has the indexer apply it before answering.
pub fn retire(handler: &Handler, id: &str) -> Result<Retired, String> {
    let (path, line) = source_of(handler, id).ok_or_else(|| format!("no item `{id}` is loaded"))?;
    let _writing = WRITING.lock().unwrap_or_else(|e| e.into_inner());
    let how = safe_file::Replace {
        back_up: true,
        ..safe_file::Replace::default()
    };
    let mut removed = String::new();
    let updated = safe_file::update(&path, &how, |current| {
        let Some(current) = current else {
            return Err(WriteError::Place(format!("{} is gone", path.display())));
        };
        if let Some(why) = crate::knowledge::trust::distrust_mode(current.mode, current.gid) {
            return Err(WriteError::Place(format!(
                "{} is {why}: memd does not load it, so nothing is written to it",
                path.display()
            )));
        }
        let text = std::str::from_utf8(&current.bytes)
            .map_err(|_| WriteError::Place(format!("{} is not UTF-8", path.display())))?;
        let (out, range) = crate::knowledge::retire::without(text, &path, id, line)
            .map_err(|e| WriteError::Place(e.to_string()))?;
        removed = lines_in(text, &range);
        Ok(Some(out.into_bytes()))
    })
    .map_err(|e| e.to_string())?;
    applied(handler, &path);
    tracing::info!("retired {id} from {}", path.display());
    Ok(Retired {
        file: path,
        removed,
        backup: updated.replaced.backup,
    })
}
