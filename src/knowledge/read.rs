//! Reading a knowledge file safely: only a regular file is read, it is
//! opened without blocking (a FIFO named `x.yaml` would otherwise hang the
//! reader until someone writes to it), the size limit holds while reading
//! (a symlink to `/dev/zero` reports size 0), and a symlink that leads out of
//! its root is refused unless the configuration allows it.

use std::fs::{File, Metadata};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::file::MAX_FILE_BYTES;
use crate::safe_file::type_name;

/// Why a knowledge file was not read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// A FIFO, socket or device: never read.
    #[error("not a regular file (a {0}); only regular files are read")]
    NotRegular(&'static str),
    /// Over [`MAX_FILE_BYTES`], by its size or by what reading it gave.
    #[error("file is over the {} MiB limit; refused", MAX_FILE_BYTES / (1024 * 1024))]
    TooLarge,
    /// A symlink whose target lies outside the root.
    #[error("a symlink to a file outside its root {}; not followed (set `follow_symlinks_out_of_roots = true` under [daemon] to allow)", root.display())]
    OutsideRoot { root: PathBuf },
    /// Another user's file, or one others may write to
    /// ([`super::trust`]): its text could be anyone's.
    #[error("{0}; not read (its text could be anyone's)")]
    Untrusted(String),
    /// The file vanished or cannot be opened or read.
    #[error("cannot read: {0}")]
    Io(#[from] std::io::Error),
}

/// A file's bytes with the metadata of the very file they were read from.
#[derive(Debug)]
pub struct FileBytes {
    pub bytes: Vec<u8>,
    pub meta: Metadata,
}

/// Reads `path` if it is a regular file within [`MAX_FILE_BYTES`]: opened
/// non-blocking, checked on the open descriptor, read with the limit.
pub fn read_regular(path: &Path) -> Result<FileBytes, ReadError> {
    let file = File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular(type_name(&meta)));
    }
    if let Some(why) = super::trust::distrust(&meta) {
        return Err(ReadError::Untrusted(why));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(ReadError::TooLarge);
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(ReadError::TooLarge);
    }
    Ok(FileBytes { bytes, meta })
}

/// Reads `path`, a file under `root`, refusing a symlink (of the file or of
/// a directory on the way) that leads out of the root unless `follow_out`.
pub fn read_under_root(path: &Path, root: &Path, follow_out: bool) -> Result<FileBytes, ReadError> {
    if !follow_out && leaves_root(path, root)? {
        return Err(ReadError::OutsideRoot {
            root: root.to_path_buf(),
        });
    }
    read_regular(path)
}

/// Whether `path`, resolved, lies outside `root`, resolved (the root itself
/// may be a symlink: `~/.claude/memory` kept in a dotfiles repository).
fn leaves_root(path: &Path, root: &Path) -> std::io::Result<bool> {
    let real = std::fs::canonicalize(path)?;
    // The root as configured is most often its real path already: then
    // there is no need to resolve it for every file.
    if real.starts_with(root) {
        return Ok(false);
    }
    Ok(!real.starts_with(std::fs::canonicalize(root)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn a_regular_file_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.yaml");
        std::fs::write(&path, "patterns: []\n").unwrap();
        let read = read_under_root(&path, dir.path(), false).unwrap();
        assert_eq!(read.bytes, b"patterns: []\n");
        assert!(read.meta.is_file());
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hang.yaml");
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let err = read_regular(&path).unwrap_err();
        assert!(err.to_string().contains("a FIFO"), "{err}");
    }

    #[test]
    fn a_file_anyone_may_write_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("open.yaml");
        std::fs::write(&path, "patterns: []\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        let err = read_regular(&path).unwrap_err();
        assert!(err.to_string().contains("writable by every user"), "{err}");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(read_regular(&path).is_ok());
    }

    #[test]
    fn a_device_is_refused_and_the_limit_holds_while_reading() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("big.yaml");
        symlink("/dev/zero", &link).unwrap();
        let err = read_under_root(&link, dir.path(), true).unwrap_err();
        assert!(err.to_string().contains("character device"), "{err}");
        let err = read_under_root(&link, dir.path(), false).unwrap_err();
        assert!(matches!(err, ReadError::OutsideRoot { .. }), "{err}");
    }

    #[test]
    fn symlinks_may_stay_inside_the_root_but_not_leave_it() {
        let outside = tempfile::tempdir().unwrap();
        let secret = outside.path().join("secret.yaml");
        std::fs::write(&secret, "patterns: []\n").unwrap();
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("real.yaml"), "patterns: []\n").unwrap();
        symlink(
            root.path().join("real.yaml"),
            root.path().join("alias.yaml"),
        )
        .unwrap();
        symlink(&secret, root.path().join("out.yaml")).unwrap();
        symlink(outside.path(), root.path().join("dir")).unwrap();
        assert!(read_under_root(&root.path().join("alias.yaml"), root.path(), false).is_ok());
        for path in ["out.yaml", "dir/secret.yaml"] {
            let err = read_under_root(&root.path().join(path), root.path(), false).unwrap_err();
            assert!(
                err.to_string().contains("outside its root"),
                "{path}: {err}"
            );
            assert!(read_under_root(&root.path().join(path), root.path(), true).is_ok());
        }
        // A root that is itself a symlink is resolved first.
        let alias = outside.path().join("root-link");
        symlink(root.path(), &alias).unwrap();
        assert!(read_under_root(&alias.join("real.yaml"), &alias, false).is_ok());
    }
}
