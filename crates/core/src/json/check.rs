//! The incremental JSON validator: bytes go in, in chunks split anywhere; a verdict comes out.

use std::fmt;

/// Deepest nesting of arrays and objects a text may have: the deepest that `serde_json` reads
/// into a `Value`, so every accepted text can be read that way.
pub const MAX_DEPTH: usize = 127;

/// Why a text is not valid JSON, and the byte offset where that was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    /// What was expected or found.
    pub reason: &'static str,
    /// 0-based byte offset into the text.
    pub offset: usize,
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.reason, self.offset)
    }
}

impl std::error::Error for JsonError {}

/// Where the validator stands between two bytes: a plain tag, so that moving on from a token
/// is one jump.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// A value must start here (after `:`, after `,` in an array, or at the start).
    Value,
    /// Just after `[`: a value or `]`.
    ValueOrEnd,
    /// Just after `{`: a key or `}`.
    KeyOrEnd,
    /// After `,` in an object: a key.
    Key,
    /// After a key: `:`.
    Colon,
    /// After a value inside a container: `,` or the container's close.
    CommaOrEnd,
    /// After the top-level value: only whitespace.
    Done,
    /// Inside a string that is a value.
    Str,
    /// Inside a string that is an object key (followed by `:`).
    KeyStr,
    /// After a backslash in a value.
    Escape,
    /// After a backslash in a key.
    KeyEscape,
    /// Inside a `\u` escape of a value ([`JsonCheck::pending`]: the hex digits to come).
    Unicode,
    /// Inside a `\u` escape of a key.
    KeyUnicode,
    /// Inside `true`, `false` or `null` ([`JsonCheck::pending`]: the index in [`LITERALS`] of
    /// the byte to come).
    Literal,
    /// A number's `-`.
    Minus,
    /// A number's leading `0` (the number may end after it).
    Zero,
    /// A number's integer digits (it may end after them).
    Int,
    /// A number's `.`.
    Dot,
    /// A number's fraction digits (it may end after them).
    Frac,
    /// A number's `e` or `E`.
    E,
    /// The sign of a number's exponent.
    ESign,
    /// A number's exponent digits (it may end after them).
    Exp,
}

/// The rest of `true`, `false` and `null` after their first byte, each ended by a 0.
const LITERALS: &[u8; 13] = b"rue\0alse\0ull\0";

/// How far a piece of a streamed value got ([`JsonCheck::feed_value`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Progress {
    /// Every byte was read and the value goes on.
    More,
    /// The value ended just before byte `n` of the piece; the rest is not part of it.
    Complete(usize),
    /// Byte `n` of the piece made the text invalid (see [`JsonCheck::finish`]).
    Invalid(usize),
}

/// Validates one JSON text fed in pieces. Work is linear in the input, state is constant size.
#[derive(Debug, Clone)]
pub(crate) struct JsonCheck {
    state: State,
    /// One bit per open container, innermost lowest: set for an object, clear for an array.
    stack: u128,
    depth: usize,
    offset: usize,
    /// Line breaks read as whitespace between tokens so far.
    lines: usize,
    /// The hex digits still to come in a `\u` escape, or the index in [`LITERALS`] of a
    /// literal's next byte.
    pending: u8,
    error: Option<JsonError>,
}

impl Default for JsonCheck {
    fn default() -> Self {
        JsonCheck {
            state: State::Value,
            stack: 0,
            depth: 0,
            offset: 0,
            lines: 0,
            pending: 0,
            error: None,
        }
    }
}

/// Bit `b` set for each whitespace byte `b` of JSON.
const SPACES: u64 = 1 << b' ' | 1 << b'\t' | 1 << b'\n' | 1 << b'\r';

const LOW: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `word` that is below `n` (`n` ≤ 0x80), and possibly of bytes
/// above the lowest such byte (a borrow can run up; only the lowest mark is exact).
fn below(word: u64, n: u8) -> u64 {
    word.wrapping_sub(LOW * u64::from(n)) & !word & HIGH
}

/// The high bit of each byte of `word` equal to `b` (the lowest mark is exact, as in `below`).
fn equal(word: u64, b: u8) -> u64 {
    below(word ^ (LOW * u64::from(b)), 1)
}

/// The length of the plain run of a string at the start of `bytes` (up to `"`, `\\` or a
/// control character), eight bytes at a time: string contents are most of a payload's bytes.
#[inline(always)]
fn string_run(bytes: &[u8]) -> usize {
    let mut at = 0;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let word = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        let marks = below(word, 0x20) | equal(word, b'"') | equal(word, b'\\');
        if marks != 0 {
            return at + (marks.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    while let Some(&b) = bytes.get(at) {
        if b == b'"' || b == b'\\' || b < 0x20 {
            break;
        }
        at += 1;
    }
    at
}

/// The state after a value that ends at `depth`.
fn after_value(depth: usize) -> State {
    if depth == 0 {
        State::Done
    } else {
        State::CommaOrEnd
    }
}

impl JsonCheck {
    /// Checks the next piece of the text. After the first error the rest is ignored.
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        self.read(bytes, false);
    }

    /// Checks the next piece of a value that is followed by other text: reading stops where
    /// the value ends, or at the byte that makes it invalid.
    pub(crate) fn feed_value(&mut self, bytes: &[u8]) -> Progress {
        self.read(bytes, true)
    }

    /// Bracket depth, whether inside a string, and whether just after a backslash in one: where
    /// a plain bracket scan stands at this point of the text.
    pub(crate) fn nesting(&self) -> (usize, bool, bool) {
        let (in_string, escaped) = match self.state {
            State::Str | State::KeyStr | State::Unicode | State::KeyUnicode => (true, false),
            State::Escape | State::KeyEscape => (true, true),
            _ => (false, false),
        };
        (self.depth, in_string, escaped)
    }

    /// The line breaks read so far, all of them whitespace between tokens (a line break
    /// anywhere else makes the text invalid, and is not read).
    pub(crate) fn lines(&self) -> usize {
        self.lines
    }

    fn read(&mut self, bytes: &[u8], stop_at_end: bool) -> Progress {
        let start = self.offset;
        let progress = match &self.error {
            // `offset` is where the piece starts; an earlier error is before it.
            Some(error) => Progress::Invalid(error.offset.saturating_sub(start)),
            None => match self.scan(bytes, stop_at_end) {
                Ok(progress) => progress,
                Err((reason, at)) => {
                    self.error = Some(JsonError {
                        reason,
                        offset: start + at,
                    });
                    Progress::Invalid(at)
                }
            },
        };
        self.offset = start
            + match progress {
                Progress::Complete(end) => end,
                Progress::More | Progress::Invalid(_) => bytes.len(),
            };
        progress
    }

    /// Reads `bytes` from the current state: the state lives in locals while a piece is read
    /// (runs of string contents, whitespace and digits in tight loops, every other byte one
    /// match), and is stored back at the end of the piece or at the byte that broke the text
    /// (the state before it, which [`Self::nesting`] reads).
    fn scan(&mut self, bytes: &[u8], stop_at_end: bool) -> Result<Progress, (&'static str, usize)> {
        let (mut state, mut stack, mut depth) = (self.state, self.stack, self.depth);
        let (mut lines, mut pending) = (self.lines, self.pending);
        let mut at = 0;
        let result = 'scan: loop {
            // Tokens of several bytes: strings, escapes, literals and numbers.
            let key = matches!(state, State::KeyStr | State::KeyEscape | State::KeyUnicode);
            match state {
                State::Str | State::KeyStr => {
                    at += string_run(&bytes[at..]);
                    let Some(&b) = bytes.get(at) else {
                        break Ok(Progress::More);
                    };
                    at += 1;
                    match b {
                        // The string's end: on to what follows it, below.
                        b'"' if key => state = State::Colon,
                        b'"' => state = after_value(depth),
                        b'\\' => {
                            state = if key { State::KeyEscape } else { State::Escape };
                            continue;
                        }
                        _ => break Err(("control character in a string", at - 1)),
                    }
                }
                State::Escape | State::KeyEscape => {
                    let Some(&b) = bytes.get(at) else {
                        break Ok(Progress::More);
                    };
                    state = match b {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' if key => {
                            State::KeyStr
                        }
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => State::Str,
                        b'u' => {
                            pending = 4;
                            if key {
                                State::KeyUnicode
                            } else {
                                State::Unicode
                            }
                        }
                        _ => break Err(("invalid escape", at)),
                    };
                    at += 1;
                    continue;
                }
                State::Unicode | State::KeyUnicode => {
                    let Some(&b) = bytes.get(at) else {
                        break Ok(Progress::More);
                    };
                    if !b.is_ascii_hexdigit() {
                        break Err(("invalid \\u escape", at));
                    }
                    pending -= 1;
                    if pending == 0 {
                        state = if key { State::KeyStr } else { State::Str };
                    }
                    at += 1;
                    continue;
                }
                State::Literal => {
                    let Some(&b) = bytes.get(at) else {
                        break Ok(Progress::More);
                    };
                    let next = usize::from(pending);
                    if b != LITERALS[next] {
                        break Err(("invalid literal", at));
                    }
                    pending += 1;
                    if LITERALS[next + 1] == 0 {
                        state = after_value(depth);
                    }
                    at += 1;
                    continue;
                }
                State::Minus
                | State::Zero
                | State::Int
                | State::Dot
                | State::Frac
                | State::E
                | State::ESign
                | State::Exp => {
                    if matches!(state, State::Int | State::Frac | State::Exp) {
                        while let Some(b'0'..=b'9') = bytes.get(at) {
                            at += 1;
                        }
                    }
                    let Some(&b) = bytes.get(at) else {
                        break Ok(Progress::More);
                    };
                    state = match (state, b) {
                        (State::Minus, b'0') => State::Zero,
                        (State::Minus, b'1'..=b'9') => State::Int,
                        (State::Zero | State::Int, b'.') => State::Dot,
                        (State::Dot, b'0'..=b'9') => State::Frac,
                        (State::Zero | State::Int | State::Frac, b'e' | b'E') => State::E,
                        (State::E, b'+' | b'-') => State::ESign,
                        (State::E | State::ESign, b'0'..=b'9') => State::Exp,
                        (State::Zero | State::Int | State::Frac | State::Exp, _) => {
                            // The number ended before this byte, which is read again.
                            state = after_value(depth);
                            continue;
                        }
                        _ => break Err(("invalid number", at)),
                    };
                    at += 1;
                    continue;
                }
                _ => {}
            }
            // Between tokens, and through the strings that follow them (the usual token):
            // whitespace, then one byte that moves the state on.
            loop {
                if stop_at_end && state == State::Done {
                    break 'scan Ok(Progress::Complete(at));
                }
                let mut breaks = 0;
                let b = loop {
                    let Some(&b) = bytes.get(at) else {
                        lines += breaks;
                        break 'scan Ok(Progress::More);
                    };
                    if b > b' ' || (1u64 << b) & SPACES == 0 {
                        break b;
                    }
                    breaks += usize::from(b == b'\n');
                    at += 1;
                };
                lines += breaks;
                // A string's plain run is read here; what ends it but its close quote (an
                // escape, a control character, the piece's end) is read above.
                let key = match state {
                    State::CommaOrEnd => match (b, stack & 1 == 1) {
                        (b',', true) => {
                            state = State::Key;
                            at += 1;
                            continue;
                        }
                        (b',', false) => {
                            state = State::Value;
                            at += 1;
                            continue;
                        }
                        (b'}', true) | (b']', false) => {
                            stack >>= 1;
                            depth -= 1;
                            state = after_value(depth);
                            at += 1;
                            continue;
                        }
                        (_, true) => break 'scan Err(("expected `,` or `}`", at)),
                        (_, false) => break 'scan Err(("expected `,` or `]`", at)),
                    },
                    State::KeyOrEnd | State::Key if b == b'"' => true,
                    State::Colon if b == b':' => {
                        state = State::Value;
                        at += 1;
                        continue;
                    }
                    // An object or an array closed at once (`{}`, `[]`).
                    State::KeyOrEnd | State::ValueOrEnd
                        if b == if state == State::KeyOrEnd { b'}' } else { b']' } =>
                    {
                        stack >>= 1;
                        depth -= 1;
                        state = after_value(depth);
                        at += 1;
                        continue;
                    }
                    State::Value | State::ValueOrEnd if b == b'"' => false,
                    State::Value | State::ValueOrEnd if b == b'{' || b == b'[' => {
                        if depth == MAX_DEPTH {
                            break 'scan Err(("nested too deep", at));
                        }
                        stack = (stack << 1) | u128::from(b == b'{');
                        depth += 1;
                        state = if b == b'{' {
                            State::KeyOrEnd
                        } else {
                            State::ValueOrEnd
                        };
                        at += 1;
                        continue;
                    }
                    State::Value | State::ValueOrEnd => {
                        (state, pending) = match b {
                            b'-' => (State::Minus, pending),
                            b'0' => (State::Zero, pending),
                            b'1'..=b'9' => (State::Int, pending),
                            b't' => (State::Literal, 0),
                            b'f' => (State::Literal, 4),
                            b'n' => (State::Literal, 9),
                            _ => break 'scan Err(("expected a value", at)),
                        };
                        at += 1;
                        continue 'scan;
                    }
                    State::KeyOrEnd | State::Key => break 'scan Err(("expected a string key", at)),
                    State::Colon => break 'scan Err(("expected `:`", at)),
                    _ => break 'scan Err(("text after the value", at)),
                };
                at += 1;
                at += string_run(&bytes[at..]);
                if bytes.get(at) != Some(&b'"') {
                    state = if key { State::KeyStr } else { State::Str };
                    continue 'scan;
                }
                state = if key {
                    State::Colon
                } else {
                    after_value(depth)
                };
                at += 1;
            }
        };
        (self.state, self.stack, self.depth) = (state, stack, depth);
        (self.lines, self.pending) = (lines, pending);
        result
    }

    /// The verdict once the whole text was fed.
    pub(crate) fn finish(&self) -> Result<(), JsonError> {
        if let Some(error) = &self.error {
            return Err(error.clone());
        }
        match self.state {
            State::Done => Ok(()),
            State::Zero | State::Int | State::Frac | State::Exp if self.depth == 0 => Ok(()),
            _ => Err(JsonError {
                reason: "unexpected end of the text",
                offset: self.offset,
            }),
        }
    }
}
