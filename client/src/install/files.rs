//! Writing the user's files: only when the content changes, after a backup
//! of what was there, atomically (a temporary file beside it, renamed
//! over); with `--dry-run`, not at all.

use std::path::{Path, PathBuf};

use super::{Outcome, Step};

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
        let backup = PathBuf::from(format!("{}.memd-backup-{}", path.display(), now_stamp()));
        std::fs::copy(path, &backup).map_err(|e| format!("backing up {}: {e}", path.display()))?;
        step.backup = Some(backup);
    }
    let tmp = path.with_extension("memd-tmp");
    std::fs::write(&tmp, content).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(step)
}

fn now_stamp() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
