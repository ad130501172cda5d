//! Socket activation: a listening socket handed over by the service manager.
//!
//! - systemd passes it as fd 3 with `LISTEN_FDS`/`LISTEN_PID` (read with
//!   `listenfd`); `systemd/memd.socket` creates it.
//! - launchd passes it through `launch_activate_socket` (read with `raunch`,
//!   macOS only), under the name [`LAUNCHD_SOCKET_NAME`] of the plist's
//!   `Sockets` dictionary; `launchd/dev.memd.plist` creates it.
//!
//! Without either, [`inherited_listener`] answers `None` and memd binds its
//! own socket.

use std::os::unix::net::UnixListener;
use std::path::PathBuf;

/// The key of memd's socket in the LaunchAgent's `Sockets` dictionary.
pub const LAUNCHD_SOCKET_NAME: &str = "Listeners";

/// Why an inherited socket cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ActivationError {
    /// The service manager passed something memd cannot serve on (not a
    /// listening Unix socket, or it cannot be duplicated).
    #[error("cannot use the socket passed by {manager}: {source}")]
    Unusable {
        manager: &'static str,
        source: std::io::Error,
    },
    /// The socket has no path in the file system (abstract or unnamed).
    #[error("the socket passed by {manager} has no path in the file system")]
    NoPath { manager: &'static str },
}

/// The listening socket the service manager handed over, with its path;
/// `None` when memd was started by hand.
pub fn inherited_listener() -> Result<Option<(UnixListener, PathBuf)>, ActivationError> {
    if let Some(listener) = from_systemd()? {
        return with_path(listener, "systemd").map(Some);
    }
    match from_launchd()? {
        Some(listener) => with_path(listener, "launchd").map(Some),
        None => Ok(None),
    }
}

fn from_systemd() -> Result<Option<UnixListener>, ActivationError> {
    listenfd::ListenFd::from_env()
        .take_unix_listener(0)
        .map_err(|source| ActivationError::Unusable {
            manager: "systemd",
            source,
        })
}

#[cfg(target_os = "macos")]
fn from_launchd() -> Result<Option<UnixListener>, ActivationError> {
    use std::os::fd::{FromRawFd, OwnedFd};

    let fds = match raunch::activate_socket(LAUNCHD_SOCKET_NAME) {
        Ok(fds) => fds,
        // Started by hand, or by a plist without memd's socket.
        Err(raunch::Error::NotManaged) => return Ok(None),
        Err(raunch::Error::NotInPlist) => {
            tracing::info!("launchd passed no socket named {LAUNCHD_SOCKET_NAME}; binding our own");
            return Ok(None);
        }
        Err(err) => {
            tracing::warn!("launchd socket activation failed ({err}); binding our own");
            return Ok(None);
        }
    };
    // SAFETY: launchd hands these descriptors to this process once; nothing
    // else owns them, so each becomes owned (and closed) exactly once here.
    let mut owned = fds
        .into_iter()
        .map(|fd| unsafe { OwnedFd::from_raw_fd(fd) });
    // A Unix socket entry yields one descriptor; any others are closed.
    let Some(fd) = owned.next() else {
        return Ok(None);
    };
    // launchd's descriptor may be inherited by programs memd runs (the
    // evaluator's judge); a duplicate made by the standard library is
    // close-on-exec, and the original is closed when `fd` drops.
    let listener = UnixListener::from(fd);
    listener
        .try_clone()
        .map(Some)
        .map_err(|source| ActivationError::Unusable {
            manager: "launchd",
            source,
        })
}

#[cfg(not(target_os = "macos"))]
fn from_launchd() -> Result<Option<UnixListener>, ActivationError> {
    Ok(None)
}

fn with_path(
    listener: UnixListener,
    manager: &'static str,
) -> Result<(UnixListener, PathBuf), ActivationError> {
    let addr = listener
        .local_addr()
        .map_err(|source| ActivationError::Unusable { manager, source })?;
    let path = addr
        .as_pathname()
        .filter(|p| !p.as_os_str().is_empty())
        .ok_or(ActivationError::NoPath { manager })?
        .to_path_buf();
    Ok((listener, path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bound_listener_is_taken_with_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        let listener = UnixListener::bind(&path).unwrap();
        let (_, got) = with_path(listener, "test").unwrap();
        assert_eq!(got, path);
    }

    #[test]
    fn an_unnamed_socket_is_refused() {
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        let listener = UnixListener::from(std::os::fd::OwnedFd::from(a));
        let err = with_path(listener, "test").unwrap_err();
        assert!(matches!(err, ActivationError::NoPath { .. }), "{err}");
    }

    #[test]
    fn started_by_hand_there_is_nothing_to_inherit() {
        // The test process has no LISTEN_FDS for it and no launchd job.
        assert!(inherited_listener().unwrap().is_none());
    }
}
