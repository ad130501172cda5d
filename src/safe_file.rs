//! The one way memd changes a user's file: `memctl install` (settings of
//! every agent), `memctl add` and the MCP `remember` (knowledge files), and
//! the store's database all go through here.
//!
//! - [`read`]: a file as it is now, opened without following a link and
//!   without blocking, checked on the open descriptor (a regular file of
//!   this user's), with the identity a later write compares against.
//! - [`replace`]: a compare-and-swap of the whole file. Under an advisory
//!   lock on the file's directory (every memd writer takes it), the file is
//!   read again and must still be what the caller decided from; the new
//!   bytes go to a temporary file created exclusively (`O_CREAT | O_EXCL |
//!   O_NOFOLLOW`, a random name, in the same directory) with the old file's
//!   mode (and group, where it can be kept), are fsynced and read back
//!   (bytes, then the caller's check), the file is checked once more for a
//!   change made meanwhile by a writer that does not lock, renamed over,
//!   and the directory fsynced. A change found at any point is
//!   [`SafeFileError::Changed`]: the caller decides again from the new
//!   content. For a file others only ever append to (a knowledge file, a
//!   log), bytes only appended since the caller read it are not a change:
//!   they are kept after the new bytes (and checked with them), and what
//!   such a writer appended to the old file after the last look (it opened
//!   it just before the rename) is carried over to the new one.
//!   A backup, when asked for, is made only once every check has passed.
//! - [`back_up`]: a copy beside the file, under a name no earlier backup
//!   has, with the file's mode.
//! - [`resolve`]: a path whose last component may be a link the user made
//!   (a settings file kept in a dotfiles repository): the file it leads to,
//!   when that is a regular file of this user's.
//! - [`confine`]: a path under a directory that must not lead out of it
//!   through any link on the way (a cloned repository's `.claude`).
//! - [`own_dir`]: a directory of this user's, created private when absent.
//!
//! A file that cannot be read, is not a regular file, belongs to another
//! user, is read-only or is a link is never written: the error names it and
//! says why.

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a writer waits for another memd writer in the same directory.
pub const LOCK_WAIT: Duration = Duration::from_secs(10);

/// The mode of a file memd creates where no file was.
pub const NEW_FILE_MODE: u32 = 0o644;

/// The largest file memd reads to change it (an agent's settings file
/// with its history grows to a few MiB; a knowledge file is read only up
/// to 8 MiB anyway).
pub const MAX_READ_BYTES: u64 = 64 * 1024 * 1024;

/// Why a file was not read or not written. Every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum SafeFileError {
    #[error("{}: {what}: {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: a symbolic link; memd does not write through it (edit the file it leads to, or replace the link with a file)", path.display())]
    Link { path: PathBuf },
    #[error("{}: not a regular file (a {kind}); left as it is", path.display())]
    NotRegular { path: PathBuf, kind: &'static str },
    #[error("{}: belongs to another user (uid {uid}); left as it is", path.display())]
    OtherOwner { path: PathBuf, uid: u32 },
    #[error("{}: read-only (mode {mode:03o}); memd respects that and leaves it as it is (make it writable to let memd change it)", path.display())]
    ReadOnly { path: PathBuf, mode: u32 },
    #[error("{}: leads out of {} through a link ({}); refused", path.display(), root.display(), through.display())]
    OutsideRoot {
        path: PathBuf,
        root: PathBuf,
        through: PathBuf,
    },
    #[error("{}: another memd writer held the directory for {}s; nothing written", path.display(), LOCK_WAIT.as_secs())]
    Locked { path: PathBuf },
    #[error("{}: changed while memd was writing it; nothing written", path.display())]
    Changed { path: PathBuf },
    #[error("{}: what would be written does not read back ({why}); nothing written", path.display())]
    Unreadable { path: PathBuf, why: String },
    #[error("{}: larger than {} MiB; left as it is", path.display(), MAX_READ_BYTES / (1024 * 1024))]
    TooLarge { path: PathBuf },
    #[error("{}: its directory cannot be written by this user ({source}); nothing written", path.display())]
    DirNotWritable {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl SafeFileError {
    fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> SafeFileError {
        let path = path.to_path_buf();
        move |source| SafeFileError::Io { what, path, source }
    }
}

/// This process's effective uid.
pub fn own_uid() -> u32 {
    // SAFETY: geteuid takes nothing and cannot fail.
    unsafe { libc::geteuid() }
}

/// Which file a [`Current`] was read from, to tell whether it changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i128,
    ctime_ns: i128,
}

impl Identity {
    fn of(meta: &std::fs::Metadata) -> Identity {
        Identity {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.len(),
            mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
            ctime_ns: i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
        }
    }
}

/// A file as memd read it.
#[derive(Debug, Clone)]
pub struct Current {
    pub bytes: Vec<u8>,
    /// Permission bits (and setgid / sticky), kept by a replacement.
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
    identity: Identity,
}

/// The name of a file type that is not a regular file, for messages.
pub fn type_name(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_dir() {
        "directory"
    } else if t.is_symlink() {
        "symbolic link"
    } else if t.is_fifo() {
        "FIFO"
    } else if t.is_socket() {
        "socket"
    } else if t.is_char_device() {
        "character device"
    } else if t.is_block_device() {
        "block device"
    } else {
        "special file"
    }
}

/// Opens `path` for reading without following a link at its end and
/// without blocking (a FIFO would hang the reader); `None` when absent.
fn open_no_follow(path: &Path) -> Result<Option<File>, SafeFileError> {
    let opened = File::options()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path);
    match opened {
        Ok(file) => Ok(Some(file)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) if err.raw_os_error() == Some(libc::ELOOP) => Err(SafeFileError::Link {
            path: path.to_path_buf(),
        }),
        // O_NOFOLLOW on a link to a FIFO or a directory can say other things;
        // what lies at the path is named from its own metadata.
        Err(err) => match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.file_type().is_symlink() => Err(SafeFileError::Link {
                path: path.to_path_buf(),
            }),
            _ => Err(SafeFileError::io("cannot be read", path)(err)),
        },
    }
}

/// Reads `path` as it is now: `None` when there is no file, an error
/// naming it when it is a link, not a regular file, another user's, or
/// cannot be read.
pub fn read(path: &Path) -> Result<Option<Current>, SafeFileError> {
    Ok(read_open(path)?.map(|(current, _)| current))
}

/// [`read`], with the file it read still open.
fn read_open(path: &Path) -> Result<Option<(Current, File)>, SafeFileError> {
    let Some(mut file) = open_no_follow(path)? else {
        return Ok(None);
    };
    let meta = file
        .metadata()
        .map_err(SafeFileError::io("cannot be read", path))?;
    is_own(path, &meta, false)?;
    let too_large = || SafeFileError::TooLarge {
        path: path.to_path_buf(),
    };
    if meta.len() > MAX_READ_BYTES {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    (&mut file)
        .take(MAX_READ_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(SafeFileError::io("cannot be read", path))?;
    if bytes.len() as u64 > MAX_READ_BYTES {
        return Err(too_large());
    }
    // The identity of what was read: a writer that does not lock may have
    // appended while we read, and the size says so.
    let meta = file
        .metadata()
        .map_err(SafeFileError::io("cannot be read", path))?;
    if meta.len() != bytes.len() as u64 {
        return Err(SafeFileError::Changed {
            path: path.to_path_buf(),
        });
    }
    let current = Current {
        bytes,
        mode: meta.mode() & 0o7777,
        uid: meta.uid(),
        gid: meta.gid(),
        identity: Identity::of(&meta),
    };
    Ok(Some((current, file)))
}

/// A check of the bytes read back: `Err` says why they do not read.
pub type Check = dyn Fn(&[u8]) -> Result<(), String>;

/// What a replacement asks for besides the new bytes.
pub struct Replace<'a> {
    /// The mode of a file created where there was none.
    pub new_mode: u32,
    /// Run on the bytes read back from the temporary file before it takes
    /// the file's place: the caller's parser, so that nothing is written
    /// that does not read back as it should.
    pub check: Option<&'a Check>,
    /// Copy the file as it was beside it first ([`back_up`]), once every
    /// check has passed.
    pub back_up: bool,
    /// The file is only ever appended to by others (a knowledge file, a
    /// log), and the new bytes are what was read with more at its end:
    /// bytes a writer that does not lock appended since the read are kept
    /// after the new ones instead of counting as a change, and what it
    /// appends to the old file after the last look is carried over to the
    /// new one. Off for a file whose content must parse as a whole
    /// (settings).
    pub carry_appends: bool,
}

impl Default for Replace<'_> {
    fn default() -> Self {
        Replace {
            new_mode: NEW_FILE_MODE,
            check: None,
            back_up: false,
            carry_appends: false,
        }
    }
}

/// What a replacement did besides replacing the file.
#[derive(Debug, Default)]
pub struct Replaced {
    /// Where the file as it was was copied.
    pub backup: Option<PathBuf>,
    /// What went wrong after the new file was in place (the directory's
    /// fsync, carrying over an append): the file is written, and this says
    /// what may not have reached the disk or the file.
    pub after: Option<String>,
}

/// Refuses a change to `current` (the file at `path`, `None`: absent) that
/// [`replace`] would refuse for its mode or its directory: a read-only
/// file, a directory this user cannot write to. For callers that decide
/// on several files before writing any.
pub fn check_writable(path: &Path, current: Option<&Current>) -> Result<(), SafeFileError> {
    if let Some(current) = current {
        if current.mode & 0o200 == 0 {
            return Err(SafeFileError::ReadOnly {
                path: path.to_path_buf(),
                mode: current.mode & 0o777,
            });
        }
    }
    // The nearest directory that exists must let this user create a file.
    let mut dir = dir_of(path).to_path_buf();
    while std::fs::symlink_metadata(&dir).is_err() {
        match dir.parent() {
            Some(up) if !up.as_os_str().is_empty() => dir = up.to_path_buf(),
            _ => break,
        }
    }
    let c = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(dir.as_os_str()))
        .map_err(|e| SafeFileError::io("cannot be read", path)(std::io::Error::other(e)))?;
    // SAFETY: a valid NUL-terminated path; access only reads it.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } != 0 {
        return Err(SafeFileError::DirNotWritable {
            path: path.to_path_buf(),
            source: std::io::Error::last_os_error(),
        });
    }
    Ok(())
}

/// The directory of `path`, for the lock, the temporary file and fsync.
fn dir_of(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// An exclusive advisory lock on a directory, released when dropped.
struct DirLock(File);

impl DirLock {
    fn take(dir: &Path, path: &Path) -> Result<DirLock, SafeFileError> {
        let file = File::options()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC)
            .open(dir)
            .map_err(SafeFileError::io("cannot open its directory", path))?;
        let start = Instant::now();
        loop {
            // SAFETY: flock on a descriptor we own.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                return Ok(DirLock(file));
            }
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() != Some(libc::EWOULDBLOCK)
                && err.kind() != std::io::ErrorKind::Interrupted
            {
                return Err(SafeFileError::io("cannot lock its directory", path)(err));
            }
            if start.elapsed() >= LOCK_WAIT {
                return Err(SafeFileError::Locked {
                    path: path.to_path_buf(),
                });
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    fn sync(&self) -> std::io::Result<()> {
        self.0.sync_all()
    }
}

/// A random suffix for a temporary name: nobody can guess it in advance to
/// plant something there (and `O_EXCL` refuses whatever is there anyway).
fn random_suffix() -> String {
    format!("{:016x}", random_u64())
}

/// 64 random bits (the standard library's per-process random hash keys,
/// over the time and the process id): for names nobody can guess in
/// advance, not for secrets.
pub fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    hasher.write_u32(std::process::id());
    hasher.finish()
}

/// Creates a new file beside `path` that nobody else can have opened: a
/// random name, `O_CREAT | O_EXCL | O_NOFOLLOW`, `mode` (and `gid` where it
/// can be kept; where not, the group loses its access rather than another
/// group gaining it).
fn create_exclusive(
    path: &Path,
    tag: &str,
    mode: u32,
    gid: Option<u32>,
) -> Result<(PathBuf, File), SafeFileError> {
    let dir = dir_of(path);
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let mut last = None;
    for _ in 0..8 {
        let temp = dir.join(format!(".{name}.{}.{tag}", random_suffix()));
        let opened = File::options()
            .write(true)
            .read(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&temp);
        match opened {
            Ok(file) => {
                let mut mode = mode & 0o7777;
                if let Some(gid) = gid {
                    // SAFETY: fchown on a descriptor we own; -1 keeps the owner.
                    let kept = unsafe { libc::fchown(file.as_raw_fd(), u32::MAX, gid) } == 0;
                    if !kept {
                        mode &= !0o070;
                    }
                }
                let set = file.set_permissions(std::fs::Permissions::from_mode(mode));
                if let Err(err) = set {
                    drop(file);
                    let _ = std::fs::remove_file(&temp);
                    return Err(SafeFileError::io(
                        "cannot set the mode of a new file for",
                        path,
                    )(err));
                }
                return Ok((temp, file));
            }
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => last = Some(err),
            Err(err) => return Err(SafeFileError::io("cannot create a file beside", path)(err)),
        }
    }
    Err(SafeFileError::io("cannot create a file beside", path)(
        last.unwrap_or_else(|| std::io::Error::other("no free name")),
    ))
}

/// A temporary file removed unless it was renamed into place.
struct Temp {
    path: PathBuf,
    file: File,
    placed: bool,
}

impl Drop for Temp {
    fn drop(&mut self) {
        if !self.placed {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Whether what is at `path` now is still `expected` (`None`: no file).
fn unchanged(path: &Path, expected: Option<&Current>) -> Result<bool, SafeFileError> {
    let now = match std::fs::symlink_metadata(path) {
        Ok(meta) => Some(meta),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
        Err(err) => return Err(SafeFileError::io("cannot be read", path)(err)),
    };
    Ok(match (now, expected) {
        (None, None) => true,
        (Some(meta), Some(expected)) => meta.is_file() && Identity::of(&meta) == expected.identity,
        _ => false,
    })
}

/// Replaces the file at `path`, which the caller read as `expected`
/// (`None`: there was no file), with `new`. Nothing is written, and
/// [`SafeFileError::Changed`] returned, when the file is no longer what was
/// read; a read-only file is refused.
pub fn replace(
    path: &Path,
    expected: Option<&Current>,
    new: &[u8],
    how: &Replace<'_>,
) -> Result<Replaced, SafeFileError> {
    let dir = dir_of(path);
    let lock = DirLock::take(dir, path)?;
    // Read again under the lock: another memd writer may have come first.
    let opened = read_open(path)?;
    let (now, old) = match opened {
        Some((now, old)) => (Some(now), Some(old)),
        None => (None, None),
    };
    // What a writer that does not lock appended since the caller read the
    // file (only where appends are carried over): kept after the new bytes.
    let appended = match (&now, expected) {
        (None, None) => Some(&[][..]),
        (Some(now), Some(expected))
            if now.identity == expected.identity && now.bytes == expected.bytes =>
        {
            Some(&[][..])
        }
        (Some(now), Some(expected)) if how.carry_appends => {
            appended_since(expected, &now.identity, &now.bytes)
        }
        _ => None,
    };
    let Some(appended) = appended else {
        return Err(SafeFileError::Changed {
            path: path.to_path_buf(),
        });
    };
    let with_appended;
    let new = if appended.is_empty() {
        new
    } else {
        with_appended = [new, appended].concat();
        &with_appended[..]
    };
    let (mode, gid) = match &now {
        Some(now) => (now.mode, Some(now.gid)),
        None => (how.new_mode, None),
    };
    check_writable(path, now.as_ref())?;
    let (temp_path, file) = create_exclusive(path, "memd-tmp", mode, gid)?;
    let mut temp = Temp {
        path: temp_path,
        file,
        placed: false,
    };
    let write = |temp: &mut Temp| -> std::io::Result<Vec<u8>> {
        temp.file.write_all(new)?;
        temp.file.sync_all()?;
        temp.file.rewind()?;
        let mut back = Vec::with_capacity(new.len());
        temp.file.read_to_end(&mut back)?;
        Ok(back)
    };
    let back = write(&mut temp).map_err(SafeFileError::io("cannot write", path))?;
    if back != new {
        return Err(SafeFileError::Unreadable {
            path: path.to_path_buf(),
            why: "the bytes read back differ from those written".into(),
        });
    }
    if let Some(check) = how.check {
        if let Err(why) = check(&back) {
            // What another program appended may be what does not read: the
            // caller decides again.
            return Err(if appended.is_empty() {
                SafeFileError::Unreadable {
                    path: path.to_path_buf(),
                    why,
                }
            } else {
                SafeFileError::Changed {
                    path: path.to_path_buf(),
                }
            });
        }
    }
    let mut done = Replaced::default();
    if how.back_up {
        if let Some(now) = &now {
            done.backup = Some(back_up(path, now)?);
        }
    }
    // Last look before the rename: a writer that does not lock (an editor,
    // a shell's `>>`) may have changed the file since it was read.
    // Appends made meanwhile are carried over after the rename.
    let only_appended = || match (&now, &old) {
        (Some(now), Some(old)) if how.carry_appends => only_appended_to(path, old, now),
        _ => Ok(false),
    };
    if !unchanged(path, now.as_ref())? && !only_appended()? {
        return Err(SafeFileError::Changed {
            path: path.to_path_buf(),
        });
    }
    std::fs::rename(&temp.path, path).map_err(SafeFileError::io("cannot replace", path))?;
    temp.placed = true;
    // The file is in place: what fails from here on is said, not an error.
    let mut after = Vec::new();
    if let Err(err) = lock.sync() {
        after.push(format!("the directory was not synced ({err})"));
    }
    if let (true, Some(old), Some(now)) = (how.carry_appends, &old, &now) {
        if let Err(err) = carry_over(path, old, now.bytes.len() as u64) {
            after.push(format!(
                "what another program appended meanwhile may not have been carried over ({err})"
            ));
        }
    }
    done.after = (!after.is_empty()).then(|| after.join("; "));
    Ok(done)
}

/// Removes the file at `path`, which the caller read as `expected` (a file
/// memd made whole and takes away again: uninstall), under the same lock as
/// [`replace`], backed up first. Nothing is removed, and
/// [`SafeFileError::Changed`] returned, when it is no longer what was read.
/// Returns the backup.
pub fn remove(path: &Path, expected: &Current) -> Result<PathBuf, SafeFileError> {
    let lock = DirLock::take(dir_of(path), path)?;
    let now = read_open(path)?.map(|(now, _)| now);
    let same = now
        .as_ref()
        .is_some_and(|now| now.identity == expected.identity && now.bytes == expected.bytes);
    if !same {
        return Err(SafeFileError::Changed {
            path: path.to_path_buf(),
        });
    }
    check_writable(path, now.as_ref())?;
    let backup = back_up(path, expected)?;
    // Last look, for a writer that does not lock.
    if !unchanged(path, now.as_ref())? {
        return Err(SafeFileError::Changed {
            path: path.to_path_buf(),
        });
    }
    std::fs::remove_file(path).map_err(SafeFileError::io("cannot remove", path))?;
    let _ = lock.sync();
    Ok(backup)
}

/// What was appended to the file read as `was`, now `identity` with
/// `bytes`: `None` when it is another file or was changed otherwise.
fn appended_since<'a>(was: &Current, identity: &Identity, bytes: &'a [u8]) -> Option<&'a [u8]> {
    let same_file = (identity.dev, identity.ino) == (was.identity.dev, was.identity.ino);
    (same_file && bytes.len() >= was.bytes.len() && bytes.starts_with(&was.bytes))
        .then(|| &bytes[was.bytes.len()..])
}

/// Whether the file at `path` is still `old`, read as `was`, with only
/// bytes appended to it since (their being carried over is then enough).
fn only_appended_to(path: &Path, old: &File, was: &Current) -> Result<bool, SafeFileError> {
    use std::os::unix::fs::FileExt;
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(err) => return Err(SafeFileError::io("cannot be read", path)(err)),
    };
    let open = old
        .metadata()
        .map_err(SafeFileError::io("cannot be read", path))?;
    if !meta.is_file() || (meta.dev(), meta.ino()) != (open.dev(), open.ino()) {
        return Ok(false);
    }
    if meta.len() < was.bytes.len() as u64 {
        return Ok(false);
    }
    let mut head = vec![0; was.bytes.len()];
    old.read_exact_at(&mut head, 0)
        .map_err(SafeFileError::io("cannot be read", path))?;
    Ok(head == was.bytes)
}

/// Carries over to the new file at `path` what a writer that does not
/// lock appended to the old one (`old`, read up to `from`) after the last
/// look before the rename: it had opened the old file before the rename,
/// and its write would otherwise be lost with it. Looked at twice, the
/// second time after a moment, for a writer that opened it just before.
fn carry_over(path: &Path, old: &File, mut from: u64) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    for pause in [0, 2] {
        std::thread::sleep(Duration::from_millis(pause));
        let len = old.metadata()?.len();
        if len <= from {
            continue;
        }
        let mut tail = vec![0; (len - from) as usize];
        old.read_exact_at(&mut tail, from)?;
        let mut new = File::options()
            .append(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)?;
        new.write_all(&tail)?;
        new.sync_all()?;
        from = len;
    }
    Ok(())
}

/// Reads `path`, lets `edit` decide the new content from what is there
/// (`None`: nothing to change), and replaces it, deciding again from the
/// new content when the file changed meanwhile (a few times at most).
/// Returns what was read and what was written, if anything.
pub fn update<E>(
    path: &Path,
    how: &Replace<'_>,
    mut edit: impl FnMut(Option<&Current>) -> Result<Option<Vec<u8>>, E>,
) -> Result<Updated, E>
where
    E: From<SafeFileError>,
{
    const TRIES: usize = 20;
    let mut tries = 0;
    loop {
        tries += 1;
        let current = match read(path) {
            Ok(current) => current,
            // It grew while it was read: a writer that does not lock.
            Err(SafeFileError::Changed { .. }) if tries < TRIES => {
                std::thread::sleep(Duration::from_millis(tries as u64));
                continue;
            }
            Err(err) => return Err(err.into()),
        };
        let Some(new) = edit(current.as_ref())? else {
            return Ok(Updated {
                before: current,
                written: None,
                replaced: Replaced::default(),
            });
        };
        match replace(path, current.as_ref(), &new, how) {
            Ok(replaced) => {
                return Ok(Updated {
                    before: current,
                    written: Some(new),
                    replaced,
                })
            }
            Err(SafeFileError::Changed { .. }) if tries < TRIES => {
                std::thread::sleep(Duration::from_millis(tries as u64));
            }
            Err(err) => return Err(err.into()),
        }
    }
}

/// What [`update`] did.
#[derive(Debug)]
pub struct Updated {
    /// The file as the edit that was applied saw it.
    pub before: Option<Current>,
    /// The bytes written, when the edit changed anything.
    pub written: Option<Vec<u8>>,
    /// What the replacement did besides.
    pub replaced: Replaced,
}

/// Copies `current`, the content of `path` as read, beside it under a name
/// no earlier backup has (`NAME.memd-backup-SECONDS`, then `-2`, `-3`…),
/// with the file's mode and group; where it went.
pub fn back_up(path: &Path, current: &Current) -> Result<PathBuf, SafeFileError> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    for n in 1..1000 {
        let mut name = path.as_os_str().to_owned();
        name.push(format!(".memd-backup-{stamp}"));
        if n > 1 {
            name.push(format!("-{n}"));
        }
        let backup = PathBuf::from(name);
        let opened = File::options()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&backup);
        let mut file = match opened {
            Ok(file) => file,
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(err) => return Err(SafeFileError::io("cannot back up", path)(err)),
        };
        let written = (|| {
            // SAFETY: fchown on a descriptor we own; -1 keeps the owner.
            let kept = unsafe { libc::fchown(file.as_raw_fd(), u32::MAX, current.gid) } == 0;
            let mode = if kept {
                current.mode
            } else {
                current.mode & !0o070
            };
            file.set_permissions(std::fs::Permissions::from_mode(mode & 0o777))?;
            file.write_all(&current.bytes)?;
            file.sync_all()
        })();
        if let Err(err) = written {
            let _ = std::fs::remove_file(&backup);
            return Err(SafeFileError::io("cannot back up", path)(err));
        }
        return Ok(backup);
    }
    Err(SafeFileError::io("cannot back up", path)(
        std::io::Error::other("no free backup name"),
    ))
}

/// The file `path` stands for: itself, or where a link at its end leads
/// when that is a regular file of this user's in a directory of this
/// user's (a settings file kept in a dotfiles repository, linked in by
/// stow). A link to anything else, or a chain that does not end, is
/// refused.
pub fn resolve(path: &Path) -> Result<PathBuf, SafeFileError> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(path.to_path_buf()),
        Err(err) => return Err(SafeFileError::io("cannot be read", path)(err)),
    };
    if !meta.file_type().is_symlink() {
        return Ok(path.to_path_buf());
    }
    let link = || SafeFileError::Link {
        path: path.to_path_buf(),
    };
    if meta.uid() != own_uid() {
        return Err(link());
    }
    let real = std::fs::canonicalize(path).map_err(|_| link())?;
    let target = std::fs::symlink_metadata(&real).map_err(|_| link())?;
    let dir_ours = std::fs::metadata(dir_of(&real)).is_ok_and(|d| d.uid() == own_uid());
    if target.is_file() && target.uid() == own_uid() && dir_ours {
        Ok(real)
    } else {
        Err(link())
    }
}

/// Refuses `path` when it, or any directory on the way to it from `root`,
/// is a link that leads out of `root` (a cloned repository whose `.claude`
/// points into the user's home). What does not exist yet is fine: it will
/// be created under a directory that was checked.
pub fn confine(root: &Path, path: &Path) -> Result<(), SafeFileError> {
    let real_root =
        std::fs::canonicalize(root).map_err(SafeFileError::io("cannot be read", root))?;
    let Ok(rest) = path.strip_prefix(root) else {
        return Err(SafeFileError::OutsideRoot {
            path: path.to_path_buf(),
            root: root.to_path_buf(),
            through: path.to_path_buf(),
        });
    };
    let mut at = root.to_path_buf();
    for part in rest.components() {
        at.push(part);
        match std::fs::canonicalize(&at) {
            Ok(real) if real.starts_with(&real_root) => {}
            Ok(_) => {
                return Err(SafeFileError::OutsideRoot {
                    path: path.to_path_buf(),
                    root: root.to_path_buf(),
                    through: at,
                })
            }
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                // A dangling link is refused too: creating through it would
                // land wherever it points.
                if std::fs::symlink_metadata(&at).is_ok() {
                    return Err(SafeFileError::OutsideRoot {
                        path: path.to_path_buf(),
                        root: root.to_path_buf(),
                        through: at,
                    });
                }
                return Ok(());
            }
            Err(err) => return Err(SafeFileError::io("cannot be read", &at)(err)),
        }
    }
    Ok(())
}

/// Makes sure `dir` is a directory of this user's, creating it (and what
/// is missing above it) with `mode` when absent. A link is refused unless
/// `may_be_link` (a root the user configured may be one); then where it
/// leads must be this user's.
pub fn own_dir(dir: &Path, mode: u32, may_be_link: bool) -> Result<(), SafeFileError> {
    use std::os::unix::fs::DirBuilderExt;
    let meta = match std::fs::symlink_metadata(dir) {
        Ok(meta) => meta,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(mode)
                .create(dir)
                .map_err(SafeFileError::io("cannot create", dir))?;
            std::fs::symlink_metadata(dir).map_err(SafeFileError::io("cannot be read", dir))?
        }
        Err(err) => return Err(SafeFileError::io("cannot be read", dir)(err)),
    };
    let meta = if meta.file_type().is_symlink() {
        if !may_be_link {
            return Err(SafeFileError::Link {
                path: dir.to_path_buf(),
            });
        }
        std::fs::metadata(dir).map_err(SafeFileError::io("cannot be read", dir))?
    } else {
        meta
    };
    is_own(dir, &meta, true)
}

/// Refuses a path where a file memd opens itself (the store's database)
/// would not be a regular file of this user's: a link, another type,
/// another user's. Nothing there is fine.
pub fn check_own_file(path: &Path) -> Result<(), SafeFileError> {
    match std::fs::symlink_metadata(path) {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(SafeFileError::io("cannot be read", path)(err)),
        Ok(meta) if meta.file_type().is_symlink() => Err(SafeFileError::Link {
            path: path.to_path_buf(),
        }),
        Ok(meta) => is_own(path, &meta, false),
    }
}

/// Refuses `meta` (of `path`) unless it is a regular file (a directory
/// when `dir`) owned by this user.
fn is_own(path: &Path, meta: &std::fs::Metadata, dir: bool) -> Result<(), SafeFileError> {
    let right_type = if dir { meta.is_dir() } else { meta.is_file() };
    if !right_type {
        return Err(SafeFileError::NotRegular {
            path: path.to_path_buf(),
            kind: type_name(meta),
        });
    }
    if meta.uid() != own_uid() {
        return Err(SafeFileError::OtherOwner {
            path: path.to_path_buf(),
            uid: meta.uid(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn mode_of(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().mode() & 0o777
    }

    #[test]
    fn a_replacement_keeps_the_mode_and_leaves_nothing_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        std::fs::write(&path, "{}").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        let current = read(&path).unwrap().unwrap();
        replace(&path, Some(&current), b"{\"a\": 1}", &Replace::default()).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        assert_eq!(std::fs::read(&path).unwrap(), b"{\"a\": 1}");
        assert_eq!(mode_of(&path), 0o640);
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
        // A new file gets the mode asked for.
        let new = dir.path().join("new.json");
        let how = Replace {
            new_mode: 0o600,
            ..Replace::default()
        };
        replace(&new, None, b"{}", &how).unwrap();
        assert_eq!(mode_of(&new), 0o600);
    }

    #[test]
    fn a_removal_backs_the_file_up_and_refuses_one_changed_since_it_was_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("memd.js");
        std::fs::write(&path, "ours").unwrap();
        let current = read(&path).unwrap().unwrap();
        std::fs::write(&path, "theirs now").unwrap();
        let err = remove(&path, &current).unwrap_err();
        assert!(matches!(err, SafeFileError::Changed { .. }), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), b"theirs now");
        let current = read(&path).unwrap().unwrap();
        let backup = remove(&path, &current).unwrap();
        assert!(!path.exists());
        assert_eq!(std::fs::read(backup).unwrap(), b"theirs now");
    }

    /// Appends `bytes` to `path` as another program does, without memd's
    /// lock.
    fn append(path: &Path, bytes: &[u8]) {
        std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .unwrap()
            .write_all(bytes)
            .unwrap();
    }

    #[test]
    fn a_file_changed_since_it_was_read_is_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.yaml");
        std::fs::write(&path, "a\n").unwrap();
        let current = read(&path).unwrap().unwrap();
        append(&path, b"b\n");
        let err = replace(&path, Some(&current), b"c\n", &Replace::default()).unwrap_err();
        assert!(matches!(err, SafeFileError::Changed { .. }), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), b"a\nb\n");
        // Created meanwhile where there was nothing: not replaced either.
        let fresh = dir.path().join("fresh");
        std::fs::write(&fresh, "theirs").unwrap();
        assert!(matches!(
            replace(&fresh, None, b"mine", &Replace::default()),
            Err(SafeFileError::Changed { .. })
        ));
        // update decides again from what is there now.
        let updated = update(&path, &Replace::default(), |c| {
            let mut bytes = c.map(|c| c.bytes.clone()).unwrap_or_default();
            bytes.extend_from_slice(b"c\n");
            Ok::<_, SafeFileError>(Some(bytes))
        })
        .unwrap();
        assert_eq!(updated.written.as_deref(), Some(&b"a\nb\nc\n"[..]));
    }

    #[test]
    fn where_appends_are_carried_what_was_appended_since_the_read_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.yaml");
        std::fs::write(&path, "a\n").unwrap();
        let current = read(&path).unwrap().unwrap();
        append(&path, b"theirs\n");
        let carry = Replace {
            carry_appends: true,
            ..Replace::default()
        };
        replace(&path, Some(&current), b"a\nmine\n", &carry).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"a\nmine\ntheirs\n");
        // What was changed otherwise than by appending is still a change.
        let current = read(&path).unwrap().unwrap();
        std::fs::write(&path, "a\nedited\ntheirs\nmore\n").unwrap();
        let err = replace(&path, Some(&current), b"x\n", &carry).unwrap_err();
        assert!(matches!(err, SafeFileError::Changed { .. }), "{err}");
        let current = read(&path).unwrap().unwrap();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .write_all(b"b\nmine\ntheirs\nmore\nlonger\n")
            .unwrap();
        let err = replace(&path, Some(&current), b"x\n", &carry).unwrap_err();
        assert!(matches!(err, SafeFileError::Changed { .. }), "{err}");
        // The last look: the old file grew by appending only.
        let current = read(&path).unwrap().unwrap();
        let (_, old) = read_open(&path).unwrap().unwrap();
        assert!(only_appended_to(&path, &old, &current).unwrap());
        append(&path, b"late\n");
        assert!(only_appended_to(&path, &old, &current).unwrap());
        std::fs::write(dir.path().join("other"), &current.bytes).unwrap();
        std::fs::rename(dir.path().join("other"), &path).unwrap();
        assert!(!only_appended_to(&path, &old, &current).unwrap());
    }

    #[test]
    fn what_was_appended_to_the_old_file_after_the_rename_is_carried_over() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.yaml");
        std::fs::write(&path, "a\n").unwrap();
        // A writer that opened the file before memd replaced it...
        let mut late = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        let (_, old) = read_open(&path).unwrap().unwrap();
        std::fs::write(dir.path().join("new"), "a\nmine\n").unwrap();
        std::fs::rename(dir.path().join("new"), &path).unwrap();
        // ...writes after it.
        late.write_all(b"theirs\n").unwrap();
        carry_over(&path, &old, 2).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"a\nmine\ntheirs\n");
        carry_over(&path, &old, 9).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"a\nmine\ntheirs\n");
    }

    #[test]
    fn links_read_only_files_and_failed_checks_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        std::fs::write(&target, "keep").unwrap();
        let link = dir.path().join("link");
        symlink(&target, &link).unwrap();
        assert!(matches!(read(&link), Err(SafeFileError::Link { .. })));
        assert_eq!(resolve(&link).unwrap(), target.canonicalize().unwrap());
        let ro = dir.path().join("ro");
        std::fs::write(&ro, "ro").unwrap();
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o444)).unwrap();
        let current = read(&ro).unwrap().unwrap();
        assert!(matches!(
            replace(&ro, Some(&current), b"x", &Replace::default()),
            Err(SafeFileError::ReadOnly { .. })
        ));
        let refuse = |_: &[u8]| Err("never".to_string());
        let how = Replace {
            check: Some(&refuse),
            ..Replace::default()
        };
        let current = read(&target).unwrap().unwrap();
        assert!(matches!(
            replace(&target, Some(&current), b"x", &how),
            Err(SafeFileError::Unreadable { .. })
        ));
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 3);
    }

    #[test]
    fn a_huge_file_is_refused_without_reading_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sparse.yaml");
        let file = File::create(&path).unwrap();
        file.set_len(1 << 40).unwrap();
        assert!(matches!(read(&path), Err(SafeFileError::TooLarge { .. })));
    }

    #[test]
    fn a_backup_is_made_only_once_every_check_passed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        std::fs::write(&path, "{}").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
        let current = read(&path).unwrap().unwrap();
        let how = Replace {
            back_up: true,
            ..Replace::default()
        };
        assert!(replace(&path, Some(&current), b"[]", &how).is_err());
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no backup"
        );
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let current = read(&path).unwrap().unwrap();
        let done = replace(&path, Some(&current), b"[]", &how).unwrap();
        assert_eq!(std::fs::read(done.backup.unwrap()).unwrap(), b"{}");
    }

    #[test]
    fn confine_refuses_every_link_out_of_the_root() {
        let outside = tempfile::tempdir().unwrap();
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("in")).unwrap();
        symlink(outside.path(), root.path().join("out")).unwrap();
        symlink(root.path().join("in"), root.path().join("alias")).unwrap();
        symlink(outside.path().join("nothing"), root.path().join("dangling")).unwrap();
        assert!(confine(root.path(), &root.path().join("in/new/file")).is_ok());
        assert!(confine(root.path(), &root.path().join("alias/file")).is_ok());
        for bad in ["out/file", "dangling", "dangling/x"] {
            let err = confine(root.path(), &root.path().join(bad)).unwrap_err();
            assert!(
                matches!(err, SafeFileError::OutsideRoot { .. }),
                "{bad}: {err}"
            );
        }
    }
}
