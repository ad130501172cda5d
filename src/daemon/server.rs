//! The socket server: one task per connection, each reading frames with
//! timeouts and answering in the request's encoding. A bad frame costs its
//! connection, never the daemon; a silent client costs only its own task.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::{watch, Semaphore};
use tokio::task::JoinSet;

use crate::protocol::{
    decode, encode, payload_len, peek_version, split_payload, Encoding, ErrorKind, FrameError,
    Request, Response, PROTOCOL_VERSION,
};

use super::handler::Handler;

/// Limits of the server.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Connections served at once; more are told so and closed.
    pub max_connections: usize,
    /// How long a connection may sit between requests, or take to send the
    /// rest of a frame, before it is closed.
    pub read_timeout: Duration,
    /// Largest payload accepted.
    pub max_frame: u32,
    /// How long in-flight requests get to finish at shutdown.
    pub shutdown_grace: Duration,
}

/// Serves connections on `listener` until `shutdown` turns true, then lets
/// in-flight requests finish (within the grace period).
pub async fn serve(
    listener: UnixListener,
    handler: Handler,
    limits: Limits,
    own_uid: u32,
    mut shutdown: watch::Receiver<bool>,
) {
    let permits = Arc::new(Semaphore::new(limits.max_connections));
    let mut tasks = JoinSet::new();
    loop {
        tokio::select! {
            _ = shutdown.changed() => break,
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                match stream.peer_cred() {
                    Ok(cred) if cred.uid() == own_uid => {}
                    Ok(cred) => {
                        tracing::warn!("refused a connection from uid {}", cred.uid());
                        continue;
                    }
                    Err(err) => {
                        tracing::warn!("refused a connection without peer credentials: {err}");
                        continue;
                    }
                }
                let Ok(permit) = permits.clone().try_acquire_owned() else {
                    tasks.spawn(refuse_busy(stream, limits.max_connections));
                    continue;
                };
                let handler = handler.clone();
                let limits = limits.clone();
                let shutdown = shutdown.clone();
                tasks.spawn(async move {
                    connection(stream, handler, limits, shutdown).await;
                    drop(permit);
                });
            }
        }
    }
    let drain = async { while tasks.join_next().await.is_some() {} };
    if tokio::time::timeout(limits.shutdown_grace, drain)
        .await
        .is_err()
    {
        tracing::warn!("some connections did not finish within the grace period");
    }
}

async fn refuse_busy(mut stream: UnixStream, max: usize) {
    let response = Response::error(
        ErrorKind::Internal,
        format!("memd is serving its maximum of {max} connections; try again"),
    );
    if let Ok(frame) = encode(Encoding::Json, &response) {
        let _ = stream.write_all(&frame).await;
    }
}

/// Serves one connection: frame after frame until it closes, misbehaves,
/// idles past the timeout, or the daemon shuts down (after the request in
/// hand is answered).
async fn connection(
    mut stream: UnixStream,
    handler: Handler,
    limits: Limits,
    mut shutdown: watch::Receiver<bool>,
) {
    loop {
        let mut header = [0u8; 4];
        tokio::select! {
            _ = shutdown.changed() => return,
            read = tokio::time::timeout(limits.read_timeout, stream.read_exact(&mut header)) => {
                if !matches!(read, Ok(Ok(_))) {
                    return; // closed, failed or idle too long
                }
            }
        }
        let len = match payload_len(header, limits.max_frame) {
            Ok(len) => len,
            Err(err) => {
                let kind = match err {
                    FrameError::TooLarge { .. } => ErrorKind::TooLarge,
                    _ => ErrorKind::BadRequest,
                };
                // The stream cannot be resynchronised: answer, then close.
                reply(
                    &mut stream,
                    Encoding::Json,
                    &Response::error(kind, err.to_string()),
                )
                .await;
                return;
            }
        };
        let mut payload = vec![0u8; len];
        match tokio::time::timeout(limits.read_timeout, stream.read_exact(&mut payload)).await {
            Ok(Ok(_)) => {}
            _ => return, // a half-sent frame: the client pays, nobody else
        }
        let (encoding, body) = match split_payload(&payload) {
            Ok(parts) => parts,
            Err(err) => {
                reply(
                    &mut stream,
                    Encoding::Json,
                    &Response::error(ErrorKind::BadRequest, err.to_string()),
                )
                .await;
                return;
            }
        };
        let response = match peek_version(encoding, body) {
            Some(version) if version != PROTOCOL_VERSION => Response::error(
                ErrorKind::UnsupportedVersion,
                format!(
                    "the client speaks protocol version {version}; this daemon speaks version {PROTOCOL_VERSION}: upgrade the older of the two"
                ),
            ),
            None => Response::error(
                ErrorKind::BadRequest,
                "the request carries no protocol version (expected {\"version\": 1, \"request\": ...})",
            ),
            Some(_) => match decode::<Request>(encoding, body) {
                Ok(request) => {
                    let handler = handler.clone();
                    match tokio::task::spawn_blocking(move || handler.handle(request.request)).await {
                        Ok(response) => response,
                        Err(err) => Response::error(ErrorKind::Internal, format!("the request failed: {err}")),
                    }
                }
                Err(err) => Response::error(ErrorKind::BadRequest, err.to_string()),
            },
        };
        if !reply(&mut stream, encoding, &response).await {
            return;
        }
    }
}

/// Writes a response; false when the connection is gone.
async fn reply(stream: &mut UnixStream, encoding: Encoding, response: &Response) -> bool {
    let frame = match encode(encoding, response) {
        Ok(frame) => frame,
        Err(err) => match encode(
            encoding,
            &Response::error(ErrorKind::Internal, err.to_string()),
        ) {
            Ok(frame) => frame,
            Err(_) => return false,
        },
    };
    stream.write_all(&frame).await.is_ok()
}

/// The uid that owns `path` (the daemon's own, for the socket it bound).
pub fn owner_uid(path: &Path) -> std::io::Result<u32> {
    Ok(std::fs::metadata(path)?.uid())
}
