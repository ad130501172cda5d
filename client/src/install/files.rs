//! Writing the user's files: only when the content changes, after a backup
//! of what was there, atomically (a temporary file beside it, renamed
//! over); with `--dry-run`, not at all.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::{Outcome, Step};

/// A JSON settings file, `{}` when absent or empty; one that is not JSON
/// is an error and left as it is.
pub fn read_json(path: &Path) -> Result<Value, String> {
    match std::fs::read_to_string(path) {
        Ok(text) if !text.trim().is_empty() => serde_json::from_str(&text)
            .map_err(|e| format!("{}: not JSON ({e}); left as it is", path.display())),
        _ => Ok(json!({})),
    }
}

/// Writes a JSON settings document as [`write_file`] does, pretty-printed.
pub fn write_json(path: &Path, doc: &Value, dry_run: bool) -> Result<Step, String> {
    let content = serde_json::to_string_pretty(doc).map_err(|e| e.to_string())? + "\n";
    write_file(path, &content, dry_run)
}

/// Writes `content` to `path` unless it is already that.
pub fn write_file(path: &Path, content: &str, dry_run: bool) -> Result<Step, String> {
    let old = std::fs::read_to_string(path).ok();
    if old.as_deref() == Some(content) {
        return Ok(Step::new(path, Outcome::Unchanged));
    }
    if dry_run {
        return Ok(Step {
            content: Some(content.to_string()),
            ..Step::new(path, Outcome::WouldWrite)
        });
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    let mut step = Step::new(path, Outcome::Written);
    if old.is_some() {
        step.backup = Some(back_up(path)?);
    }
    let tmp = path.with_extension("memd-tmp");
    std::fs::write(&tmp, content).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(step)
}

/// Copies `path` beside itself, under a name no earlier backup has (two
/// writes within a second keep both originals).
fn back_up(path: &Path) -> Result<PathBuf, String> {
    let stamp = now_stamp();
    let mut backup = PathBuf::from(format!("{}.memd-backup-{stamp}", path.display()));
    let mut n = 1;
    while backup.symlink_metadata().is_ok() {
        n += 1;
        backup = PathBuf::from(format!("{}.memd-backup-{stamp}-{n}", path.display()));
    }
    std::fs::copy(path, &backup).map_err(|e| format!("backing up {}: {e}", path.display()))?;
    Ok(backup)
}

fn now_stamp() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
