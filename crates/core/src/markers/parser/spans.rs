//! Span mode: where the text, the marker strings and the JSON bodies a parse found lie in the
//! chunks the caller fed, for a caller that keeps those chunks and cuts its strings from them
//! (the browser package) instead of taking copies.

use std::ops::Range;

use super::super::text_pieces::TextPiece;
use super::{MarkerParser, Mode};

impl MarkerParser {
    /// Turns span mode on or off: in span mode the `Text` events that [`Self::parse`] and
    /// [`Self::end`] complete are empty, and their text is given by [`Self::take_text_pieces`]
    /// as ranges of the chunk just fed (and text held from earlier chunks), for a caller that
    /// keeps its chunk and can cut the text from it without a copy. The parse's `message` is
    /// then left empty: the caller has the text.
    ///
    /// ```
    /// use stepwise_core::markers::{Event, MarkerParser, TextSource};
    /// let mut parser = MarkerParser::new();
    /// parser.set_text_spans(true);
    /// parser.parse("Pick:\nSUGGESTIONS: a\nThen");
    /// assert_eq!(parser.take_events().count(), 3); // text, marker, text
    /// let pieces: Vec<_> = parser.take_text_pieces().map(|p| (p.event, p.source)).collect();
    /// assert_eq!(pieces, [(0, TextSource::Chunk(0..6)), (2, TextSource::Chunk(21..25))]);
    /// ```
    pub fn set_text_spans(&mut self, on: bool) {
        self.pieces.on = on;
    }

    /// The pieces of the text events taken since the last call, in span mode, in order.
    pub fn take_text_pieces(&mut self) -> std::vec::Drain<'_, TextPiece> {
        self.pieces.drain()
    }

    /// In span mode, where the strings of the line markers completed since the last call lie in
    /// the chunk just fed, when the marker's whole value lay in it: `(event, range)`, the
    /// index of the marker's event among the events of the feed and a string's byte range in
    /// the chunk, one a string, in the order of the marker's strings (a list's items; a field
    /// and its value). A marker whose value began in an earlier chunk has none.
    ///
    /// ```
    /// use stepwise_core::markers::MarkerParser;
    /// let mut parser = MarkerParser::new();
    /// parser.set_text_spans(true);
    /// let chunk = "Pick:\nOPTIONS: \"A\" | B\n";
    /// parser.parse(chunk);
    /// let places: Vec<_> = parser.take_value_places().collect();
    /// assert_eq!(places, [(1, 16..17), (1, 21..22)]);
    /// assert_eq!((&chunk[16..17], &chunk[21..22]), ("A", "B"));
    /// ```
    pub fn take_value_places(&mut self) -> std::vec::Drain<'_, (usize, Range<usize>)> {
        self.value_places.drain(..)
    }

    /// Where the JSON body being collected starts, in bytes from the start of the stream (text
    /// taken by [`Self::skip_text`] counted as it gave it); `None` when no body is open.
    pub fn open_body_start(&self) -> Option<usize> {
        matches!(
            self.mode,
            Mode::Body {
                overflow: false,
                ..
            }
        )
        .then_some(self.body_start)
    }

    /// Where the JSON bodies of the payload events returned since the last call lie in the
    /// stream (byte offsets from its start, text taken by [`Self::skip_text`] counted as it
    /// gave it), one range a payload, in order: a caller that kept
    /// the text it fed can take a body from there instead of from the event.
    ///
    /// ```
    /// use stepwise_core::markers::{MarkerParser, MarkerRegistry};
    /// let mut registry = MarkerRegistry::new();
    /// registry.register_payload("SCHEMA_PROPOSAL").unwrap();
    /// let mut parser = MarkerParser::with_registry(registry);
    /// let text = "Here:\nSCHEMA_PROPOSAL: {\"a\": 1}\n";
    /// parser.feed(&text[..25]);
    /// assert_eq!(parser.open_body_start(), Some(23));
    /// parser.feed(&text[25..]);
    /// let spans: Vec<_> = parser.drain_body_spans().collect();
    /// assert_eq!(&text[spans[0].clone()], "{\"a\": 1}");
    /// ```
    pub fn drain_body_spans(&mut self) -> std::vec::Drain<'_, Range<usize>> {
        self.body_spans.drain(..)
    }

    /// Whether [`Self::drain_body_spans`] has spans to give.
    pub fn has_body_spans(&self) -> bool {
        !self.body_spans.is_empty()
    }
}
