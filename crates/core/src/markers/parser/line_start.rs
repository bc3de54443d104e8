//! Deciding the start of a line: held char by char when it spans chunks, or classified in place
//! when it starts in the chunk being fed.

use memchr::memchr;

use super::super::line::{LineStart, MAX_PREFIX_LEN, classify};
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

    /// [`Self::line_start`] for a line that starts in this chunk (nothing held): classifies
    /// the chunk's own bytes, without copying them, and finds where the start is decided (the
    /// shortest decided prefix, as the char-by-char path decides it) in few calls: whether a
    /// prefix is decided only changes once, from undecided to decided, as it grows, so probes
    /// at doubling lengths bracket that point and a binary search finds it. A start still
    /// undecided at the chunk's end is held, as the char-by-char path would have held it.
    pub(super) fn line_start_in_chunk(&mut self, chunk: &str, at: usize) -> usize {
        let bytes = chunk.as_bytes();
        let line_end = memchr(b'\n', &bytes[at..]).map_or(chunk.len(), |offset| at + offset);
        // A prefix longer than MAX_PREFIX_LEN is decided (text): no probe needs to go further.
        let mut limit = line_end.min(at + MAX_PREFIX_LEN + 1);
        while !chunk.is_char_boundary(limit) {
            limit += 1;
        }
        let classify_to = |end: usize| classify(&chunk[at..end], &self.registry);
        let (mut undecided, mut step) = (at, 1);
        let mut decided = None;
        while decided.is_none() && undecided < limit {
            let mut probe = (at + step).min(limit);
            while !chunk.is_char_boundary(probe) {
                probe += 1;
            }
            match classify_to(probe) {
                LineStart::Undecided => undecided = probe,
                start => decided = Some((probe, start)),
            }
            step *= 2;
        }
        let Some((mut end, mut start)) = decided else {
            if line_end < chunk.len() {
                self.emit_text(&chunk[at..=line_end], self.fed + line_end + 1);
                self.line += 1;
                return line_end + 1;
            }
            self.prefix.push_str(&chunk[at..]);
            return chunk.len();
        };
        loop {
            let mut mid = undecided + (end - undecided) / 2;
            while !chunk.is_char_boundary(mid) {
                mid += 1;
            }
            if mid == undecided {
                mid += chunk[mid..].chars().next().map_or(1, char::len_utf8);
            }
            if mid >= end {
                break;
            }
            match classify_to(mid) {
                LineStart::Undecided => undecided = mid,
                found => (end, start) = (mid, found),
            }
        }
        match start {
            LineStart::Marker(id) => self.start_marker(id),
            _ => {
                self.emit_text(&chunk[at..end], self.fed + end);
                self.mode = Mode::Text;
            }
        }
        end
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
