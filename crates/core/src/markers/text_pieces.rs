//! Display text as places in the caller's chunk instead of copies: the parser's span mode.
//!
//! A caller that keeps the chunk it fed (the browser package keeps the caller's JS string) can
//! cut each text event out of it and skip building a string the engine already holds. In span
//! mode the parser's `Text` events are left empty and their text is described here, piece by
//! piece: a range of the chunk just fed, or text held back from earlier chunks (the undecided
//! start of a line that a chunk boundary split), which only the parser still has.

use std::ops::Range;

/// Where a piece of a text event's text is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TextSource {
    /// Text fed before the current chunk and held back until its line start was decided.
    Earlier(String),
    /// Bytes of the chunk just fed (offsets from the chunk's first byte).
    Chunk(Range<usize>),
}

/// One piece of the text of the event at `event` (its index among the events of the feed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextPiece {
    /// The index of the `Text` event, counted among the events the feed returned.
    pub event: usize,
    /// Where the text is.
    pub source: TextSource,
}

/// The pieces of the text events not yet taken, while span mode is on.
#[derive(Debug, Clone, Default)]
pub(crate) struct TextPieces {
    pub(crate) on: bool,
    pieces: Vec<TextPiece>,
}

impl TextPieces {
    /// Records `text`, which lies at `start..start + text.len()` in the stream (bytes), as the
    /// next text of event `event`; `chunk_start` is where the chunk being fed starts.
    pub(crate) fn add(&mut self, event: usize, text: &str, start: usize, chunk_start: usize) {
        let end = start + text.len();
        if start < chunk_start {
            let earlier = &text[..text.len().min(chunk_start - start)];
            match self.pieces.last_mut() {
                Some(TextPiece {
                    event: last,
                    source: TextSource::Earlier(held),
                }) if *last == event => held.push_str(earlier),
                _ => self.pieces.push(TextPiece {
                    event,
                    source: TextSource::Earlier(earlier.to_owned()),
                }),
            }
        }
        if end <= chunk_start {
            return;
        }
        let range = start.max(chunk_start) - chunk_start..end - chunk_start;
        match self.pieces.last_mut() {
            Some(TextPiece {
                event: last,
                source: TextSource::Chunk(previous),
            }) if *last == event && previous.end == range.start => previous.end = range.end,
            _ => self.pieces.push(TextPiece {
                event,
                source: TextSource::Chunk(range),
            }),
        }
    }

    /// Drops the pieces not taken (span mode stays as it is).
    pub(crate) fn clear(&mut self) {
        self.pieces.clear();
    }

    pub(crate) fn drain(&mut self) -> std::vec::Drain<'_, TextPiece> {
        self.pieces.drain(..)
    }
}
