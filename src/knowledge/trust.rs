//! Whose knowledge is loaded: only what this user (or root) placed and
//! nobody else can change. A project's knowledge reaches the prompt of
//! whoever works in it, so a `.memd` left by another user in a shared
//! directory (`/tmp`), or one that others may write to, would let them put
//! text into this user's agent. A directory or file is trusted when it is
//! owned by this user or by root, and writable by nobody else: not by
//! others, and not by its group unless that group is this user's own
//! private group (the usual `umask 002` setup: the user's primary group,
//! named after the user, with no other member; a group that cannot be
//! looked up is not).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::safe_file::own_uid;

/// Why `meta` (of a file or directory) is not trusted, if it is not.
pub fn distrust(meta: &std::fs::Metadata) -> Option<String> {
    let uid = meta.uid();
    if uid != own_uid() && uid != 0 {
        return Some(format!("owned by another user (uid {uid})"));
    }
    distrust_mode(meta.mode(), meta.gid())
}

/// Why a file or directory of this mode and group is not trusted: others
/// may write to it, or a group that is not this user's own.
pub fn distrust_mode(mode: u32, gid: u32) -> Option<String> {
    if mode & 0o002 != 0 {
        return Some(format!(
            "writable by every user (mode {:03o})",
            mode & 0o777
        ));
    }
    if mode & 0o020 != 0 && !own_private_group(gid) {
        return Some(format!(
            "writable by its group (gid {gid}, mode {:03o}), which is not this user's own",
            mode & 0o777
        ));
    }
    None
}

/// Whether `gid` is this user's own private group, as `useradd` makes one
/// (USERGROUPS_ENAB): the user's primary group, named after the user, with
/// no other member listed. Anything that cannot be looked up is not.
fn own_private_group(gid: u32) -> bool {
    // SAFETY: getegid takes nothing and cannot fail.
    if gid != unsafe { libc::getegid() } {
        return false;
    }
    let Some(me) = own_name() else {
        return false;
    };
    let mut group: libc::group = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 64 * 1024];
    let mut found: *mut libc::group = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call, the buffer's length is
    // its own; the result points into `group` and `buf`, read before they go.
    let rc = unsafe { libc::getgrgid_r(gid, &mut group, buf.as_mut_ptr(), buf.len(), &mut found) };
    if rc != 0 || found.is_null() || group.gr_name.is_null() {
        return false;
    }
    // SAFETY: gr_name points into `buf`, NUL-terminated.
    let name = unsafe { std::ffi::CStr::from_ptr(group.gr_name) }.to_string_lossy();
    if name != me {
        return false;
    }
    let mut members = group.gr_mem;
    if members.is_null() {
        return true;
    }
    // SAFETY: gr_mem is a NULL-terminated array of C strings in `buf`.
    unsafe {
        while !(*members).is_null() {
            if std::ffi::CStr::from_ptr(*members).to_string_lossy() != me {
                return false;
            }
            members = members.add(1);
        }
    }
    true
}

/// This user's login name, if the password database has one.
fn own_name() -> Option<String> {
    let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 64 * 1024];
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: as in `own_private_group`.
    let rc =
        unsafe { libc::getpwuid_r(own_uid(), &mut pw, buf.as_mut_ptr(), buf.len(), &mut found) };
    if rc != 0 || found.is_null() || pw.pw_name.is_null() {
        return None;
    }
    // SAFETY: pw_name points into `buf`, NUL-terminated.
    Some(
        unsafe { std::ffi::CStr::from_ptr(pw.pw_name) }
            .to_string_lossy()
            .into_owned(),
    )
}

/// The directories of a project whose trust decides whether its knowledge
/// is loaded: the repository itself and, where they exist, `.claude`,
/// `.claude/memory` and `.memd`.
fn project_dirs(repo: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![repo.to_path_buf()];
    for sub in [".claude", ".claude/memory", ".memd"] {
        let dir = repo.join(sub);
        if std::fs::symlink_metadata(&dir).is_ok() {
            dirs.push(dir);
        }
    }
    dirs
}

/// Why the project at `repo` must not be loaded, if it must not: a
/// directory of it another user owns or may write to (a link is judged by
/// where it leads, and by who made the link).
pub fn distrust_project(repo: &Path) -> Option<String> {
    for dir in project_dirs(repo) {
        if let Ok(link) = std::fs::symlink_metadata(&dir) {
            if link.file_type().is_symlink() && link.uid() != own_uid() && link.uid() != 0 {
                return Some(format!(
                    "{} is a link made by another user (uid {})",
                    dir.display(),
                    link.uid()
                ));
            }
        }
        match std::fs::metadata(&dir) {
            Ok(meta) => {
                if let Some(why) = distrust(&meta) {
                    return Some(format!("{} is {why}", dir.display()));
                }
            }
            Err(err) => return Some(format!("{}: {err}", dir.display())),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_project_others_may_write_to_is_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(repo.join(".memd")).unwrap();
        std::fs::set_permissions(&repo, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(repo.join(".memd"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        assert_eq!(distrust_project(&repo), None);
        std::fs::set_permissions(repo.join(".memd"), std::fs::Permissions::from_mode(0o777))
            .unwrap();
        let why = distrust_project(&repo).unwrap();
        assert!(why.contains(".memd is writable by every user"), "{why}");
        std::fs::set_permissions(repo.join(".memd"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        // /tmp itself, as a repository's top: sticky, but anyone may write.
        std::fs::set_permissions(&repo, std::fs::Permissions::from_mode(0o1777)).unwrap();
        assert!(distrust_project(&repo).is_some());
    }
}
