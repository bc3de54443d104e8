//! The tape: a chunk's events as numbers in wasm memory, which the JS entry reads in place.
//!
//! Display text is most of a model's output, and the engine already holds it as the caller's
//! chunk, so a text event is written as the UTF-16 range to cut from that string
//! (`chunk.slice(start, end)`, which copies nothing) instead of a string decoded out of wasm
//! memory. Everything else (markers, diagnostics) is a value, in order, in one JSON array
//! (`events.rs`). Words, each a `u32`:
//!
//! - `TEXT, start, end`: a text event, `chunk.slice(start, end)`;
//! - `PIECES, n` and `n` pieces: a text event joined from pieces, each `SPAN, start, end`
//!   (a range of the chunk), `EARLIER, units` (the last `units` UTF-16 units of the text fed
//!   before this chunk, which the entry keeps while a line start is undecided) or `VALUE` (the
//!   next value, a string: text the entry cannot cut, see [`TapeWriter::new`]);
//! - `VALUE`: an event that is the next value.

use stepwise_core::markers::{Event, TextPiece, TextSource};

use crate::events::JsonOut;

/// Tape word: an event that is the next JS value (or, in a text, a piece that is).
pub const VALUE: u32 = 0;
/// Tape word: a text event that is one range of the chunk.
pub const TEXT: u32 = 1;
/// Tape word: a text event made of the pieces that follow.
pub const PIECES: u32 = 2;
/// Tape word, in a text: a range of the chunk.
pub const SPAN: u32 = 3;
/// Tape word, in a text: the end of the text fed before the chunk.
pub const EARLIER: u32 = 4;

/// The words of the last chunk (its allocation reused from chunk to chunk).
#[derive(Debug, Default)]
pub(crate) struct Tape(Vec<u32>);

impl Tape {
    pub(crate) fn words(&self) -> &[u32] {
        &self.0
    }
}

/// Writes one chunk's events to the tape.
pub(crate) struct TapeWriter<'a> {
    tape: &'a mut Tape,
    chunk: &'a str,
    /// Cuts text from the caller's string; when false (the chunk held a lone surrogate, read
    /// here as U+FFFD), text is copied out as the core saw it.
    as_is: bool,
    offsets: Utf16Offsets<'a>,
    values: &'a mut JsonOut,
    value_count: u32,
}

impl<'a> TapeWriter<'a> {
    /// A writer for the events of `chunk` (`len16` UTF-16 units in the caller's string), their
    /// values written to `values`. Text is cut from the caller's strings unless `as_is` is
    /// false (the chunk held a lone surrogate, which the core reads as U+FFFD, and the event
    /// must say what the core saw); held text that has a U+FFFD is copied for the same reason.
    pub(crate) fn new(
        tape: &'a mut Tape,
        values: &'a mut JsonOut,
        chunk: &'a str,
        len16: u32,
        as_is: bool,
    ) -> Self {
        tape.0.clear();
        values.clear();
        TapeWriter {
            tape,
            values,
            chunk,
            as_is,
            offsets: Utf16Offsets {
                bytes: chunk.as_bytes(),
                ascii: chunk.len() == len16 as usize,
                byte: 0,
                unit: 0,
            },
            value_count: 0,
        }
    }

    /// An event that is a value (a marker or a diagnostic; a payload's data `null` when the
    /// entry reads it from its window); returns the value's index.
    pub(crate) fn event(&mut self, event: &Event, data_later: bool) -> u32 {
        self.tape.0.push(VALUE);
        self.values.next_element();
        self.values.event(event, data_later);
        self.value_count += 1;
        self.value_count - 1
    }

    /// A text event made of `pieces`.
    pub(crate) fn text(&mut self, pieces: impl Iterator<Item = TextPiece>) {
        let words = &mut self.tape.0;
        let at = words.len();
        words.extend([PIECES, 0]);
        let mut count = 0;
        for piece in pieces {
            count += 1;
            match piece.source {
                TextSource::Chunk(range) if self.as_is => {
                    let start = self.offsets.at(range.start);
                    let end = self.offsets.at(range.end);
                    words.extend([SPAN, start, end]);
                }
                TextSource::Earlier(text) if !text.contains('\u{FFFD}') => {
                    words.extend([EARLIER, text.encode_utf16().count() as u32]);
                }
                TextSource::Chunk(range) => {
                    words.push(VALUE);
                    self.values.next_element();
                    self.values.string(&self.chunk[range]);
                    self.value_count += 1;
                }
                TextSource::Earlier(text) => {
                    words.push(VALUE);
                    self.values.next_element();
                    self.values.string(&text);
                    self.value_count += 1;
                }
            }
        }
        if count == 1 && words[at + 2] == SPAN {
            let (start, end) = (words[at + 3], words[at + 4]);
            words.truncate(at);
            words.extend([TEXT, start, end]);
        } else {
            words[at + 1] = count;
        }
    }

    /// Ends the values' array; whether it has any value.
    pub(crate) fn finish(self) -> bool {
        let any = !self.values.is_empty();
        if any {
            self.values.end_array();
        }
        any
    }
}

/// UTF-16 offsets of byte offsets of a chunk, met in increasing order (linear in all).
struct Utf16Offsets<'a> {
    bytes: &'a [u8],
    /// Every byte is one UTF-16 unit.
    ascii: bool,
    byte: usize,
    unit: u32,
}

impl Utf16Offsets<'_> {
    fn at(&mut self, byte: usize) -> u32 {
        if self.ascii {
            return byte as u32;
        }
        if byte < self.byte {
            (self.byte, self.unit) = (0, 0);
        }
        // A unit per UTF-8 sequence (counted at its lead byte), two for a 4-byte one.
        for &b in &self.bytes[self.byte..byte] {
            self.unit += u32::from((b as i8) >= -64) + u32::from(b >= 0xF0);
        }
        self.byte = byte;
        self.unit
    }
}

/// Whether the pieces are one range that is the whole chunk.
pub(crate) fn is_whole(pieces: &[TextPiece], len: usize) -> bool {
    matches!(pieces, [TextPiece { source: TextSource::Chunk(range), .. }] if *range == (0..len))
}
