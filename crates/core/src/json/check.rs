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

/// Where the validator stands between two bytes.
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
    /// Inside a string (`key`: an object key, followed by `:`).
    Str { key: bool },
    /// After a backslash in a string.
    Escape { key: bool },
    /// Inside a `\u` escape, with `left` hex digits to come.
    Unicode { key: bool, left: u8 },
    /// Inside a number.
    Number(Num),
    /// Inside `true`, `false` or `null`: the bytes still to come.
    Literal(&'static [u8]),
}

impl State {
    /// Whether whitespace may come here (between tokens, or after the value).
    fn between_tokens(self) -> bool {
        matches!(
            self,
            State::Value
                | State::ValueOrEnd
                | State::KeyOrEnd
                | State::Key
                | State::Colon
                | State::CommaOrEnd
                | State::Done
        )
    }
}

/// Where a number stands: the states after which it may end are `Zero`, `Int`, `Frac` and `Exp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Num {
    Minus,
    Zero,
    Int,
    Dot,
    Frac,
    E,
    ESign,
    Exp,
}

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
    error: Option<JsonError>,
}

impl Default for JsonCheck {
    fn default() -> Self {
        JsonCheck {
            state: State::Value,
            stack: 0,
            depth: 0,
            offset: 0,
            error: None,
        }
    }
}

/// Bytes that end the plain run of a string: `"`, `\\` and control characters.
fn ends_run(b: u8) -> bool {
    b == b'"' || b == b'\\' || b < 0x20
}

/// How many leading bytes satisfy `keep`.
fn skip(bytes: &[u8], keep: impl Fn(u8) -> bool) -> usize {
    bytes.iter().position(|&b| !keep(b)).unwrap_or(bytes.len())
}

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

/// The length of the plain run of a string at the start of `bytes` (up to a byte that
/// [`ends_run`]), eight bytes at a time: string contents are most of a payload's bytes.
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
    at + skip(&bytes[at..], |b| !ends_run(b))
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
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
            State::Str { .. } | State::Unicode { .. } => (true, false),
            State::Escape { .. } => (true, true),
            _ => (false, false),
        };
        (self.depth, in_string, escaped)
    }

    fn read(&mut self, bytes: &[u8], stop_at_end: bool) -> Progress {
        let start = self.offset;
        let mut at = 0;
        let progress = loop {
            if let Some(error) = &self.error {
                // `fail` records offsets from `start`, which stays put during the piece.
                break Progress::Invalid(error.offset.saturating_sub(start));
            }
            if stop_at_end && self.state == State::Done {
                break Progress::Complete(at);
            }
            if at == bytes.len() {
                break Progress::More;
            }
            // Runs that keep the state (string contents, whitespace between tokens, digits)
            // are skipped in tight loops; every other byte goes through `step`.
            match self.state {
                State::Str { key } => {
                    match string_run(&bytes[at..]) {
                        run if at + run == bytes.len() => at = bytes.len(),
                        run => {
                            at += run;
                            match bytes[at] {
                                b'"' => self.state = self.after_string(key),
                                b'\\' => self.state = State::Escape { key },
                                _ => self.fail("control character in a string", at),
                            }
                            at += 1;
                        }
                    }
                    continue;
                }
                state if state.between_tokens() => at += skip(&bytes[at..], is_space),
                State::Number(Num::Int | Num::Frac | Num::Exp) => {
                    at += skip(&bytes[at..], |b| b.is_ascii_digit())
                }
                _ => {}
            }
            if at < bytes.len() && self.step(bytes[at], at) {
                at += 1;
            }
        };
        self.offset = start
            + match progress {
                Progress::Complete(end) => end,
                Progress::More | Progress::Invalid(_) => bytes.len(),
            };
        progress
    }

    /// The verdict once the whole text was fed.
    pub(crate) fn finish(&self) -> Result<(), JsonError> {
        if let Some(error) = &self.error {
            return Err(error.clone());
        }
        match self.state {
            State::Done => Ok(()),
            State::Number(Num::Zero | Num::Int | Num::Frac | Num::Exp) if self.depth == 0 => Ok(()),
            _ => Err(JsonError {
                reason: "unexpected end of the text",
                offset: self.offset,
            }),
        }
    }

    /// One byte that `read` did not skip (string runs, whitespace between tokens, digit runs);
    /// returns whether it was consumed (a number ends at the first byte that cannot continue
    /// it, which is then read again).
    fn step(&mut self, b: u8, at: usize) -> bool {
        match self.state {
            State::Value => self.value(b, at),
            State::ValueOrEnd if b == b']' => self.close(),
            State::ValueOrEnd => self.value(b, at),
            State::KeyOrEnd if b == b'}' => self.close(),
            State::KeyOrEnd | State::Key if b == b'"' => self.state = State::Str { key: true },
            State::KeyOrEnd | State::Key => self.fail("expected a string key", at),
            State::Colon if b == b':' => self.state = State::Value,
            State::Colon => self.fail("expected `:`", at),
            State::CommaOrEnd => self.comma_or_end(b, at),
            State::Done => self.fail("text after the value", at),
            State::Str { .. } => unreachable!("string runs are read by feed"),
            State::Escape { key } => match b {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {
                    self.state = State::Str { key }
                }
                b'u' => self.state = State::Unicode { key, left: 4 },
                _ => self.fail("invalid escape", at),
            },
            State::Unicode { key, left } => {
                if !b.is_ascii_hexdigit() {
                    self.fail("invalid \\u escape", at);
                } else if left == 1 {
                    self.state = State::Str { key };
                } else {
                    self.state = State::Unicode {
                        key,
                        left: left - 1,
                    };
                }
            }
            State::Literal(rest) => {
                if b != rest[0] {
                    self.fail("invalid literal", at);
                } else if rest.len() == 1 {
                    self.state = self.after_value();
                } else {
                    self.state = State::Literal(&rest[1..]);
                }
            }
            State::Number(num) => return self.number(num, b, at),
        }
        true
    }

    fn value(&mut self, b: u8, at: usize) {
        self.state = match b {
            b'"' => State::Str { key: false },
            b'{' | b'[' => {
                if self.depth == MAX_DEPTH {
                    return self.fail("nested too deep", at);
                }
                self.stack = (self.stack << 1) | u128::from(b == b'{');
                self.depth += 1;
                if b == b'{' {
                    State::KeyOrEnd
                } else {
                    State::ValueOrEnd
                }
            }
            b'-' => State::Number(Num::Minus),
            b'0' => State::Number(Num::Zero),
            b'1'..=b'9' => State::Number(Num::Int),
            b't' => State::Literal(b"rue"),
            b'f' => State::Literal(b"alse"),
            b'n' => State::Literal(b"ull"),
            _ => return self.fail("expected a value", at),
        };
    }

    fn comma_or_end(&mut self, b: u8, at: usize) {
        let in_object = self.stack & 1 == 1;
        match (b, in_object) {
            (b',', true) => self.state = State::Key,
            (b',', false) => self.state = State::Value,
            (b'}', true) | (b']', false) => self.close(),
            (_, true) => self.fail("expected `,` or `}`", at),
            (_, false) => self.fail("expected `,` or `]`", at),
        }
    }

    fn close(&mut self) {
        self.stack >>= 1;
        self.depth -= 1;
        self.state = self.after_value();
    }

    fn number(&mut self, num: Num, b: u8, at: usize) -> bool {
        let next = match (num, b) {
            (Num::Minus, b'0') => Num::Zero,
            (Num::Minus, b'1'..=b'9') => Num::Int,
            (Num::Int, b'0'..=b'9') => Num::Int,
            (Num::Zero | Num::Int, b'.') => Num::Dot,
            (Num::Dot | Num::Frac, b'0'..=b'9') => Num::Frac,
            (Num::Zero | Num::Int | Num::Frac, b'e' | b'E') => Num::E,
            (Num::E, b'+' | b'-') => Num::ESign,
            (Num::E | Num::ESign | Num::Exp, b'0'..=b'9') => Num::Exp,
            (Num::Zero | Num::Int | Num::Frac | Num::Exp, _) => {
                // The number ended before this byte, which is read again.
                self.state = self.after_value();
                return false;
            }
            _ => {
                self.fail("invalid number", at);
                return true;
            }
        };
        self.state = State::Number(next);
        true
    }

    fn after_string(&self, key: bool) -> State {
        if key {
            State::Colon
        } else {
            self.after_value()
        }
    }

    fn after_value(&self) -> State {
        if self.depth == 0 {
            State::Done
        } else {
            State::CommaOrEnd
        }
    }

    fn fail(&mut self, reason: &'static str, at: usize) {
        self.error = Some(JsonError {
            reason,
            offset: self.offset + at,
        });
    }
}
