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
//! - `MARKER, kind` (a number: the index of the kind's name in [`KINDS`], plus [`IN_CHUNK`]
//!   when the value's kept strings are ranges of the chunk, not of the blob) and the value, by
//!   kind: a list `n, (k)…` (`suggestions`, `options`); `(k field), (k value)`
//!   (`extracted_data`); `(k)` (`proposed_message`, `target_field`);
//!   `n, ((k label), (k value))…` (`suggested_values`); `n, ((k label), (k action), handler
//!   (0 client, 1 server), 0 | 1, (k target) if 1)…` (`suggested_actions`); `(type), 0` with
//!   its data from the window, or `(type), 1, (json)` (`payload`). A `(k)` is a kept string:
//!   the entry keeps every one it reads, in order, and `finish` refers to them;
//! - `DIAGNOSTIC, (code), (message), line`.
//!
//! Text is always the caller's own: a lone surrogate, which the core reads as U+FFFD (one
//! UTF-16 unit either way, so the ranges hold), stays as the caller gave it in text events.
//! Marker values are the core's strings, with U+FFFD: a chunk that held one has its markers'
//! strings in the blob.
//!
//! `finishRest` writes the parse's fields besides its message and payloads (which the entry
//! keeps) to the tape too, in this order ([`write_parse`]): `suggestions` and `options` as
//! lists, `extracted` as `n, ((field), (value))…`, `proposed_message` and `target_field` as
//! `0` or `1, (s)`, `suggested_values` and `suggested_actions` as their markers' values, and
//! `diagnostics` as `n, ((code), (message), line)…`. There a string is `REF, index` when a
//! kept string of the events has its text (the entry's `index`th kept string), else a range of
//! the blob.

use std::ops::Range;

use stepwise_core::markers::{
    ActionHandler, Diagnostic, Event, Marker, Parsed, TextPiece, TextSource,
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
/// Added to a marker's kind number when its kept strings are ranges of the chunk.
pub const IN_CHUNK: u32 = 8;
/// First word of a string of `finishRest`'s tape that is a kept string of the events.
pub const REF: u32 = u32::MAX;
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
    /// The kept strings of the events so far, joined, in the order written (the entry keeps the
    /// same strings): `finishRest` refers to them instead of copying the parse's strings.
    given: String,
    /// Where each kept string ends in `given`.
    given_ends: Vec<usize>,
}

impl Tape {
    pub(crate) fn words(&self) -> &[u32] {
        &self.words
    }

    pub(crate) fn blob(&self) -> &str {
        &self.blob
    }

    /// Appends `text` to the blob and writes its range.
    #[inline(never)]
    fn string(&mut self, text: &str) {
        let start = self.blob16;
        self.blob.push_str(text);
        self.blob16 += utf16_len(text);
        self.words.extend([start, self.blob16]);
    }

    /// Writes a string of the parse: a reference to the first kept string from `*from` on with
    /// its text, or (none has it) a range of the blob. The parse's strings of one field are
    /// kept strings in the order they were kept, so each field's search goes forward once.
    fn refer(&mut self, text: &str, from: &mut usize) {
        while let Some(&end) = self.given_ends.get(*from) {
            let start = if *from == 0 {
                0
            } else {
                self.given_ends[*from - 1]
            };
            *from += 1;
            if self.given.as_bytes()[start..end] == *text.as_bytes() {
                self.words.extend([REF, (*from - 1) as u32]);
                return;
            }
        }
        self.string(text);
    }

    fn strings(&mut self, items: &[String]) {
        self.words.push(items.len() as u32);
        let from = &mut 0;
        for item in items {
            self.refer(item, from);
        }
    }

    fn optional(&mut self, text: Option<&str>, from: &mut usize) {
        match text {
            Some(text) => {
                self.words.push(1);
                self.refer(text, from);
            }
            None => self.words.push(0),
        }
    }

    /// Forgets the kept strings and gives back memory past `bytes` in each buffer (the words and
    /// the blob are kept: the entry may still read them).
    pub(crate) fn shrink_to(&mut self, bytes: usize) {
        self.given.clear();
        self.given_ends.clear();
        self.given.shrink_to(bytes);
        self.given_ends.shrink_to(bytes / 8);
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
    let from = &mut 0;
    for field in &parse.extracted {
        tape.refer(&field.field, from);
        tape.refer(&field.value, from);
    }
    tape.optional(parse.proposed_message.as_deref(), &mut 0);
    tape.optional(parse.target_field.as_deref(), &mut 0);
    tape.words.push(parse.suggested_values.len() as u32);
    let from = &mut 0;
    for value in &parse.suggested_values {
        tape.refer(&value.label, from);
        tape.refer(&value.value, from);
    }
    tape.words.push(parse.suggested_actions.len() as u32);
    let from = &mut 0;
    for action in &parse.suggested_actions {
        tape.refer(&action.label, from);
        tape.refer(&action.action, from);
        tape.words.push(handler_number(action.handler));
        tape.optional(action.target.as_deref(), from);
    }
    tape.words.push(parse.diagnostics.len() as u32);
    for diagnostic in &parse.diagnostics {
        tape.string(diagnostic.code.as_str());
        tape.string(&diagnostic.message);
        tape.words.push(diagnostic.line);
    }
}

fn handler_number(handler: ActionHandler) -> u32 {
    match handler {
        ActionHandler::Client => 0,
        ActionHandler::Server => 1,
    }
}

/// Writes one chunk's events to the tape.
pub(crate) struct TapeWriter<'a> {
    tape: &'a mut Tape,
    offsets: Utf16Offsets<'a>,
    /// The places in the chunk of the strings of its line markers (`take_value_places`).
    places: &'a [(usize, Range<usize>)],
    /// The next place not written.
    place: usize,
    /// The marker being written has its kept strings in the chunk.
    in_chunk: bool,
}

impl<'a> TapeWriter<'a> {
    /// A writer for the events of `chunk` (`len16` UTF-16 units in the caller's string); its
    /// line markers' strings are written as ranges of it at `places`.
    pub(crate) fn new(
        tape: &'a mut Tape,
        chunk: &'a str,
        len16: u32,
        places: &'a [(usize, Range<usize>)],
    ) -> Self {
        tape.clear();
        TapeWriter {
            tape,
            offsets: Utf16Offsets::new(chunk, len16),
            places,
            place: 0,
            in_chunk: false,
        }
    }

    /// The event at `index`, a marker or a diagnostic; a payload's data is left for the
    /// entry's window when `data_later`. `as_is`: the chunk is as the caller gave it (no
    /// lone surrogate read as U+FFFD), so that its ranges have the strings' text.
    pub(crate) fn event(&mut self, index: usize, event: &Event, data_later: bool, as_is: bool) {
        let first = self.place;
        while self
            .places
            .get(self.place)
            .is_some_and(|&(event, _)| event == index)
        {
            self.place += 1;
        }
        self.in_chunk = as_is && self.place > first;
        if self.in_chunk {
            self.place = first;
        }
        match event {
            Event::Text { .. } => {}
            Event::Diagnostic(Diagnostic {
                code,
                message,
                line,
            }) => {
                self.tape.words.push(DIAGNOSTIC);
                self.tape.string(code.as_str());
                self.tape.string(message);
                self.tape.words.push(*line);
            }
            Event::Marker(marker) => {
                let number = kind_number(marker) + if self.in_chunk { IN_CHUNK } else { 0 };
                self.tape.words.extend([MARKER, number]);
                self.marker_value(marker, data_later);
            }
        }
    }

    /// Writes a kept string: a range of the chunk for a marker parsed in place, else of the
    /// blob; and keeps it.
    fn keep(&mut self, text: &str) {
        if self.in_chunk {
            let range = self.places[self.place].1.clone();
            self.place += 1;
            let start = self.offsets.at(range.start);
            let end = self.offsets.at(range.end);
            self.tape.words.extend([start, end]);
        } else {
            self.tape.string(text);
        }
        self.tape.given.push_str(text);
        self.tape.given_ends.push(self.tape.given.len());
    }

    fn marker_value(&mut self, marker: &Marker, data_later: bool) {
        match marker {
            Marker::Suggestions(items) | Marker::Options(items) => {
                self.tape.words.push(items.len() as u32);
                for item in items {
                    self.keep(item);
                }
            }
            Marker::ExtractedData(f) => {
                self.keep(&f.field);
                self.keep(&f.value);
            }
            Marker::ProposedMessage(text) | Marker::TargetField(text) => self.keep(text),
            Marker::SuggestedValues(values) => {
                self.tape.words.push(values.len() as u32);
                for value in values {
                    self.keep(&value.label);
                    self.keep(&value.value);
                }
            }
            Marker::SuggestedActions(actions) => {
                self.tape.words.push(actions.len() as u32);
                for action in actions {
                    self.keep(&action.label);
                    self.keep(&action.action);
                    self.tape.words.push(handler_number(action.handler));
                    match &action.target {
                        Some(target) => {
                            self.tape.words.push(1);
                            self.keep(target);
                        }
                        None => self.tape.words.push(0),
                    }
                }
            }
            Marker::Payload(payload) => {
                let tape = &mut *self.tape;
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
