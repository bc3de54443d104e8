//! The window: the chunks the JS entry keeps while a payload's JSON body streams in, so that a
//! finished body is parsed from the caller's own strings (one `JSON.parse` of a slice) instead
//! of being copied out of wasm memory and decoded again.

use stepwise_core::markers::MarkerParser;

use crate::marker_stream::{SPANS_READY, WINDOW_ADD, WINDOW_OPEN};

/// What the window holds, as offsets into the stream.
#[derive(Debug, Default)]
pub(crate) struct Window {
    /// UTF-16 offset from the start of the stream where the window's first chunk starts.
    start16: u64,
    /// Whether the JS entry holds a window.
    pub(crate) open: bool,
    /// A chunk in the window held a lone surrogate (read here as U+FFFD): bodies are then
    /// read from the core's text, as the core saw them.
    replaced: bool,
    /// Where the open body starts (UTF-16, from the start of the stream).
    body_start16: Option<u64>,
}

/// Where one chunk sits in the stream, for [`Window::track`].
pub(crate) struct ChunkAt<'a> {
    pub(crate) chunk: &'a str,
    /// Its length in UTF-16 units.
    pub(crate) len16: u32,
    /// Bytes fed before it.
    pub(crate) start: usize,
    /// UTF-16 units fed before it.
    pub(crate) start16: u64,
    /// It held no lone surrogate.
    pub(crate) as_is: bool,
}

/// UTF-16 offsets from the start of the stream of byte offsets in a chunk, met in increasing
/// order (linear in the chunk however many bodies it holds).
struct Offsets16<'a> {
    bytes: &'a [u8],
    /// Every byte is one UTF-16 unit.
    ascii: bool,
    start: usize,
    start16: u64,
    byte: usize,
    unit: u64,
}

impl Offsets16<'_> {
    /// The UTF-16 offset of `at`, bytes from the start of the stream.
    fn at(&mut self, at: usize) -> u64 {
        let byte = at - self.start;
        if self.ascii {
            return self.start16 + byte as u64;
        }
        if byte < self.byte {
            (self.byte, self.unit) = (0, 0);
        }
        // A unit per UTF-8 sequence (counted at its lead byte), two for a 4-byte one.
        for &b in &self.bytes[self.byte..byte] {
            self.unit += u64::from((b as i8) >= -64) + u64::from(b >= 0xF0);
        }
        self.byte = byte;
        self.start16 + self.unit
    }
}

impl Window {
    /// Keeps the window of a chunk that opens, continues or closes JSON bodies: returns the
    /// `feedInput` flags for the JS entry, and puts the window offsets of the bodies completed
    /// in `windowed` (none when a chunk of the window read a lone surrogate as U+FFFD, so that
    /// the core's text is used, as the core saw it). `body_open` is where the body still open
    /// after the chunk starts (bytes from the start of the stream).
    pub(crate) fn track(
        &mut self,
        parser: &mut MarkerParser,
        at: ChunkAt<'_>,
        body_open: Option<usize>,
        windowed: &mut Vec<(u64, u64)>,
    ) -> u32 {
        if !self.open {
            *self = Window {
                start16: at.start16,
                open: true,
                replaced: false,
                body_start16: None,
            };
        }
        self.replaced |= !at.as_is;
        let mut flags = WINDOW_ADD;
        let mut offsets = Offsets16 {
            bytes: at.chunk.as_bytes(),
            ascii: at.chunk.len() == at.len16 as usize,
            start: at.start,
            start16: at.start16,
            byte: 0,
            unit: 0,
        };
        windowed.clear();
        for span in parser.drain_body_spans() {
            let start16 = match self.body_start16.take() {
                Some(start16) if span.start < at.start => start16,
                _ => offsets.at(span.start),
            };
            let end16 = offsets.at(span.end);
            windowed.push((start16 - self.start16, end16 - self.start16));
        }
        if self.replaced {
            windowed.clear();
        } else if !windowed.is_empty() {
            flags |= SPANS_READY;
        }
        match body_open {
            Some(start) => {
                if start >= at.start {
                    self.body_start16 = Some(offsets.at(start));
                }
                flags | WINDOW_OPEN
            }
            None => {
                self.open = false;
                flags
            }
        }
    }
}
