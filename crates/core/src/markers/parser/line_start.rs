//! Deciding the start of a line: held char by char when it spans chunks, or classified in place
//! when it starts in the chunk being fed.

use memchr::memchr;

use super::super::line::{LineStart, MAX_PREFIX_LEN, classify, may_begin_marker};
use super::super::registry::MarkerId;
use super::{MarkerParser, Mode};

impl MarkerParser {
    /// One character at the start of a line (or of the line after a fenced body).
    pub(super) fn line_start(&mut self, chunk: &str, at: usize) -> usize {
        let ch = chunk[at..]
            .chars()
            .next()
            .expect("at < chunk.len() on a char boundary");
        if ch == '\n' {
            let mut held = std::mem::take(&mut self.prefix);
            held.push('\n');
            self.emit_text(&held, self.fed + at + 1);
            self.line += 1;
            self.mode = Mode::LineStart;
            return at + 1;
        }
        self.prefix.push(ch);
        if self.mode == Mode::FenceClose {
            let rest = self.prefix.trim_start_matches([' ', '\t']);
            if rest.starts_with("```") {
                self.prefix.clear();
                self.mode = Mode::SkipLine;
                return at + ch.len_utf8();
            }
            if "```".starts_with(rest) && self.prefix.len() <= MAX_PREFIX_LEN {
                return at + ch.len_utf8();
            }
            self.mode = Mode::LineStart;
        }
        match classify(&self.prefix, &self.registry) {
            LineStart::Undecided => {}
            LineStart::Text => {
                let held = std::mem::take(&mut self.prefix);
                self.emit_text(&held, self.fed + at + ch.len_utf8());
                self.mode = Mode::Text;
            }
            LineStart::Marker(id) => {
                self.prefix.clear();
                self.start_marker(id);
            }
        }
        at + ch.len_utf8()
    }

    /// [`Self::line_start`] for a line that starts in this chunk (nothing held): decides the
    /// start from the chunk's own bytes, without copying them, as the char-by-char path
    /// decides it at the line's shortest decided prefix. A marker is decided exactly at a
    /// colon, and the first colon of the line is the only place one can be (names, bullets
    /// and bold hold none), so two calls of `classify` decide a line: up to its first colon
    /// (a marker there, when one character less is still undecided) or up to what the chunk
    /// holds of it (text or still undecided). A start still undecided at the chunk's end is
    /// held, as the char-by-char path would have held it.
    pub(super) fn line_start_in_chunk(&mut self, chunk: &str, at: usize) -> usize {
        let run_end = self.text_run(chunk, at);
        if run_end > at {
            return run_end;
        }
        let bytes = chunk.as_bytes();
        let line_end = memchr(b'\n', &bytes[at..]).map_or(chunk.len(), |offset| at + offset);
        // A prefix longer than MAX_PREFIX_LEN is decided (text): nothing past it is looked at.
        let mut limit = line_end.min(at + MAX_PREFIX_LEN + 1);
        while !chunk.is_char_boundary(limit) {
            limit += 1;
        }
        let colon = memchr(b':', &bytes[at..limit]).map(|offset| at + offset + 1);
        let seen = colon.unwrap_or(limit);
        let decided = match classify(&chunk[at..seen], &self.registry) {
            // `classify` finds a marker only where the same line one character shorter is still
            // undecided (the char-by-char path's shortest decided prefix is then the colon).
            LineStart::Marker(id) => {
                debug_assert_eq!(
                    classify(&chunk[at..seen - 1], &self.registry),
                    LineStart::Undecided
                );
                self.start_marker(id);
                return seen;
            }
            LineStart::Text => true,
            LineStart::Undecided => false,
        };
        if line_end < chunk.len() {
            // A whole line, text either way: decided text, or a line ended while undecided.
            self.emit_text(&chunk[at..=line_end], self.fed + line_end + 1);
            self.line += 1;
            return line_end + 1;
        }
        if decided {
            self.emit_text(&chunk[at..], self.fed + chunk.len());
            self.mode = Mode::Text;
        } else {
            self.prefix.push_str(&chunk[at..]);
        }
        chunk.len()
    }

    /// The run of lines from `at` (a line start, nothing held) that their first byte shows to
    /// be display text, emitted as one piece of text: most of a reply, crossed with one line
    /// break search and one byte test a line. Returns where the run ends: at the start of a
    /// line that may be a marker (the mode stays at a line start), or at the chunk's end
    /// inside a text line (the mode is then text); `at` itself when the first line may be a
    /// marker.
    fn text_run(&mut self, chunk: &str, at: usize) -> usize {
        let bytes = chunk.as_bytes();
        let mut cursor = at;
        let mut lines = 0;
        while cursor < bytes.len() && !may_begin_marker(bytes[cursor], &self.registry) {
            match memchr(b'\n', &bytes[cursor..]) {
                Some(offset) => {
                    cursor += offset + 1;
                    lines += 1;
                }
                None => {
                    cursor = bytes.len();
                    self.mode = Mode::Text;
                }
            }
        }
        if cursor > at {
            self.emit_text(&chunk[at..cursor], self.fed + cursor);
            self.line += lines;
        }
        cursor
    }

    pub(super) fn start_marker(&mut self, id: MarkerId) {
        self.value.clear();
        self.marker_line = self.line;
        self.mode = if id.takes_json_body() {
            Mode::AwaitBody {
                id,
                crossed_line: false,
                fenced: false,
            }
        } else {
            Mode::LineValue(id)
        };
    }
}
