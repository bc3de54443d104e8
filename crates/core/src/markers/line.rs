//! Recognizing a marker at the start of a line, tolerating the decoration models add.
//!
//! Accepted before the name: indentation, one list bullet (`-`, `*`, `+`, `•`, `1.`, `1)`), and
//! bold (`**` or `__`). After the name: `:` or `**:`. The decision depends only on the line's
//! text so far, so it is the same however the stream was chunked.

use super::registry::{MarkerId, MarkerRegistry};

/// Most indentation before a marker, in spaces or tabs.
const MAX_INDENT: usize = 64;
/// A line start still undecided after this many bytes is display text: it bounds what is held
/// back. Any accepted prefix (indent, bullet and its spaces, bold, name, bold, colon) fits.
pub(crate) const MAX_PREFIX_LEN: usize = 256;

/// What the start of a line is, as far as it has been seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineStart {
    /// Could still become a marker: more text is needed.
    Undecided,
    /// Display text.
    Text,
    /// A marker whose name and colon end exactly at the end of the prefix.
    Marker(MarkerId),
}

/// Whether a line whose first byte is `first` may be a marker line: most lines are decided
/// text by their first byte alone (indentation, a bullet, bold or a name's initial may begin a
/// marker; [`classify`] decides the same, later, for every other byte).
pub(crate) fn may_begin_marker(first: u8, registry: &MarkerRegistry) -> bool {
    is_decoration_lead(first) || registry.has_initial(first)
}

/// Whether `first` may begin the decoration before a marker's name: indentation, a bullet
/// (`•` begins with 0xE2), bold.
const fn is_decoration_lead(first: u8) -> bool {
    matches!(
        first,
        b' ' | b'\t' | b'-' | b'+' | b'*' | b'_' | b'0'..=b'9' | 0xE2
    )
}

/// [`may_begin_marker`] for every byte at once: bit `b % 32` of word `b / 32` is set when a
/// line beginning with byte `b` may be a marker line.
pub(crate) fn marker_lead_map(registry: &MarkerRegistry) -> [u32; 8] {
    const DECORATION: [u32; 8] = {
        let mut map = [0; 8];
        let mut byte = 0;
        while byte < 256 {
            if is_decoration_lead(byte as u8) {
                map[byte >> 5] |= 1 << (byte & 31);
            }
            byte += 1;
        }
        map
    };
    let mut map = DECORATION;
    // The initials' bit `n` is the letter `A + n`; `A` (65) is bit 1 of word 2.
    map[usize::from(b'A' >> 5)] |= registry.initials() << (b'A' & 31);
    map
}

/// Classifies the start of a line (`prefix` holds no line break).
pub(crate) fn classify(prefix: &str, registry: &MarkerRegistry) -> LineStart {
    if prefix.len() > MAX_PREFIX_LEN {
        return LineStart::Text;
    }
    if let Some(&first) = prefix.as_bytes().first()
        && !may_begin_marker(first, registry)
    {
        return LineStart::Text;
    }
    let mut cursor = Cursor {
        rest: prefix.as_bytes(),
    };
    let indent = cursor.skip_while(|b| b == b' ' || b == b'\t');
    if indent > MAX_INDENT {
        return LineStart::Text;
    }
    match cursor.bullet() {
        Step::Done => {}
        Step::NeedMore => return LineStart::Undecided,
        Step::Fail => return LineStart::Text,
    }
    match cursor.bold() {
        Step::Done | Step::Fail => {}
        Step::NeedMore => return LineStart::Undecided,
    }
    // The name is ASCII: it is compared as bytes.
    let name = cursor.take_while(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
    if name.first().is_none_or(|b| !b.is_ascii_uppercase()) {
        return if cursor.rest.is_empty() && name.is_empty() {
            LineStart::Undecided
        } else {
            LineStart::Text
        };
    }
    // `__NAME__:` puts the closing underscores into the name's character class; names never end
    // with `_`, so up to two trailing underscores are bold, not name.
    let trailing = name.iter().rev().take_while(|&&b| b == b'_').count();
    let bare = &name[..name.len() - trailing];
    let bold_closed = trailing == 2;
    match cursor.rest {
        [] => undecided_if(
            registry.has_prefix(name) || (trailing <= 2 && registry.lookup(bare).is_some()),
        ),
        [b':'] if bold_closed => marker(registry, bare),
        [b':'] => marker(registry, name),
        [b'*'] | [b'*', b'*'] => undecided_if(registry.lookup(name).is_some()),
        [b'*', b'*', b':'] => marker(registry, name),
        _ => LineStart::Text,
    }
}

fn undecided_if(possible: bool) -> LineStart {
    if possible {
        LineStart::Undecided
    } else {
        LineStart::Text
    }
}

fn marker(registry: &MarkerRegistry, name: &[u8]) -> LineStart {
    registry
        .lookup(name)
        .map_or(LineStart::Text, LineStart::Marker)
}

enum Step {
    Done,
    NeedMore,
    Fail,
}

struct Cursor<'a> {
    rest: &'a [u8],
}

impl<'a> Cursor<'a> {
    fn take_while(&mut self, keep: impl Fn(u8) -> bool) -> &'a [u8] {
        let n = self.rest.iter().take_while(|&&b| keep(b)).count();
        let (taken, rest) = self.rest.split_at(n);
        self.rest = rest;
        taken
    }

    fn skip_while(&mut self, keep: impl Fn(u8) -> bool) -> usize {
        self.take_while(keep).len()
    }

    /// An optional list bullet followed by at least one space.
    fn bullet(&mut self) -> Step {
        let marker_len = match self.rest {
            [] => return Step::NeedMore,
            [b'-' | b'+', ..] => 1,
            [b'*', b'*', ..] => return Step::Done, // bold, not a bullet
            [b'*'] => return Step::NeedMore,
            [b'*', ..] => 1,
            [0xE2, 0x80, 0xA2, ..] => 3, // •
            [0xE2] | [0xE2, 0x80] => return Step::NeedMore,
            [d, ..] if d.is_ascii_digit() => {
                let digits = self.rest.iter().take_while(|b| b.is_ascii_digit()).count();
                match self.rest.get(digits) {
                    _ if digits > 3 => return Step::Fail,
                    None => return Step::NeedMore,
                    Some(b'.' | b')') => digits + 1,
                    Some(_) => return Step::Fail,
                }
            }
            _ => return Step::Done,
        };
        match self.rest.get(marker_len) {
            None => Step::NeedMore,
            Some(b' ' | b'\t') => {
                self.rest = &self.rest[marker_len..];
                self.skip_while(|b| b == b' ' || b == b'\t');
                if self.rest.is_empty() {
                    Step::NeedMore
                } else {
                    Step::Done
                }
            }
            Some(_) => Step::Fail,
        }
    }

    /// Optional `**` or `__` opening bold.
    fn bold(&mut self) -> Step {
        match self.rest {
            [b'*', b'*', ..] | [b'_', b'_', ..] => {
                self.rest = &self.rest[2..];
                if self.rest.is_empty() {
                    Step::NeedMore
                } else {
                    Step::Done
                }
            }
            [b'*'] | [b'_'] => Step::NeedMore,
            _ => Step::Fail,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(prefix: &str, expect: LineStart) {
        assert_eq!(
            classify(prefix, &MarkerRegistry::new()),
            expect,
            "prefix {prefix:?}"
        );
    }

    #[test]
    fn the_lead_map_says_what_classify_decides_from_a_first_byte() {
        let mut registry = MarkerRegistry::new();
        registry.register_payload("ZEBRA_PLAN").unwrap();
        let map = marker_lead_map(&registry);
        for byte in 0..=u8::MAX {
            let in_map = map[usize::from(byte >> 5)] >> (byte & 31) & 1 == 1;
            assert_eq!(
                in_map,
                may_begin_marker(byte, &registry),
                "byte {byte:#04x}"
            );
            // A byte the map rules out begins text, whatever follows.
            if !in_map && byte.is_ascii() {
                let line = format!("{}SUGGESTIONS: a", byte as char);
                assert_eq!(classify(&line[..1], &registry), LineStart::Text);
            }
        }
        assert!(map[2] >> (b'Z' & 31) & 1 == 1, "a payload marker's initial");
    }

    #[test]
    fn decorated_marker_names_are_recognized_at_their_colon() {
        for line in [
            "SUGGESTIONS:",
            "  SUGGESTIONS:",
            "- SUGGESTIONS:",
            "* **SUGGESTIONS**:",
            "**SUGGESTIONS:",
            "1. SUGGESTIONS:",
            "• SUGGESTIONS:",
            "__SUGGESTIONS__:",
        ] {
            check(line, LineStart::Marker(MarkerId::Suggestions));
        }
    }

    #[test]
    fn every_proper_prefix_of_a_marker_line_is_undecided() {
        let line = "  - **SUGGESTED_ACTIONS**:";
        for end in 1..line.len() {
            check(&line[..end], LineStart::Undecided);
        }
        check(line, LineStart::Marker(MarkerId::SuggestedActions));
    }

    #[test]
    fn prose_is_decided_as_text_early() {
        for line in [
            "Here",
            "Suggestions:",
            "SUGGESTIONSX",
            "SUGGESTIONS :",
            "-x",
            "12345. ",
            "OPTIONSS:",
            "*italic",
            "1.5",
            "PURPOSE:",
        ] {
            check(line, LineStart::Text);
        }
    }
}
