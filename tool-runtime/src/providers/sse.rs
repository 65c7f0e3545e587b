//! An incremental decoder of server-sent events (the `text/event-stream` format of the HTML
//! standard), fed the body of a response in chunks split anywhere.

use std::mem;

/// The longest line (and the largest event) the decoder holds, in bytes: a stream that goes
/// past it is not a provider's stream.
pub const MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// One event of a stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SseEvent {
    /// The `event:` field, if the event had one (the standard's default type is `message`).
    pub event: Option<String>,
    /// The `data:` lines, joined with `\n`.
    pub data: String,
    /// The last `id:` seen in the stream so far, if any.
    pub id: Option<String>,
}

/// A stream that cannot be read as server-sent events.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SseError {
    /// A line or an event is larger than [`MAX_EVENT_BYTES`].
    #[error("an event of the stream is larger than {MAX_EVENT_BYTES} bytes")]
    TooLarge,
}

/// Decodes a byte stream into [`SseEvent`]s, whatever the chunk boundaries: a line, a UTF-8
/// character or a `\r\n` may be split between two chunks.
///
/// ```
/// use tool_runtime::providers::sse::SseDecoder;
///
/// let mut decoder = SseDecoder::new();
/// let mut events = decoder.push(b"event: ping\ndata: {\"a\"").unwrap();
/// assert!(events.is_empty());
/// events.extend(decoder.push(b":1}\n\n: a comment\ndata: [DONE]\n\n").unwrap());
/// assert_eq!(events[0].event.as_deref(), Some("ping"));
/// assert_eq!(events[0].data, r#"{"a":1}"#);
/// assert_eq!(events[1].data, "[DONE]");
/// ```
#[derive(Debug, Default)]
pub struct SseDecoder {
    line: Vec<u8>,
    after_cr: bool,
    first_line: bool,
    event: Option<String>,
    data: String,
    has_data: bool,
    id: Option<String>,
}

impl SseDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self {
            first_line: true,
            ..Self::default()
        }
    }

    /// Reads the next chunk and returns the events it completed.
    ///
    /// # Errors
    ///
    /// Returns [`SseError::TooLarge`] when a line or an event grows past
    /// [`MAX_EVENT_BYTES`].
    pub fn push(&mut self, mut bytes: &[u8]) -> Result<Vec<SseEvent>, SseError> {
        let mut events = Vec::new();
        while !bytes.is_empty() {
            if self.after_cr {
                self.after_cr = false;
                if bytes[0] == b'\n' {
                    bytes = &bytes[1..];
                    continue;
                }
            }
            match bytes.iter().position(|b| *b == b'\n' || *b == b'\r') {
                Some(end) => {
                    self.extend_line(&bytes[..end])?;
                    self.after_cr = bytes[end] == b'\r';
                    bytes = &bytes[end + 1..];
                    let line = mem::take(&mut self.line);
                    if let Some(event) = self.line_done(&line)? {
                        events.push(event);
                    }
                }
                None => {
                    self.extend_line(bytes)?;
                    bytes = &[];
                }
            }
        }
        Ok(events)
    }

    /// Ends the stream: returns the event whose lines were all received but that no blank
    /// line closed. A last line cut short is dropped.
    pub fn finish(&mut self) -> Option<SseEvent> {
        self.line.clear();
        self.dispatch()
    }

    fn extend_line(&mut self, bytes: &[u8]) -> Result<(), SseError> {
        if self.line.len() + bytes.len() > MAX_EVENT_BYTES {
            return Err(SseError::TooLarge);
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    fn line_done(&mut self, line: &[u8]) -> Result<Option<SseEvent>, SseError> {
        let mut line = line;
        if mem::take(&mut self.first_line) {
            line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        }
        if line.is_empty() {
            return Ok(self.dispatch());
        }
        if line[0] == b':' {
            return Ok(None);
        }
        let (field, value) = match line.iter().position(|b| *b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        let value = String::from_utf8_lossy(value);
        match field {
            b"event" => self.event = Some(value.into_owned()),
            b"data" => {
                if self.data.len() + value.len() + 1 > MAX_EVENT_BYTES {
                    return Err(SseError::TooLarge);
                }
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(&value);
                self.has_data = true;
            }
            b"id" if !value.contains('\0') => self.id = Some(value.into_owned()),
            _ => {}
        }
        Ok(None)
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let event = self.event.take();
        if !mem::take(&mut self.has_data) {
            return None;
        }
        Some(SseEvent {
            event,
            data: mem::take(&mut self.data),
            id: self.id.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn decode_all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        for c in chunks {
            out.extend(d.push(c).unwrap());
        }
        out.extend(d.finish());
        out
    }

    fn ev(event: Option<&str>, data: &str) -> SseEvent {
        SseEvent {
            event: event.map(str::to_owned),
            data: data.to_owned(),
            id: None,
        }
    }

    #[test]
    fn fields_comments_and_line_endings() {
        let text = b"\xEF\xBB\xBF: hello\r\nevent: a\r\ndata: one\r\ndata:two\r\n\r\nevent:b\rdata\r\r\ndata: x\n\n";
        assert_eq!(
            decode_all(&[text]),
            vec![ev(Some("a"), "one\ntwo"), ev(Some("b"), ""), ev(None, "x")]
        );
    }

    #[test]
    fn an_event_without_data_is_not_dispatched_and_ids_carry_over() {
        let events = decode_all(&[b"event: lonely\n\nid: 7\ndata: x\n\ndata: y\n\n"]);
        assert_eq!(events.len(), 2);
        assert_eq!(events[0].event, None);
        assert_eq!(events[1].id.as_deref(), Some("7"));
    }

    #[test]
    fn a_last_event_without_blank_line_is_kept_but_a_cut_line_is_not() {
        assert_eq!(decode_all(&[b"data: [DONE]\n"]), vec![ev(None, "[DONE]")]);
        assert_eq!(decode_all(&[b"data: {\"cut"]), vec![]);
    }

    #[test]
    fn oversized_lines_are_an_error_not_unbounded_memory() {
        let mut d = SseDecoder::new();
        let big = vec![b'x'; MAX_EVENT_BYTES / 2 + 1];
        assert!(d.push(&big).is_ok());
        assert_eq!(d.push(&big), Err(SseError::TooLarge));
    }

    proptest! {
        /// V2: every split of a stream, even inside a `\r\n` or a UTF-8 character, decodes to
        /// the same events.
        #[test]
        fn v2_every_split_decodes_alike(cuts in proptest::collection::vec(0usize..200, 0..12)) {
            let text = "event: é\r\ndata: {\"ü\":\"日本\"}\r\n\r\n: c\ndata: a\ndata: b\n\ndata: [DONE]\r\r".as_bytes();
            let whole = decode_all(&[text]);
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (text.len() + 1)).collect();
            cuts.sort_unstable();
            let mut chunks = Vec::new();
            let mut at = 0;
            for c in cuts {
                chunks.push(&text[at..c]);
                at = c;
            }
            chunks.push(&text[at..]);
            prop_assert_eq!(decode_all(&chunks), whole);
        }
    }
}
