//! A blocking connection to the daemon.

use std::io::ErrorKind;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::peer;
use memd::protocol::{
    decode, read_frame, write_frame, Encoding, FrameError, Request, RequestBody, Response,
    MAX_FRAME_BYTES,
};

/// How long to wait for an answer (a reload or an evaluation may take a
/// while).
const TIMEOUT: Duration = Duration::from_secs(300);

/// Why a request failed.
#[derive(Debug)]
pub enum ClientError {
    /// Nothing listens on the socket.
    NotRunning(PathBuf),
    /// Another user's process answers on the socket: nothing is sent.
    OtherUser {
        socket: PathBuf,
        peer: u32,
        own: u32,
    },
    /// The exchange failed.
    Frame(FrameError),
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientError::NotRunning(p) => write!(f, "memd is not running on {}", p.display()),
            ClientError::OtherUser { socket, peer, own } => write!(
                f,
                "refusing to talk to {}: it is served by uid {peer}, not by you (uid {own}); \
                 another user may have placed it there: remove it, or use a private socket \
                 (--socket, MEMD_SOCKET, or a private XDG_RUNTIME_DIR)",
                socket.display()
            ),
            ClientError::Frame(e) => write!(f, "talking to memd: {e}"),
        }
    }
}

impl std::error::Error for ClientError {}

impl From<FrameError> for ClientError {
    fn from(e: FrameError) -> Self {
        ClientError::Frame(e)
    }
}

/// One connection.
pub struct Client {
    stream: UnixStream,
}

impl Client {
    /// Connects to the socket, and makes sure the process on the other end
    /// runs as this user before anything is sent.
    pub fn connect(path: &Path) -> Result<Client, ClientError> {
        match UnixStream::connect(path) {
            Ok(stream) => {
                let own = peer::own_uid();
                let peer = peer::peer_uid(&stream).map_err(|e| ClientError::Frame(e.into()))?;
                if peer != own {
                    return Err(ClientError::OtherUser {
                        socket: path.to_path_buf(),
                        peer,
                        own,
                    });
                }
                let _ = stream.set_read_timeout(Some(TIMEOUT));
                let _ = stream.set_write_timeout(Some(TIMEOUT));
                Ok(Client { stream })
            }
            Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::ConnectionRefused) => {
                Err(ClientError::NotRunning(path.to_path_buf()))
            }
            Err(e) => Err(ClientError::Frame(FrameError::Io(e))),
        }
    }

    /// Connects, with `timeout` on every read and write (for hooks).
    pub fn connect_with_timeout(path: &Path, timeout: Duration) -> Result<Client, ClientError> {
        let client = Self::connect(path)?;
        let _ = client.stream.set_read_timeout(Some(timeout));
        let _ = client.stream.set_write_timeout(Some(timeout));
        Ok(client)
    }

    /// Sends one request and reads its response.
    pub fn request(&mut self, request: RequestBody) -> Result<Response, ClientError> {
        write_frame(&mut self.stream, Encoding::Postcard, &Request::new(request))?;
        let (encoding, body) = read_frame(&mut self.stream, MAX_FRAME_BYTES)?;
        Ok(decode(encoding, &body)?)
    }
}
