//! Where the socket is, decided the same way by `memd` and `memctl` with the
//! standard library alone: `--socket`, else `$MEMD_SOCKET`, else
//! `$XDG_RUNTIME_DIR/memd/memd.sock`, else on macOS `$TMPDIR/memd.sock`
//! (there `$TMPDIR` is private to the user, stable, and short
//! enough for the 104-byte limit of a socket path; launchd creates the
//! socket in it, which it could not do in a directory of ours), else
//! `$TMPDIR/memd-$USER/memd.sock`.

use std::path::PathBuf;

/// Environment variable naming the socket.
pub const ENV_SOCKET: &str = "MEMD_SOCKET";

/// The socket path, given the `--socket` flag if any.
pub fn socket_path(flag: Option<PathBuf>) -> PathBuf {
    if let Some(path) = flag {
        return path;
    }
    if let Some(path) = std::env::var_os(ENV_SOCKET).filter(|p| !p.is_empty()) {
        return PathBuf::from(path);
    }
    default_socket_path()
}

/// The socket path when neither `--socket` nor `$MEMD_SOCKET` names one.
pub fn default_socket_path() -> PathBuf {
    if let Some(dir) = std::env::var_os("XDG_RUNTIME_DIR").filter(|p| !p.is_empty()) {
        return PathBuf::from(dir).join("memd").join("memd.sock");
    }
    if cfg!(target_os = "macos") {
        return std::env::temp_dir().join("memd.sock");
    }
    let user = std::env::var("USER").unwrap_or_else(|_| "user".into());
    std::env::temp_dir()
        .join(format!("memd-{user}"))
        .join("memd.sock")
}
