//! ConverseStream's body: the AWS event stream's binary framing (a prelude of total and
//! header lengths with its CRC, typed headers, a payload, and the message's CRC), decoded
//! with AWS's own codec (`aws-smithy-eventstream`), fed the body in chunks split anywhere.
//!
//! Each frame is read once it is whole, so decoding costs time linear in the body; a frame
//! that declares more than [`MAX_FRAME_BYTES`] is refused before it is buffered.

use aws_smithy_eventstream::frame::read_message_from;
use aws_smithy_types::event_stream::{HeaderValue, Message};
use bytes::{Buf, BytesMut};

/// The largest frame accepted, in bytes.
pub(super) const MAX_FRAME_BYTES: usize = 16 * 1024 * 1024;
/// The smallest frame: a 12-byte prelude and the 4-byte message CRC.
const MIN_FRAME_BYTES: usize = 16;

/// One decoded frame, by its `:message-type`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Frame {
    /// An event (`:event-type`) and its JSON payload.
    Event { kind: String, payload: Vec<u8> },
    /// A modeled exception (`:exception-type`, such as `throttlingException`) and its
    /// payload (`{"message": …}`).
    Exception { kind: String, payload: Vec<u8> },
    /// An unmodeled error (`:error-code`, `:error-message`).
    Error { code: String, message: String },
}

/// A body that is not an event stream.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum FrameError {
    /// A frame declares a length outside what a frame can be.
    #[error(
        "a ConverseStream frame declares {0} bytes, outside {MIN_FRAME_BYTES}..={MAX_FRAME_BYTES}"
    )]
    Length(usize),
    /// The codec refused a frame (a CRC that does not match, malformed headers).
    #[error("a ConverseStream frame cannot be decoded: {0}")]
    Invalid(String),
    /// A frame has no `:message-type` this driver knows.
    #[error("a ConverseStream frame has no known `:message-type` (found {0:?})")]
    MessageType(Option<String>),
}

/// Decodes frames from chunks of the body.
#[derive(Debug, Default)]
pub(super) struct FrameDecoder {
    buffer: BytesMut,
}

impl FrameDecoder {
    /// Reads the next chunk and returns the frames it completed.
    pub(super) fn push(&mut self, chunk: &[u8]) -> Result<Vec<Frame>, FrameError> {
        self.buffer.extend_from_slice(chunk);
        let mut frames = Vec::new();
        while self.buffer.len() >= 4 {
            let declared = u32::from_be_bytes([
                self.buffer[0],
                self.buffer[1],
                self.buffer[2],
                self.buffer[3],
            ]);
            let total = usize::try_from(declared).unwrap_or(usize::MAX);
            if !(MIN_FRAME_BYTES..=MAX_FRAME_BYTES).contains(&total) {
                return Err(FrameError::Length(total));
            }
            if self.buffer.len() < total {
                break;
            }
            let mut bytes = self.buffer.split_to(total).freeze();
            let message =
                read_message_from(&mut bytes).map_err(|e| FrameError::Invalid(e.to_string()))?;
            if bytes.has_remaining() {
                return Err(FrameError::Invalid("bytes left after a frame".into()));
            }
            frames.push(frame_of(&message)?);
        }
        Ok(frames)
    }

    /// Whether part of a frame is held (the body ended inside a frame).
    pub(super) fn is_mid_frame(&self) -> bool {
        !self.buffer.is_empty()
    }
}

fn header<'m>(message: &'m Message, name: &str) -> Option<&'m str> {
    message
        .headers()
        .iter()
        .find(|h| h.name().as_str() == name)
        .and_then(|h| match h.value() {
            HeaderValue::String(s) => Some(s.as_str()),
            _ => None,
        })
}

fn frame_of(message: &Message) -> Result<Frame, FrameError> {
    let text = |name: &str| header(message, name).unwrap_or_default().to_owned();
    let payload = message.payload().to_vec();
    match header(message, ":message-type") {
        Some("event") => Ok(Frame::Event {
            kind: text(":event-type"),
            payload,
        }),
        Some("exception") => Ok(Frame::Exception {
            kind: text(":exception-type"),
            payload,
        }),
        Some("error") => Ok(Frame::Error {
            code: text(":error-code"),
            message: text(":error-message"),
        }),
        other => Err(FrameError::MessageType(other.map(str::to_owned))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_smithy_eventstream::frame::write_message_to;
    use aws_smithy_types::event_stream::Header;

    fn event(kind: &str, payload: &str) -> Vec<u8> {
        let message = Message::new(payload.as_bytes().to_vec())
            .add_header(Header::new(
                ":message-type",
                HeaderValue::String("event".into()),
            ))
            .add_header(Header::new(
                ":event-type",
                HeaderValue::String(kind.to_owned().into()),
            ))
            .add_header(Header::new(
                ":content-type",
                HeaderValue::String("application/json".into()),
            ));
        let mut out = Vec::new();
        write_message_to(&message, &mut out)
            .map(|()| out)
            .unwrap_or_default()
    }

    #[test]
    fn v3_frames_split_anywhere_decode_whole() {
        let body = [
            event("messageStart", r#"{"role":"assistant"}"#),
            event("messageStop", "{}"),
        ]
        .concat();
        for split in 1..body.len() {
            let mut decoder = FrameDecoder::default();
            let mut frames = decoder.push(&body[..split]).unwrap_or_default();
            frames.extend(decoder.push(&body[split..]).unwrap_or_default());
            assert_eq!(frames.len(), 2, "split at {split}");
            assert!(!decoder.is_mid_frame());
        }
    }

    #[test]
    fn v3_a_bad_crc_or_length_is_an_error() {
        let mut body = event("messageStop", "{}");
        let last = body.len() - 1;
        body[last] ^= 0xff;
        assert!(matches!(
            FrameDecoder::default().push(&body),
            Err(FrameError::Invalid(_))
        ));
        // Every single flipped bit of a frame is caught (a CRC, or a length that no longer
        // fits), never read as another frame.
        let body = event(
            "contentBlockDelta",
            r#"{"contentBlockIndex":0,"delta":{"text":"hi"}}"#,
        );
        for at in 0..body.len() {
            for bit in 0..8 {
                let mut bad = body.clone();
                bad[at] ^= 1 << bit;
                let mut decoder = FrameDecoder::default();
                let read = decoder.push(&bad);
                assert!(
                    read.is_err() || decoder.is_mid_frame(),
                    "byte {at}, bit {bit}"
                );
            }
        }
        let huge = [0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0];
        assert!(matches!(
            FrameDecoder::default().push(&huge),
            Err(FrameError::Length(_))
        ));
    }
}
