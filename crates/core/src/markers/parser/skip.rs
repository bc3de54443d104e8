//! Display text a caller finds itself: runs of whole lines that their first byte shows to be
//! text, taken without their bytes, for a caller to whom handing the parser every byte costs
//! more than the parse (the browser package, whose text is a JS string that would have to be
//! encoded into wasm memory first).

use super::super::line::{marker_lead_map, may_begin_marker};
use super::{MarkerParser, Mode};

/// Where the parser stands, for a caller that finds runs of display text itself
/// ([`MarkerParser::skip_text`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextPosition {
    /// At the start of a line, with nothing held back: a line whose first byte
    /// [`MarkerParser::may_begin_marker`] rules out is display text, up to and with its line
    /// break.
    LineStart,
    /// Inside a display line: everything up to and with the next line break is display text.
    InTextLine,
    /// Anywhere else (a marker, a JSON body, an undecided line start, the stream ended): the
    /// next text must be fed.
    Elsewhere,
}

impl MarkerParser {
    /// Where the parser stands; see [`TextPosition`].
    pub fn text_position(&self) -> TextPosition {
        match self.mode {
            _ if self.ended || !self.pieces.on => TextPosition::Elsewhere,
            Mode::LineStart if self.prefix.is_empty() => TextPosition::LineStart,
            Mode::Text => TextPosition::InTextLine,
            _ => TextPosition::Elsewhere,
        }
    }

    /// Whether a line whose first byte (of its UTF-8) is `first` may be a marker line; a line
    /// it rules out is display text whatever follows.
    pub fn may_begin_marker(&self, first: u8) -> bool {
        may_begin_marker(first, &self.registry)
    }

    /// [`Self::may_begin_marker`] for every byte at once: bit `b % 32` of word `b / 32` is set
    /// when a line whose first byte is `b` may be a marker line.
    ///
    /// ```
    /// let parser = stepwise_core::markers::MarkerParser::new();
    /// let map = parser.marker_lead_map();
    /// let may = |b: u8| map[usize::from(b >> 5)] >> (b & 31) & 1 == 1;
    /// assert!(may(b'S') && may(b'-') && !may(b'H') && !may(b'\n'));
    /// ```
    pub fn marker_lead_map(&self) -> [u32; 8] {
        marker_lead_map(&self.registry)
    }

    /// Takes display text the caller found itself instead of feeding it, in span mode only:
    /// from the [`TextPosition`] the parser is at, the rest of a text line (when
    /// [`TextPosition::InTextLine`]) and then whole lines each of which
    /// [`Self::may_begin_marker`] ruled out by its first byte; `lines` is how many line breaks
    /// the text holds, and `ends_in_line` whether it ends inside a line (else just after a line
    /// break). The text is the caller's: no event is made for it.
    ///
    /// `len` advances the stream's position ([`Self::fed`]) as the text's length in the unit
    /// the caller counts it in. Positions reported afterwards ([`Self::open_body_start`],
    /// [`Self::drain_body_spans`]) then count the skipped text in that unit; offsets between
    /// two of them within later chunks are bytes still.
    ///
    /// Returns `false`, taking nothing, when the parser is at [`TextPosition::Elsewhere`].
    ///
    /// ```
    /// use stepwise_core::markers::{Event, MarkerParser, TextPosition};
    /// let mut parser = MarkerParser::new();
    /// parser.set_text_spans(true);
    /// assert_eq!(parser.text_position(), TextPosition::LineStart);
    /// assert!(!parser.may_begin_marker(b'H'));
    /// // The caller shows "Hello\nWorld" itself: one line break, and it ends inside a line.
    /// assert!(parser.skip_text(11, 1, true));
    /// assert_eq!(parser.text_position(), TextPosition::InTextLine);
    /// parser.parse("!\nOPTIONS: A|B\n");
    /// let events: Vec<Event> = parser.take_events().collect();
    /// assert!(matches!(events[1], Event::Marker(_)));
    /// ```
    pub fn skip_text(&mut self, len: usize, lines: u32, ends_in_line: bool) -> bool {
        if self.text_position() == TextPosition::Elsewhere {
            return false;
        }
        self.fed += len;
        self.line += lines;
        self.mode = if ends_in_line {
            Mode::Text
        } else {
            Mode::LineStart
        };
        true
    }
}
