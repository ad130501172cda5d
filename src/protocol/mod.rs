//! The wire protocol shared by `memd` and `memctl`: frames, requests,
//! replies and typed errors. Always compiled and free of async and of the
//! engine, so the thin client links only this.
//!
//! A frame is a 4-byte big-endian payload length, then the payload, whose
//! first byte names its encoding (1 postcard, 2 JSON). The types carry no
//! `skip_serializing_if`: postcard is not self-describing and every field
//! must always be present on the wire.

mod frame;
mod messages;
mod paths;
mod query;

pub use frame::{
    decode, encode, payload_len, peek_version, read_frame, split_payload, write_frame, Encoding,
    FrameError, MAX_FRAME_BYTES,
};
pub use messages::*;
pub use paths::{default_socket_path, socket_path, ENV_SOCKET};
pub use query::*;
