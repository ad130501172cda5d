//! The socket server: one task per connection, each reading frames with
//! timeouts and answering in the request's encoding. A bad frame costs its
//! connection, never the daemon; a silent client costs only its own task.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;

use crate::protocol::{
    decode, encode, payload_len, peek_version, split_payload, Encoding, ErrorKind, FrameError,
    Request, Response, PROTOCOL_VERSION,
};

use super::handler::Handler;

/// Limits of the server.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Connections served at once, the reserve included; more are told
    /// `busy` and closed.
    pub max_connections: usize,
    /// How long a connection may sit between requests, or take to send the
    /// rest of a frame, before it is closed.
    pub read_timeout: Duration,
    /// How long a client may take to read an answer before it is closed.
    pub write_timeout: Duration,
    /// Largest payload accepted.
    pub max_frame: u32,
    /// How long in-flight requests get to finish at shutdown.
    pub shutdown_grace: Duration,
}

/// The share of the connections kept for fresh clients when the rest are
/// taken (by stalled ones, say): 1 in 8.
const RESERVE_SHARE: usize = 8;
/// A connection served from the reserve answers one request, and gets this
/// long for each read and write.
const RESERVE_TIMEOUT: Duration = Duration::from_secs(1);
/// A request this large gives its memory back once answered.
const LARGE_FRAME: usize = 1024 * 1024;
/// How long a refused client gets to read why.
const REFUSAL_TIMEOUT: Duration = Duration::from_millis(500);

/// The slots of the server: the ordinary ones and the reserve.
struct Slots {
    ordinary: Arc<Semaphore>,
    reserve: Arc<Semaphore>,
}

impl Slots {
    fn new(max: usize) -> Slots {
        let reserve = (max / RESERVE_SHARE).max(1).min(max.saturating_sub(1));
        Slots {
            ordinary: Arc::new(Semaphore::new(max - reserve)),
            reserve: Arc::new(Semaphore::new(reserve)),
        }
    }

    /// A slot and the limits it is served under, or `None` when all are taken.
    fn take(&self, limits: &Limits) -> Option<(OwnedSemaphorePermit, Limits, bool)> {
        if let Ok(permit) = self.ordinary.clone().try_acquire_owned() {
            return Some((permit, limits.clone(), false));
        }
        let permit = self.reserve.clone().try_acquire_owned().ok()?;
        let limits = Limits {
            read_timeout: limits.read_timeout.min(RESERVE_TIMEOUT),
            write_timeout: limits.write_timeout.min(RESERVE_TIMEOUT),
            ..limits.clone()
        };
        Some((permit, limits, true))
    }
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
    let slots = Slots::new(limits.max_connections.max(1));
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
                        let message = format!(
                            "this memd serves uid {own_uid} only; you are uid {}: start your own (memd serve) on a socket of yours",
                            cred.uid()
                        );
                        tasks.spawn(refuse(stream, ErrorKind::Forbidden, message));
                        continue;
                    }
                    Err(err) => {
                        tracing::warn!("refused a connection without peer credentials: {err}");
                        continue;
                    }
                }
                let Some((permit, limits, reserve)) = slots.take(&limits) else {
                    let message = format!(
                        "memd is serving its maximum of {} connections; try again",
                        limits.max_connections
                    );
                    tasks.spawn(refuse(stream, ErrorKind::Busy, message));
                    continue;
                };
                let handler = handler.clone();
                let shutdown = shutdown.clone();
                tasks.spawn(async move {
                    connection(stream, handler, limits, reserve, shutdown).await;
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

/// Tells a client why it is not served, then closes.
async fn refuse(mut stream: UnixStream, kind: ErrorKind, message: String) {
    let response = Response::error(kind, message);
    if let Ok(frame) = encode(Encoding::Json, &response) {
        let _ = tokio::time::timeout(REFUSAL_TIMEOUT, stream.write_all(&frame)).await;
    }
}

/// Serves one connection: frame after frame until it closes, misbehaves,
/// idles past the timeout, stops reading its answers, or the daemon shuts
/// down (after the request in hand is answered). A connection from the
/// reserve is served one request.
async fn connection(
    mut stream: UnixStream,
    handler: Handler,
    limits: Limits,
    reserve: bool,
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
                    limits.write_timeout,
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
                    limits.write_timeout,
                )
                .await;
                return;
            }
        };
        // What the request leaves for the recorder is handed over once the
        // reply is written (or could not be), when this is dropped.
        let mut deferred = None;
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
                    match tokio::task::spawn_blocking(move || handler.handle_deferring(request.request)).await {
                        Ok((response, after)) => {
                            deferred = Some(after);
                            response
                        }
                        Err(err) => Response::error(ErrorKind::Internal, format!("the request failed: {err}")),
                    }
                }
                Err(err) => Response::error(ErrorKind::BadRequest, err.to_string()),
            },
        };
        let answered = reply(&mut stream, encoding, &response, limits.write_timeout).await;
        drop(deferred);
        if len > LARGE_FRAME {
            // Its buffers, the decoded request and the engine's work on it
            // are freed by now: give the memory back rather than keep
            // hundreds of MB resident after a few large frames.
            drop((payload, response));
            super::release_freed_memory();
        }
        if !answered || reserve {
            return;
        }
    }
}

/// Writes a response; false when the connection is gone or the client did
/// not read it within `timeout`.
async fn reply(
    stream: &mut UnixStream,
    encoding: Encoding,
    response: &Response,
    timeout: Duration,
) -> bool {
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
    matches!(
        tokio::time::timeout(timeout, stream.write_all(&frame)).await,
        Ok(Ok(()))
    )
}
