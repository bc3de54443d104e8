//! The window: the chunks the JS entry keeps while a payload's JSON body streams in, so that a
//! finished body is parsed from the caller's own strings (one `JSON.parse` of a slice) instead
//! of being copied out of wasm memory and decoded again.

use stepwise_core::markers::MarkerParser;

use crate::marker_stream::{SPANS_READY, WINDOW_ADD, WINDOW_OPEN};
use crate::utf16::Utf16Offsets;

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
        // UTF-16 offsets from the start of the stream of byte offsets in the chunk.
        let mut units = Utf16Offsets::new(at.chunk, at.len16);
        let mut offset16 = |to: usize| at.start16 + u64::from(units.at(to - at.start));
        windowed.clear();
        for span in parser.drain_body_spans() {
            let start16 = match self.body_start16.take() {
                Some(start16) if span.start < at.start => start16,
                _ => offset16(span.start),
            };
            let end16 = offset16(span.end);
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
                    self.body_start16 = Some(offset16(start));
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
