//! The incremental marker parser: text streams in, display text and completed markers stream out.

use std::ops::Range;

use memchr::{memchr, memchr_iter};

mod line_start;
mod skip;
mod spans;

pub use skip::TextPosition;

use super::bracket_scan::BracketScan;
use super::registry::{MarkerId, MarkerRegistry};
use super::text_pieces::TextPieces;
use super::values::{MAX_LIST_ITEMS, Outcome, Places, json_marker, line_marker};
use super::{Diagnostic, DiagnosticCode, Event, Marker, Parsed};
use crate::json::{JsonCheck, Progress};

/// Longest marker line, in bytes; a longer one is dropped with a diagnostic.
pub const MAX_LINE_LEN: usize = 64 * 1024;
/// Largest JSON body, in bytes; a larger one is dropped with a diagnostic.
pub const MAX_PAYLOAD_LEN: usize = 256 * 1024;
/// The most of its value buffer [`MarkerParser::reset`] keeps, in bytes.
pub const KEPT_ON_RESET: usize = 16 * 1024;

/// Where in the grammar the parser stands between two bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// At the start of a line, holding the undecided prefix.
    LineStart,
    /// Inside a display line.
    Text,
    /// Collecting a one-line marker's value up to the line break.
    LineValue(MarkerId),
    /// After a JSON marker's colon, before its `{` or `[` (which may come on the next line,
    /// possibly after a code fence line such as ```` ```json ````).
    AwaitBody {
        id: MarkerId,
        crossed_line: bool,
        fenced: bool,
    },
    /// Dropping the rest of a code fence line that opens a JSON body.
    FenceOpen(MarkerId),
    /// Inside a JSON body; `overflow` once it outgrew the limit and is being skipped.
    Body {
        id: MarkerId,
        overflow: bool,
        fenced: bool,
    },
    /// After a JSON body's close, up to the line break (dropped).
    AfterBody { reported: bool, fenced: bool },
    /// At the start of the line after a fenced body, holding the prefix: a closing fence is
    /// dropped, anything else is an ordinary line.
    FenceClose,
    /// Dropping the rest of an over-long marker line.
    SkipLine,
}

/// Incremental parser of marker lines in streamed model output.
///
/// Feed it chunks as they arrive; it returns display text (marker lines removed) and each marker
/// as soon as it is complete. The same text split at any points yields the same markers,
/// diagnostics and concatenated text, and the total work is linear in the input.
///
/// ```
/// use stepwise_core::markers::{Event, Marker, MarkerParser};
/// let mut parser = MarkerParser::new();
/// let mut shown = String::new();
/// for chunk in ["Pick one:\nSUGG", "ESTIONS: competitive, regulatory\n"] {
///     for event in parser.feed(chunk) {
///         if let Event::Text { text } = event { shown.push_str(&text) }
///     }
/// }
/// let parsed = parser.finish();
/// assert_eq!(shown, "Pick one:\n");
/// assert_eq!(parsed.suggestions, ["competitive", "regulatory"]);
/// ```
#[derive(Debug, Clone)]
pub struct MarkerParser {
    registry: MarkerRegistry,
    mode: Mode,
    prefix: String,
    value: String,
    line: u32,
    marker_line: u32,
    /// Validates the body being collected as it streams, and finds where it ends.
    check: JsonCheck,
    /// Finds where the body ends once the check found it invalid.
    fallback: Option<BracketScan>,
    events: Vec<Event>,
    parsed: Parsed,
    ended: bool,
    /// The stream's position before the current chunk: bytes fed, plus what
    /// [`Self::skip_text`] counted.
    fed: usize,
    /// Where the JSON body being collected starts, in bytes from the start of the stream.
    body_start: usize,
    /// Where the bodies of the payload events not yet drained start and end.
    body_spans: Vec<Range<usize>>,
    /// The text of the `Text` events as places in the chunk, in span mode.
    pieces: TextPieces,
    /// The places in the chunk of the strings of line markers parsed in place, in span mode
    /// ([`Self::take_value_places`]).
    value_places: Vec<(usize, Range<usize>)>,
}

impl Default for MarkerParser {
    fn default() -> Self {
        Self::new()
    }
}

impl MarkerParser {
    /// A parser for the built-in markers.
    pub fn new() -> Self {
        Self::with_registry(MarkerRegistry::new())
    }

    /// A parser for the built-in markers plus the registry's payload markers.
    pub fn with_registry(registry: MarkerRegistry) -> Self {
        MarkerParser {
            registry,
            mode: Mode::LineStart,
            prefix: String::new(),
            value: String::new(),
            line: 1,
            marker_line: 1,
            check: JsonCheck::default(),
            fallback: None,
            events: Vec::new(),
            parsed: Parsed::default(),
            ended: false,
            fed: 0,
            body_start: 0,
            body_spans: Vec::new(),
            pieces: TextPieces::default(),
            value_places: Vec::new(),
        }
    }

    /// Starts over for a new stream: the parser is then as [`Self::with_registry`] made it (with
    /// the same registry and span mode), but keeps the memory it allocated (a value buffer up to
    /// [`KEPT_ON_RESET`] bytes), for a caller that parses one reply after another.
    ///
    /// ```
    /// use stepwise_core::markers::MarkerParser;
    /// let mut parser = MarkerParser::new();
    /// parser.parse("Pick:\nSUGGESTIONS: a, b\nTARGET_FIE");
    /// parser.reset();
    /// parser.parse("Hello\n");
    /// assert!(parser.parsed().suggestions.is_empty());
    /// assert_eq!(parser.fed(), 6);
    /// ```
    pub fn reset(&mut self) {
        // Every field named, so that a field added later is not forgotten here.
        let MarkerParser {
            registry: _,
            mode,
            prefix,
            value,
            line,
            marker_line,
            check,
            fallback,
            events,
            parsed,
            ended,
            fed,
            body_start,
            body_spans,
            pieces,
            value_places,
        } = self;
        *mode = Mode::LineStart;
        prefix.clear();
        value.clear();
        // A JSON body may have grown it to MAX_PAYLOAD_LEN: not kept for the next reply.
        value.shrink_to(KEPT_ON_RESET);
        (*line, *marker_line) = (1, 1);
        *check = JsonCheck::default();
        *fallback = None;
        events.clear();
        parsed.clear();
        *ended = false;
        (*fed, *body_start) = (0, 0);
        body_spans.clear();
        pieces.clear();
        value_places.clear();
    }

    /// Whether the start of a line is held back, undecided, after the text fed so far (the
    /// text since the line's start comes back as a [`TextSource::Earlier`] piece once decided).
    ///
    /// [`TextSource::Earlier`]: super::TextSource::Earlier
    pub fn holds_line_start(&self) -> bool {
        !self.prefix.is_empty()
    }

    /// The markers this parser recognizes besides the built-in ones.
    pub fn registry(&self) -> &MarkerRegistry {
        &self.registry
    }

    /// The parse so far (message untrimmed; a marker still being collected is not in it).
    pub fn parsed(&self) -> &Parsed {
        &self.parsed
    }

    /// Parses the next chunk and returns the events it completed.
    pub fn feed(&mut self, chunk: &str) -> std::vec::Drain<'_, Event> {
        self.parse(chunk);
        self.events.drain(..)
    }

    /// [`Self::feed`] in two calls, for a caller that reads the parser's state (such as
    /// [`Self::open_body_start`]) before taking the events: parses the next chunk and keeps
    /// its events for [`Self::take_events`].
    pub fn parse(&mut self, chunk: &str) {
        if self.ended {
            let message = "text fed after the end of the stream was ignored".to_owned();
            self.diagnostic_at(DiagnosticCode::FeedAfterEnd, message, self.line);
            return;
        }
        let mut at = 0;
        while at < chunk.len() {
            at = match self.mode {
                Mode::LineStart if self.prefix.is_empty() => self.line_start_in_chunk(chunk, at),
                Mode::LineStart | Mode::FenceClose => self.line_start(chunk, at),
                Mode::Text => self.text(chunk, at),
                Mode::LineValue(id) => self.line_value(chunk, at, id),
                Mode::AwaitBody {
                    id,
                    crossed_line,
                    fenced,
                } => self.await_body(chunk, at, id, crossed_line, fenced),
                Mode::FenceOpen(id) => self.fence_open(chunk, at, id),
                Mode::Body {
                    id,
                    overflow,
                    fenced,
                } => self.body(chunk, at, id, overflow, fenced),
                Mode::AfterBody { reported, fenced } => {
                    self.after_body(chunk, at, reported, fenced)
                }
                Mode::SkipLine => self.skip_line(chunk, at),
            };
        }
        self.fed += chunk.len();
    }

    /// The events completed since they were last taken.
    pub fn take_events(&mut self) -> std::vec::Drain<'_, Event> {
        self.events.drain(..)
    }

    /// Bytes fed so far (plus the lengths given to [`Self::skip_text`], in the caller's unit).
    pub fn fed(&self) -> usize {
        self.fed
    }

    /// Feeds `chunk` only if it is display text that continues the current line (ending it at
    /// most at its last byte), the usual streamed delta, and returns whether it did. The
    /// events of such a chunk are exactly `[Event::Text { text: chunk }]`, which the caller
    /// builds itself: nothing is allocated here. Otherwise nothing is fed; call [`Self::feed`].
    ///
    /// ```
    /// use stepwise_core::markers::MarkerParser;
    /// let mut parser = MarkerParser::new();
    /// assert!(!parser.feed_plain("Hello")); // at a line start the text may still become a marker
    /// assert_eq!(parser.feed("Hello").count(), 1);
    /// assert!(parser.feed_plain(", world\n"));
    /// assert_eq!(parser.finish().message, "Hello, world");
    /// ```
    pub fn feed_plain(&mut self, chunk: &str) -> bool {
        let bytes = chunk.as_bytes();
        if self.mode != Mode::Text || self.ended || bytes.is_empty() || !self.events.is_empty() {
            return false;
        }
        let ends_line = match memchr(b'\n', bytes) {
            None => false,
            Some(at) if at + 1 == bytes.len() => true,
            Some(_) => return false,
        };
        if !self.pieces.on {
            self.parsed.message.push_str(chunk);
        }
        self.fed += chunk.len();
        if ends_line {
            self.line += 1;
            self.mode = Mode::LineStart;
        }
        true
    }

    /// Ends the stream: releases held text and completes a marker cut short by the end.
    /// Calling it again returns nothing.
    pub fn end(&mut self) -> std::vec::Drain<'_, Event> {
        self.end_parse();
        self.events.drain(..)
    }

    /// [`Self::end`] in two calls, as [`Self::parse`] is to [`Self::feed`]: ends the stream
    /// and keeps its last events for [`Self::take_events`].
    pub fn end_parse(&mut self) {
        if !self.ended {
            self.ended = true;
            match self.mode {
                Mode::LineStart | Mode::FenceClose => {
                    let held = std::mem::take(&mut self.prefix);
                    self.emit_text(&held, self.fed);
                }
                Mode::LineValue(id) => self.complete(line_marker(id, &self.value, None)),
                Mode::AwaitBody { .. } | Mode::FenceOpen(_) => self.diagnostic(
                    DiagnosticCode::MissingPayloadBody,
                    "the stream ended before the marker's JSON body".into(),
                ),
                Mode::Body {
                    overflow: false, ..
                } => self.diagnostic(
                    DiagnosticCode::UnterminatedPayload,
                    "the stream ended inside a JSON body".into(),
                ),
                Mode::Body { overflow: true, .. }
                | Mode::Text
                | Mode::AfterBody { .. }
                | Mode::SkipLine => {}
            }
            // A JSON body may have grown it: not kept past KEPT_ON_RESET (a parser that is reset
            // for the next reply would allocate it again).
            if self.value.capacity() > KEPT_ON_RESET {
                self.value = String::new();
            } else {
                self.value.clear();
            }
            self.mode = Mode::LineStart;
        }
    }

    /// Ends the stream and returns the whole parse.
    pub fn finish(mut self) -> Parsed {
        self.end();
        let mut parsed = self.parsed;
        let trimmed = parsed.message.trim();
        if trimmed.len() != parsed.message.len() {
            parsed.message = trimmed.to_owned();
        }
        parsed
    }

    fn text(&mut self, chunk: &str, at: usize) -> usize {
        match memchr(b'\n', &chunk.as_bytes()[at..]) {
            Some(offset) => {
                let end = at + offset + 1;
                self.emit_text(&chunk[at..end], self.fed + end);
                self.line += 1;
                self.mode = Mode::LineStart;
                end
            }
            None => {
                self.emit_text(&chunk[at..], self.fed + chunk.len());
                chunk.len()
            }
        }
    }

    fn line_value(&mut self, chunk: &str, at: usize, id: MarkerId) -> usize {
        let newline = memchr(b'\n', &chunk.as_bytes()[at..]).map(|offset| at + offset);
        let segment = &chunk[at..newline.unwrap_or(chunk.len())];
        if self.value.len() + segment.len() > MAX_LINE_LEN {
            let message = format!("a marker line longer than {MAX_LINE_LEN} bytes was dropped");
            self.diagnostic(DiagnosticCode::LineTooLong, message);
            self.value = String::new();
            self.mode = Mode::SkipLine;
            return at;
        }
        match newline {
            // The whole value lies in this chunk: parsed in place (span mode keeps its places).
            Some(end) if self.value.is_empty() => {
                let places = self.pieces.on.then_some(Places {
                    chunk: chunk.as_ptr() as usize,
                    event: self.events.len(),
                    to: &mut self.value_places,
                });
                let outcome = line_marker(id, segment, places);
                self.complete(outcome);
                self.line += 1;
                self.mode = Mode::LineStart;
                end + 1
            }
            Some(end) => {
                self.value.push_str(segment);
                self.complete(line_marker(id, &self.value, None));
                self.value.clear();
                self.line += 1;
                self.mode = Mode::LineStart;
                end + 1
            }
            None => {
                self.value.push_str(segment);
                chunk.len()
            }
        }
    }

    fn await_body(
        &mut self,
        chunk: &str,
        at: usize,
        id: MarkerId,
        crossed_line: bool,
        fenced: bool,
    ) -> usize {
        match chunk.as_bytes()[at] {
            b' ' | b'\t' | b'\r' => at + 1,
            b'*' | b'_' if !crossed_line => at + 1,
            b'`' if crossed_line && !fenced => {
                self.mode = Mode::FenceOpen(id);
                at + 1
            }
            b'\n' if crossed_line => {
                // A blank line: the marker has no body. The blank line stays in the text.
                let message = "the marker has no JSON body".into();
                self.diagnostic(DiagnosticCode::MissingPayloadBody, message);
                self.emit_text("\n", self.fed + at + 1);
                self.line += 1;
                self.mode = Mode::LineStart;
                at + 1
            }
            b'\n' => {
                self.line += 1;
                self.mode = Mode::AwaitBody {
                    id,
                    crossed_line: true,
                    fenced,
                };
                at + 1
            }
            b'{' | b'[' => {
                self.check = JsonCheck::default();
                self.fallback = None;
                self.value.clear();
                self.body_start = self.fed + at;
                self.mode = Mode::Body {
                    id,
                    overflow: false,
                    fenced,
                };
                at
            }
            _ => {
                let message = "the marker's body must start with `{` or `[`".into();
                self.diagnostic(DiagnosticCode::MissingPayloadBody, message);
                // On a later line the text is ordinary output; on the marker's own line it is dropped.
                self.mode = if crossed_line {
                    Mode::LineStart
                } else {
                    Mode::SkipLine
                };
                at
            }
        }
    }

    fn fence_open(&mut self, chunk: &str, at: usize, id: MarkerId) -> usize {
        match memchr(b'\n', &chunk.as_bytes()[at..]) {
            Some(offset) => {
                self.line += 1;
                self.mode = Mode::AwaitBody {
                    id,
                    crossed_line: true,
                    fenced: true,
                };
                at + offset + 1
            }
            None => chunk.len(),
        }
    }

    fn body(
        &mut self,
        chunk: &str,
        at: usize,
        id: MarkerId,
        mut overflow: bool,
        fenced: bool,
    ) -> usize {
        let bytes = &chunk.as_bytes()[at..];
        let lines = self.check.lines();
        // The close, and where the bracket count took over from the validator (which counts
        // the line breaks it read).
        let (close, counted) = match &mut self.fallback {
            Some(scan) => (scan.scan(bytes), 0),
            None => match self.check.feed_value(bytes) {
                Progress::More => (None, bytes.len()),
                Progress::Complete(end) => (Some(end), end),
                Progress::Invalid(bad) => {
                    // The byte that broke the JSON is scanned as the plain bracket count sees it.
                    let mut scan = BracketScan::resume(self.check.nesting());
                    let close = scan.scan(&bytes[bad..]).map(|end| bad + end);
                    self.fallback = Some(scan);
                    (close, bad)
                }
            },
        };
        let closed = close.is_some();
        let end = at + close.unwrap_or(bytes.len());
        let rest = &chunk.as_bytes()[(at + counted).min(end)..end];
        self.line += (self.check.lines() - lines) as u32 + memchr_iter(b'\n', rest).count() as u32;
        let segment = &chunk[at..end];
        if !overflow && self.value.len() + segment.len() > MAX_PAYLOAD_LEN {
            overflow = true;
            self.value = String::new();
            let message = format!("a JSON body larger than {MAX_PAYLOAD_LEN} bytes was dropped");
            self.diagnostic(DiagnosticCode::PayloadTooLarge, message);
        }
        if !overflow {
            self.value.push_str(segment);
        }
        if closed {
            if !overflow {
                let body = std::mem::take(&mut self.value);
                let outcome = json_marker(id, body, self.check.finish(), &self.registry);
                if let Ok((Marker::Payload(_), _)) = &outcome {
                    self.body_spans.push(self.body_start..self.fed + end);
                }
                self.complete(outcome);
            }
            self.value.clear();
            self.mode = Mode::AfterBody {
                reported: false,
                fenced,
            };
        } else {
            self.mode = Mode::Body {
                id,
                overflow,
                fenced,
            };
        }
        end
    }

    fn after_body(&mut self, chunk: &str, at: usize, mut reported: bool, fenced: bool) -> usize {
        let newline = memchr(b'\n', &chunk.as_bytes()[at..]).map(|offset| at + offset);
        let segment = &chunk[at..newline.unwrap_or(chunk.len())];
        let trailing = segment
            .bytes()
            .any(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'*' | b'_' | b',' | b'.' | b'`'));
        if !reported && trailing {
            reported = true;
            let message = "text after a JSON body on its line was dropped".into();
            self.diagnostic(DiagnosticCode::TrailingText, message);
        }
        match newline {
            Some(end) => {
                self.line += 1;
                self.mode = if fenced {
                    Mode::FenceClose
                } else {
                    Mode::LineStart
                };
                end + 1
            }
            None => {
                self.mode = Mode::AfterBody { reported, fenced };
                chunk.len()
            }
        }
    }

    fn skip_line(&mut self, chunk: &str, at: usize) -> usize {
        match memchr(b'\n', &chunk.as_bytes()[at..]) {
            Some(offset) => {
                self.line += 1;
                self.mode = Mode::LineStart;
                at + offset + 1
            }
            None => chunk.len(),
        }
    }

    fn complete(&mut self, outcome: Outcome) {
        match outcome {
            Ok((marker, note)) => {
                self.push(Event::Marker(marker));
                if let Some((code, message)) = note {
                    self.diagnostic(code, message);
                }
            }
            Err((code, message)) => self.diagnostic(code, message),
        }
    }

    fn diagnostic(&mut self, code: DiagnosticCode, message: String) {
        self.diagnostic_at(code, message, self.marker_line);
    }

    fn diagnostic_at(&mut self, code: DiagnosticCode, message: String, line: u32) {
        self.push(Event::Diagnostic(Diagnostic {
            code,
            message,
            line,
        }));
    }

    /// Emits display text that ends at `end` in the stream (bytes from its start): every
    /// display text is a contiguous part of the stream.
    fn emit_text(&mut self, text: &str, end: usize) {
        if text.is_empty() {
            return;
        }
        if self.pieces.on {
            if !matches!(self.events.last(), Some(Event::Text { .. })) {
                self.events.push(Event::Text {
                    text: String::new(),
                });
            }
            let event = self.events.len() - 1;
            self.pieces.add(event, text, end - text.len(), self.fed);
            return;
        }
        self.parsed.message.push_str(text);
        match self.events.last_mut() {
            Some(Event::Text { text: last }) => last.push_str(text),
            _ => self.events.push(Event::Text {
                text: text.to_owned(),
            }),
        }
    }

    fn push(&mut self, event: Event) {
        let dropped = self.parsed.absorb(&event);
        self.events.push(event);
        if dropped > 0 {
            let message = format!(
                "{dropped} items past the first {MAX_LIST_ITEMS} of the reply were dropped"
            );
            self.diagnostic(DiagnosticCode::TooManyItems, message);
        }
    }
}
