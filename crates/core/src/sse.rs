//! Sans-IO decoder of Server-Sent Events (the `text/event-stream` format): bytes in, events out.
//!
//! Follows the WHATWG event-stream rules: lines end at CRLF, LF or CR (a CR at the end of one
//! chunk and an LF at the start of the next are one line break); `field: value` lines, with one
//! leading space dropped; `data` lines joined with `\n`; comments (`:`) ignored; an empty line
//! dispatches the event. Lines are decoded as UTF-8 only once complete, so a multi-byte
//! character split across chunks decodes exactly as if it had arrived whole.

use serde::{Deserialize, Serialize};

/// Longest line kept, in bytes; the rest of a longer line is dropped and reported.
pub const MAX_LINE_LEN: usize = 1024 * 1024;
/// Largest event (its `data` lines together), in bytes; a larger event is dropped and reported.
pub const MAX_EVENT_LEN: usize = 4 * 1024 * 1024;

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SseEvent {
    /// The `event` field, or `message` when the stream sent none.
    pub event: String,
    /// The `data` lines joined with `\n`.
    pub data: String,
    /// The last `id` field seen, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// One SSE frame: `id`, `event` and `data`. JSON text may span lines; each line becomes its own
/// `data:` line, which an SSE client joins back with `\n` (still the same JSON).
///
/// ```
/// assert_eq!(stepwise_core::sse::frame(7, "tick", "{\n}"), "id: 7\nevent: tick\ndata: {\ndata: }\n\n");
/// ```
pub fn frame(id: u64, event: &str, data: &str) -> String {
    let mut frame = String::with_capacity(data.len() + event.len() + 32);
    frame.push_str("id: ");
    frame.push_str(&id.to_string());
    frame.push_str("\nevent: ");
    frame.push_str(event);
    frame.push('\n');
    // SSE ends lines at CR, LF or CRLF, so each piece gets its own `data:` line.
    for line in data.split(['\r', '\n']) {
        frame.push_str("data: ");
        frame.push_str(line);
        frame.push('\n');
    }
    frame.push('\n');
    frame
}

/// Incremental SSE decoder.
///
/// ```
/// use stepwise_core::sse::SseDecoder;
/// let mut decoder = SseDecoder::new();
/// assert!(decoder.feed(b"event: ping\ndata: {\"a\"").is_empty());
/// let events = decoder.feed(b": 1}\n\n");
/// assert_eq!(events[0].event, "ping");
/// assert_eq!(events[0].data, "{\"a\": 1}");
/// ```
#[derive(Debug, Clone, Default)]
pub struct SseDecoder {
    line: Vec<u8>,
    after_cr: bool,
    overlong: bool,
    overlong_lines: usize,
    event: Option<String>,
    data: Option<String>,
    id: Option<String>,
}

impl SseDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many over-long lines were cut so far (a sign of a malformed stream).
    pub fn overlong_lines(&self) -> usize {
        self.overlong_lines
    }

    /// Decodes the next bytes; returns the events they completed.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        let mut events = Vec::new();
        let mut rest = bytes;
        while !rest.is_empty() {
            if self.after_cr {
                self.after_cr = false;
                if rest[0] == b'\n' {
                    rest = &rest[1..];
                    continue;
                }
            }
            match memchr::memchr2(b'\n', b'\r', rest) {
                Some(end) => {
                    self.push(&rest[..end]);
                    self.after_cr = rest[end] == b'\r';
                    rest = &rest[end + 1..];
                    if let Some(event) = self.end_line() {
                        events.push(event);
                    }
                }
                None => {
                    self.push(rest);
                    rest = &[];
                }
            }
        }
        events
    }

    /// Ends the stream. Per the format, an event not followed by an empty line is discarded;
    /// returns whether such an unfinished event (or line) was pending.
    pub fn finish(&mut self) -> bool {
        let pending = !self.line.is_empty() || self.data.is_some() || self.event.is_some();
        *self = SseDecoder {
            overlong_lines: self.overlong_lines,
            ..SseDecoder::default()
        };
        pending
    }

    fn push(&mut self, bytes: &[u8]) {
        let room = MAX_LINE_LEN.saturating_sub(self.line.len());
        if bytes.len() > room {
            self.line.extend_from_slice(&bytes[..room]);
            self.overlong = true;
        } else {
            self.line.extend_from_slice(bytes);
        }
    }

    fn end_line(&mut self) -> Option<SseEvent> {
        let line = std::mem::take(&mut self.line);
        if std::mem::take(&mut self.overlong) {
            self.overlong_lines += 1;
            return None;
        }
        if line.is_empty() {
            let event = self.event.take();
            let data = self.data.take()?;
            return Some(SseEvent {
                event: event.unwrap_or_else(|| "message".to_owned()),
                data,
                id: self.id.clone(),
            });
        }
        let text = String::from_utf8_lossy(&line);
        if text.starts_with(':') {
            return None;
        }
        let (field, value) = match text.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (text.as_ref(), ""),
        };
        match field {
            "event" => self.event = Some(value.to_owned()),
            "data" => match &mut self.data {
                Some(data) if data.len() + value.len() >= MAX_EVENT_LEN => {
                    // Too large: drop what was gathered; the event is dispatched empty-handed.
                    self.overlong_lines += 1;
                    *data = String::new();
                }
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_owned()),
            },
            "id" if !value.contains('\0') => self.id = Some(value.to_owned()),
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut decoder = SseDecoder::new();
        chunks.iter().flat_map(|c| decoder.feed(c)).collect()
    }

    #[test]
    fn every_byte_split_gives_the_same_events() {
        let stream = "id: 1\r\nevent: delta\r\ndata: {\"t\": \"caf\u{e9} 😀\"}\r\n\r\n: keep-alive\n\ndata: a\ndata:b\r\rdata: [DONE]\n\n".as_bytes();
        let whole = decode(&[stream]);
        assert_eq!(whole.len(), 3);
        assert_eq!(
            whole[0],
            SseEvent {
                event: "delta".into(),
                data: "{\"t\": \"café 😀\"}".into(),
                id: Some("1".into())
            }
        );
        assert_eq!(whole[1].data, "a\nb");
        assert_eq!(whole[2].data, "[DONE]");
        for cut in 0..=stream.len() {
            assert_eq!(
                decode(&[&stream[..cut], &stream[cut..]]),
                whole,
                "cut at {cut}"
            );
        }
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(decode(&bytes), whole);
    }

    #[test]
    fn an_unterminated_event_is_discarded_at_the_end() {
        let mut decoder = SseDecoder::new();
        assert!(decoder.feed(b"data: partial").is_empty());
        assert!(decoder.finish());
        assert!(!decoder.finish());
    }

    #[test]
    fn an_over_long_line_is_dropped_and_counted() {
        let mut decoder = SseDecoder::new();
        let long = vec![b'x'; MAX_LINE_LEN + 10];
        decoder.feed(b"data: ");
        decoder.feed(&long);
        let events = decoder.feed(b"\ndata: ok\n\n");
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].data, "ok");
        assert_eq!(decoder.overlong_lines(), 1);
    }
}
