//! Hook calls the daemon cannot hear of: a hook that finds no daemon (or
//! fails to talk to it) appends its call to a small JSON Lines file in the
//! user's state directory (`$XDG_STATE_HOME/memd/hooks.jsonl`, else
//! `~/.local/state/memd/hooks.jsonl`), which `memctl status` reads. The
//! file is private (0600 in a 0700 directory) and kept under
//! [`MAX_BYTES`]: past it, the older half goes.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

use memd::protocol::HookCall;

/// The file is cut to its newer half past this size.
pub const MAX_BYTES: u64 = 64 * 1024;

/// Unix seconds now.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Where the calls are kept.
pub fn state_file() -> Option<PathBuf> {
    let dir = std::env::var_os("XDG_STATE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| PathBuf::from(h).join(".local/state"))
        })?;
    Some(dir.join("memd").join("hooks.jsonl"))
}

/// Appends a call; failing quietly, as a hook must. The file is opened
/// without following a link, and only a regular file of the user's is
/// appended to.
pub fn note(call: &HookCall) {
    let Some(path) = state_file() else { return };
    if let Some(dir) = path.parent() {
        if memd::safe_file::own_dir(dir, 0o700, false).is_err() {
            return;
        }
    }
    if std::fs::symlink_metadata(&path).is_ok_and(|m| m.len() > MAX_BYTES) {
        keep_newer_half(&path);
    }
    let Ok(line) = serde_json::to_string(call) else {
        return;
    };
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(&path);
    if let Ok(mut file) = file {
        if !file.metadata().is_ok_and(|m| m.is_file()) {
            return;
        }
        // One write of a whole line: appends from concurrent hooks do not
        // interleave.
        let _ = file.write_all(format!("{line}\n").as_bytes());
    }
}

/// Rewrites the file with its newer half (whole lines), through memd's safe
/// write path.
fn keep_newer_half(path: &std::path::Path) {
    let Ok(Some(current)) = memd::safe_file::read(path) else {
        return;
    };
    let bytes = &current.bytes;
    let cut = bytes.len() / 2;
    let start = bytes[cut..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |i| cut + i + 1);
    let how = memd::safe_file::Replace {
        new_mode: 0o600,
        carry_appends: true,
        ..Default::default()
    };
    let _ = memd::safe_file::replace(path, Some(&current), &bytes[start..], &how);
}

/// The latest `n` calls kept, oldest first.
pub fn latest(n: usize) -> Vec<HookCall> {
    let Some(text) = state_file().and_then(|p| std::fs::read_to_string(p).ok()) else {
        return Vec::new();
    };
    let calls: Vec<HookCall> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    calls[calls.len().saturating_sub(n)..].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newer_half_of_whole_lines_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hooks.jsonl");
        let text: String = (0..10).map(|i| format!("line {i}\n")).collect();
        std::fs::write(&path, &text).unwrap();
        keep_newer_half(&path);
        let kept = std::fs::read_to_string(&path).unwrap();
        assert!(
            kept.starts_with("line ") && kept.ends_with("line 9\n"),
            "{kept}"
        );
        assert!(kept.len() <= text.len() / 2 + 1);
    }
}
