//! The tape: a chunk's events as numbers in wasm memory, which the JS entry reads in place.
//!
//! Display text is most of a model's output, and the engine already holds it as the caller's
//! chunk, so a text event is written as the UTF-16 range to cut from that string
//! (`chunk.slice(start, end)`, which copies nothing) instead of a string decoded out of wasm
//! memory. The strings of markers and diagnostics go into one blob, decoded once per chunk, and
//! are written as UTF-16 ranges of it; the entry builds the objects from the words (no call into
//! JS per object, no `JSON.parse`). Words, each a `u32`; `(s)` is a string, two words: its
//! start and end in the blob:
//!
//! - `TEXT, start, end`: a text event, `chunk.slice(start, end)`;
//! - `PIECES, n` and `n` pieces: a text event joined from pieces, each `SPAN, start, end`
//!   (a range of the chunk) or `EARLIER, units` (the last `units` UTF-16 units of the text fed
//!   before this chunk, which the entry keeps while a line start is undecided);
//! - `MARKER, kind` (a number: the index of the kind's name in [`KINDS`]) and the value, by
//!   kind: a list `n, (s)…` (`suggestions`, `options`); `(field), (value)` (`extracted_data`);
//!   `(s)` (`proposed_message`, `target_field`);
//!   `n, ((label), (value))…` (`suggested_values`); `n, ((label), (action), (handler), 0 | 1,
//!   (target) if 1)…` (`suggested_actions`); `(type), 0` with its data from the window, or
//!   `(type), 1, (json)` (`payload`);
//! - `DIAGNOSTIC, (code), (message), line`.
//!
//! Text is always the caller's own: a lone surrogate, which the core reads as U+FFFD (one
//! UTF-16 unit either way, so the ranges hold), stays as the caller gave it in text events.
//! Marker values are the core's strings, with U+FFFD.
//!
//! `finishRest` writes the parse's fields besides its message and payloads (which the entry
//! keeps) to the tape too, in this order ([`write_parse`]): `suggestions` and `options` as
//! lists, `extracted` as `n, ((field), (value))…`, `proposed_message` and `target_field` as
//! `0` or `1, (s)`, `suggested_values` and `suggested_actions` as their markers' values, and
//! `diagnostics` as `n, ((code), (message), line)…`.

use stepwise_core::markers::{
    Diagnostic, Event, Marker, Parsed, SuggestedAction, SuggestedValue, TextPiece, TextSource,
};

use crate::utf16::{Utf16Offsets, utf16_len};

/// Tape word: a text event that is one range of the chunk.
pub const TEXT: u32 = 1;
/// Tape word: a text event made of the pieces that follow.
pub const PIECES: u32 = 2;
/// Tape word, in a text: a range of the chunk.
pub const SPAN: u32 = 3;
/// Tape word, in a text: the end of the text fed before the chunk.
pub const EARLIER: u32 = 4;
/// Tape word: a marker event.
pub const MARKER: u32 = 6;
/// Tape word: a diagnostic event.
pub const DIAGNOSTIC: u32 = 7;
/// The markers' `kind` names ([`Marker::kind`]), as the tape numbers them (the JS entry holds
/// the same list).
pub const KINDS: [&str; 8] = [
    "suggestions",
    "options",
    "extracted_data",
    "proposed_message",
    "target_field",
    "suggested_values",
    "suggested_actions",
    "payload",
];

/// The number of a marker's kind on the tape (its index in [`KINDS`]).
fn kind_number(marker: &Marker) -> u32 {
    match marker {
        Marker::Suggestions(_) => 0,
        Marker::Options(_) => 1,
        Marker::ExtractedData(_) => 2,
        Marker::ProposedMessage(_) => 3,
        Marker::TargetField(_) => 4,
        Marker::SuggestedValues(_) => 5,
        Marker::SuggestedActions(_) => 6,
        Marker::Payload(_) => 7,
    }
}

/// The words of the last chunk and the blob of its strings (allocations reused from chunk to
/// chunk).
#[derive(Debug, Default)]
pub(crate) struct Tape {
    words: Vec<u32>,
    blob: String,
    /// UTF-16 units in `blob`.
    blob16: u32,
}

impl Tape {
    pub(crate) fn words(&self) -> &[u32] {
        &self.words
    }

    pub(crate) fn blob(&self) -> &str {
        &self.blob
    }

    /// Appends `text` to the blob and writes its range.
    fn string(&mut self, text: &str) {
        let start = self.blob16;
        self.blob.push_str(text);
        self.blob16 += utf16_len(text);
        self.words.extend([start, self.blob16]);
    }

    fn strings(&mut self, items: &[String]) {
        self.words.push(items.len() as u32);
        for item in items {
            self.string(item);
        }
    }

    fn optional(&mut self, text: Option<&str>) {
        match text {
            Some(text) => {
                self.words.push(1);
                self.string(text);
            }
            None => self.words.push(0),
        }
    }

    /// Clears the tape and gives back memory past `bytes` in each of its buffers.
    pub(crate) fn shrink_to(&mut self, bytes: usize) {
        self.clear();
        self.words.shrink_to(bytes / 4);
        self.blob.shrink_to(bytes);
    }

    pub(crate) fn clear(&mut self) {
        self.words.clear();
        self.blob.clear();
        self.blob16 = 0;
    }
}

/// Writes the parse's fields for `finishRest`, in the order the module's doc gives.
pub(crate) fn write_parse(tape: &mut Tape, parse: &Parsed) {
    tape.clear();
    tape.strings(&parse.suggestions);
    tape.strings(&parse.options);
    tape.words.push(parse.extracted.len() as u32);
    for field in &parse.extracted {
        tape.string(&field.field);
        tape.string(&field.value);
    }
    tape.optional(parse.proposed_message.as_deref());
    tape.optional(parse.target_field.as_deref());
    suggested_values(tape, &parse.suggested_values);
    suggested_actions(tape, &parse.suggested_actions);
    tape.words.push(parse.diagnostics.len() as u32);
    for diagnostic in &parse.diagnostics {
        tape.string(diagnostic.code.as_str());
        tape.string(&diagnostic.message);
        tape.words.push(diagnostic.line);
    }
}

/// Writes one chunk's events to the tape.
pub(crate) struct TapeWriter<'a> {
    tape: &'a mut Tape,
    offsets: Utf16Offsets<'a>,
}

impl<'a> TapeWriter<'a> {
    /// A writer for the events of `chunk` (`len16` UTF-16 units in the caller's string).
    pub(crate) fn new(tape: &'a mut Tape, chunk: &'a str, len16: u32) -> Self {
        tape.clear();
        TapeWriter {
            tape,
            offsets: Utf16Offsets::new(chunk, len16),
        }
    }

    /// A marker or a diagnostic; a payload's data is left for the entry's window when
    /// `data_later`.
    pub(crate) fn event(&mut self, event: &Event, data_later: bool) {
        let tape = &mut *self.tape;
        match event {
            Event::Text { .. } => {}
            Event::Diagnostic(Diagnostic {
                code,
                message,
                line,
            }) => {
                tape.words.push(DIAGNOSTIC);
                tape.string(code.as_str());
                tape.string(message);
                tape.words.push(*line);
            }
            Event::Marker(marker) => {
                tape.words.extend([MARKER, kind_number(marker)]);
                marker_value(tape, marker, data_later);
            }
        }
    }

    /// A text event made of `pieces`.
    pub(crate) fn text(&mut self, pieces: impl Iterator<Item = TextPiece>) {
        let at = self.tape.words.len();
        self.tape.words.extend([PIECES, 0]);
        let mut count = 0;
        for piece in pieces {
            count += 1;
            match piece.source {
                TextSource::Chunk(range) => {
                    let start = self.offsets.at(range.start);
                    let end = self.offsets.at(range.end);
                    self.tape.words.extend([SPAN, start, end]);
                }
                TextSource::Earlier(text) => {
                    self.tape.words.extend([EARLIER, utf16_len(&text)]);
                }
            }
        }
        let words = &mut self.tape.words;
        if count == 1 && words[at + 2] == SPAN {
            let (start, end) = (words[at + 3], words[at + 4]);
            words.truncate(at);
            words.extend([TEXT, start, end]);
        } else {
            words[at + 1] = count;
        }
    }
}

fn marker_value(tape: &mut Tape, marker: &Marker, data_later: bool) {
    match marker {
        Marker::Suggestions(items) | Marker::Options(items) => tape.strings(items),
        Marker::ExtractedData(f) => {
            tape.string(&f.field);
            tape.string(&f.value);
        }
        Marker::ProposedMessage(text) | Marker::TargetField(text) => tape.string(text),
        Marker::SuggestedValues(values) => suggested_values(tape, values),
        Marker::SuggestedActions(actions) => suggested_actions(tape, actions),
        Marker::Payload(payload) => {
            tape.string(&payload.payload_type);
            if data_later {
                tape.words.push(0);
            } else {
                tape.words.push(1);
                tape.string(payload.data.as_str());
            }
        }
    }
}

fn suggested_values(tape: &mut Tape, values: &[SuggestedValue]) {
    tape.words.push(values.len() as u32);
    for value in values {
        tape.string(&value.label);
        tape.string(&value.value);
    }
}

fn suggested_actions(tape: &mut Tape, actions: &[SuggestedAction]) {
    tape.words.push(actions.len() as u32);
    for action in actions {
        tape.string(&action.label);
        tape.string(&action.action);
        tape.string(action.handler.as_str());
        tape.optional(action.target.as_deref());
    }
}

/// Whether the pieces are one range that is the whole chunk.
pub(crate) fn is_whole(pieces: &[TextPiece], len: usize) -> bool {
    matches!(pieces, [TextPiece { source: TextSource::Chunk(range), .. }] if *range == (0..len))
}

#[cfg(test)]
mod tests {
    use super::*;
    use stepwise_core::markers::{MarkerParser, MarkerRegistry};

    #[test]
    fn kinds_are_numbered_as_the_markers_name_them() {
        let mut registry = MarkerRegistry::new();
        registry.register_payload("PLAN").unwrap();
        let mut parser = MarkerParser::with_registry(registry);
        let text = "SUGGESTIONS: a\nOPTIONS: b|c\nEXTRACTED_DATA: f=v\nPROPOSED_MESSAGE: Go\n\
            TARGET_FIELD: g\nSUGGESTED_VALUES: [{\"label\": \"One\", \"value\": \"1\"}]\n\
            SUGGESTED_ACTIONS: [{\"label\": \"Open\", \"action\": \"a\", \"handler\": \"client\"}]\n\
            PLAN: {\"a\": 1}\n";
        let mut events: Vec<Event> = parser.feed(text).collect();
        events.extend(parser.end());
        let numbered: Vec<(u32, &str)> = events
            .iter()
            .filter_map(|event| match event {
                Event::Marker(marker) => Some((kind_number(marker), marker.kind())),
                _ => None,
            })
            .collect();
        let expected: Vec<(u32, &str)> = (0..).zip(KINDS).collect();
        assert_eq!(
            numbered, expected,
            "one marker of each kind, in the order of KINDS"
        );
    }
}
