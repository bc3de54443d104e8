//! Finding the end of a JSON body that is not valid JSON: a plain bracket count.
//!
//! While a body is valid, the [`crate::json::JsonCheck`] that validates it also finds its end.
//! Once it is invalid the body must still end somewhere, the same for any chunking: from the
//! point where the validator gave up, brackets outside strings are counted until they balance.

use memchr::memchr2;

/// Bracket depth and string state of the rest of an invalid JSON body.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct BracketScan {
    depth: usize,
    in_string: bool,
    escaped: bool,
}

impl BracketScan {
    /// Starts where the validator stood: `(depth, in_string, escaped)`.
    pub(crate) fn resume((depth, in_string, escaped): (usize, bool, bool)) -> Self {
        BracketScan {
            depth,
            in_string,
            escaped,
        }
    }

    /// Scans a piece; returns the offset just past the close that balances the brackets, or
    /// `None` when the body goes on past this piece.
    pub(crate) fn scan(&mut self, bytes: &[u8]) -> Option<usize> {
        let mut at = 0;
        while at < bytes.len() {
            if self.escaped {
                self.escaped = false;
            } else if self.in_string {
                at += memchr2(b'"', b'\\', &bytes[at..])?;
                if bytes[at] == b'"' {
                    self.in_string = false;
                } else {
                    self.escaped = true;
                }
            } else {
                match bytes[at] {
                    b'"' => self.in_string = true,
                    b'{' | b'[' => self.depth += 1,
                    b'}' | b']' => {
                        self.depth = self.depth.saturating_sub(1);
                        if self.depth == 0 {
                            return Some(at + 1);
                        }
                    }
                    _ => {}
                }
            }
            at += 1;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::BracketScan;
    use crate::json::{JsonCheck, Progress};

    /// Where the parser ends a body fed in pieces: the validator, then the bracket count from
    /// the byte that broke the JSON (as `MarkerParser::body` does).
    fn end_in_pieces(body: &[u8], cuts: &[usize]) -> Option<usize> {
        let (mut check, mut fallback) = (JsonCheck::default(), None::<BracketScan>);
        let mut from = 0;
        let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (body.len() + 1)).collect();
        cuts.sort_unstable();
        cuts.push(body.len());
        for cut in cuts {
            let piece = &body[from..cut.max(from)];
            let close = match &mut fallback {
                Some(scan) => scan.scan(piece),
                None => match check.feed_value(piece) {
                    Progress::More => None,
                    Progress::Complete(end) => Some(end),
                    Progress::Invalid(bad) => {
                        let mut scan = BracketScan::resume(check.nesting());
                        let close = scan.scan(&piece[bad..]).map(|end| bad + end);
                        fallback = Some(scan);
                        close
                    }
                },
            };
            if let Some(end) = close {
                return Some(from + end);
            }
            from = cut.max(from);
        }
        None
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// The validator finds the same end as a bracket count over the whole body, valid or
        /// not, however the body is cut.
        #[test]
        fn bodies_end_where_a_plain_bracket_count_ends_them(
            rest in "[{}\\[\\]\"\\\\:, a1.e\\-tn\n]{0,40}",
            open in prop::sample::select(vec!["{", "["]),
            cuts in prop::collection::vec(any::<usize>(), 0..5),
        ) {
            let body = format!("{open}{rest}");
            let whole = BracketScan::resume((0, false, false)).scan(body.as_bytes());
            prop_assert_eq!(end_in_pieces(body.as_bytes(), &cuts), whole, "{}", body);
        }
    }

    #[test]
    fn brackets_in_strings_and_escaped_quotes_do_not_count() {
        let mut scan = BracketScan::resume((1, false, false));
        assert_eq!(scan.scan(br#""}\"]" ] tail"#), Some(8));
        let mut scan = BracketScan::resume((1, true, true));
        assert_eq!(scan.scan(br#""} ]"#), None);
        assert_eq!(scan.scan(br#"" } x"#), Some(3));
    }
}
