//! Frames: `[len: u32 BE][encoding: u8][body]`, where `len` counts the
//! encoding byte and the body. The length is checked against the limit
//! before anything is allocated.

use std::io::{Read, Write};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// The default limit on a frame's payload.
pub const MAX_FRAME_BYTES: u32 = 16 * 1024 * 1024;

/// How a payload is encoded; the answer uses the request's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// postcard: compact, what `memctl` uses.
    Postcard = 1,
    /// JSON: so a hook in any language can talk to the socket.
    Json = 2,
}

impl Encoding {
    /// The encoding named by a payload's first byte.
    pub fn from_byte(byte: u8) -> Option<Encoding> {
        match byte {
            1 => Some(Encoding::Postcard),
            2 => Some(Encoding::Json),
            _ => None,
        }
    }
}

/// What can go wrong with a frame.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The connection failed or closed mid-frame.
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
    /// The announced length is over the limit.
    #[error("frame of {len} bytes is over the {max}-byte limit")]
    TooLarge { len: u32, max: u32 },
    /// A zero-length payload has no encoding byte.
    #[error("empty frame: a payload starts with its encoding byte (1 postcard, 2 JSON)")]
    Empty,
    /// The first payload byte is not a known encoding.
    #[error("unknown encoding byte {0}: expected 1 (postcard) or 2 (JSON)")]
    UnknownEncoding(u8),
    /// The body does not decode as the expected message.
    #[error("cannot decode the {encoding:?} body: {message}")]
    Decode { encoding: Encoding, message: String },
    /// A message could not be encoded.
    #[error("cannot encode: {0}")]
    Encode(String),
}

/// Encodes `message` as a whole frame.
pub fn encode<T: Serialize>(encoding: Encoding, message: &T) -> Result<Vec<u8>, FrameError> {
    let mut frame = vec![0u8; 4];
    frame.push(encoding as u8);
    match encoding {
        Encoding::Postcard => {
            let body =
                postcard::to_allocvec(message).map_err(|e| FrameError::Encode(e.to_string()))?;
            frame.extend_from_slice(&body);
        }
        Encoding::Json => serde_json::to_writer(&mut frame, message)
            .map_err(|e| FrameError::Encode(e.to_string()))?,
    }
    let len = u32::try_from(frame.len() - 4)
        .map_err(|_| FrameError::Encode("message too large".into()))?;
    frame[..4].copy_from_slice(&len.to_be_bytes());
    Ok(frame)
}

/// Decodes a frame's body (the payload after its encoding byte).
pub fn decode<T: DeserializeOwned>(encoding: Encoding, body: &[u8]) -> Result<T, FrameError> {
    let result = match encoding {
        Encoding::Postcard => postcard::from_bytes(body).map_err(|e| e.to_string()),
        Encoding::Json => serde_json::from_slice(body).map_err(|e| e.to_string()),
    };
    result.map_err(|message| FrameError::Decode { encoding, message })
}

#[derive(Deserialize)]
struct VersionProbe {
    version: Option<u32>,
}

/// The protocol version a request body carries, read without decoding the
/// rest (which may be of another version). `None` when it has none.
pub fn peek_version(encoding: Encoding, body: &[u8]) -> Option<u32> {
    match encoding {
        Encoding::Postcard => postcard::take_from_bytes::<u32>(body).ok().map(|(v, _)| v),
        Encoding::Json => serde_json::from_slice::<VersionProbe>(body).ok()?.version,
    }
}

/// Checks a frame header: the payload length, within `max`.
pub fn payload_len(header: [u8; 4], max: u32) -> Result<usize, FrameError> {
    let len = u32::from_be_bytes(header);
    if len > max {
        return Err(FrameError::TooLarge { len, max });
    }
    if len == 0 {
        return Err(FrameError::Empty);
    }
    Ok(len as usize)
}

/// Splits a payload into its encoding and body.
pub fn split_payload(payload: &[u8]) -> Result<(Encoding, &[u8]), FrameError> {
    let (&first, body) = payload.split_first().ok_or(FrameError::Empty)?;
    let encoding = Encoding::from_byte(first).ok_or(FrameError::UnknownEncoding(first))?;
    Ok((encoding, body))
}

/// Reads one frame (blocking): its encoding and body.
pub fn read_frame(reader: &mut impl Read, max: u32) -> Result<(Encoding, Vec<u8>), FrameError> {
    let mut header = [0u8; 4];
    reader.read_exact(&mut header)?;
    let len = payload_len(header, max)?;
    let mut payload = vec![0u8; len];
    reader.read_exact(&mut payload)?;
    let (encoding, _) = split_payload(&payload)?;
    payload.remove(0);
    Ok((encoding, payload))
}

/// Writes one message as a frame (blocking).
pub fn write_frame<T: Serialize>(
    writer: &mut impl Write,
    encoding: Encoding,
    message: &T,
) -> Result<(), FrameError> {
    writer.write_all(&encode(encoding, message)?)?;
    writer.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Query, Request, RequestBody, PROTOCOL_VERSION};

    fn request() -> Request {
        Request {
            version: PROTOCOL_VERSION,
            request: RequestBody::Query(Query {
                task: "implement webhook idempotency — ✓".into(),
                ..Query::default()
            }),
        }
    }

    #[test]
    fn frames_round_trip_in_both_encodings() {
        for encoding in [Encoding::Postcard, Encoding::Json] {
            let frame = encode(encoding, &request()).unwrap();
            assert_eq!(
                u32::from_be_bytes(frame[..4].try_into().unwrap()) as usize,
                frame.len() - 4
            );
            let (enc, body) = read_frame(&mut &frame[..], MAX_FRAME_BYTES).unwrap();
            assert_eq!(enc, encoding);
            assert_eq!(peek_version(enc, &body), Some(PROTOCOL_VERSION));
            let back: Request = decode(enc, &body).unwrap();
            assert_eq!(back, request());
        }
    }

    #[test]
    fn json_requests_are_plain() {
        let body = br#"{"version": 1, "request": "ping"}"#;
        let req: Request = decode(Encoding::Json, body).unwrap();
        assert_eq!(req.request, RequestBody::Ping);
        let body = br#"{"version": 1, "request": {"query": {"task": "x", "agent": "qa"}}}"#;
        let req: Request = decode(Encoding::Json, body).unwrap();
        let RequestBody::Query(q) = req.request else {
            panic!()
        };
        assert_eq!(q.agent.as_deref(), Some("qa"));
        assert_eq!(q.budget_chars, crate::protocol::DEFAULT_BUDGET_CHARS);
    }

    #[test]
    fn oversized_and_malformed_headers_are_refused_before_allocating() {
        let header = (MAX_FRAME_BYTES + 1).to_be_bytes();
        assert!(matches!(
            payload_len(header, MAX_FRAME_BYTES),
            Err(FrameError::TooLarge { .. })
        ));
        assert!(matches!(
            payload_len([0; 4], MAX_FRAME_BYTES),
            Err(FrameError::Empty)
        ));
        assert!(matches!(
            split_payload(&[9, 1, 2]),
            Err(FrameError::UnknownEncoding(9))
        ));
        let mut short: &[u8] = &[0, 0, 0, 10, 1, 2];
        assert!(matches!(
            read_frame(&mut short, MAX_FRAME_BYTES),
            Err(FrameError::Io(_))
        ));
    }

    #[test]
    fn versions_are_read_from_bodies_of_any_shape() {
        assert_eq!(
            peek_version(
                Encoding::Json,
                br#"{"version": 7, "request": {"future": 1}}"#
            ),
            Some(7)
        );
        assert_eq!(
            peek_version(Encoding::Json, br#"{"request": "ping"}"#),
            None
        );
        assert_eq!(peek_version(Encoding::Json, b"garbage"), None);
        let frame = encode(Encoding::Postcard, &(99u32, "anything")).unwrap();
        assert_eq!(peek_version(Encoding::Postcard, &frame[5..]), Some(99));
    }
}
