//! The synthesis's parts (context-handshake.md phase 3): its `summary` (the report's text) and
//! its `points_of_interest`, which the synthesis prompt asks for as one
//! `POINTS_OF_INTEREST: ["…", "…"]` marker line, read by the core's marker parser.

use crate::markers::{MarkerParser, MarkerRegistry};

/// The marker the synthesis model writes its points of interest after.
pub const POINTS_MARKER: &str = "POINTS_OF_INTEREST";
/// Most points of interest kept.
pub const MAX_POINTS: usize = 20;
/// Longest point of interest kept, in characters.
pub const MAX_POINT_CHARS: usize = 500;

/// The instruction appended to the synthesis prompt.
pub const POINTS_INSTRUCTION: &str = "End with one line listing 3 to 7 points worth following up, as a JSON array of short strings:\nPOINTS_OF_INTEREST: [\"first point\", \"second point\"]\n";

/// A synthesis split into its summary and its points of interest.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SynthesisParts {
    /// The report without the marker line, trimmed.
    pub summary: String,
    /// The points, in order, without repeats or blanks, at most [`MAX_POINTS`], each cut to
    /// [`MAX_POINT_CHARS`].
    pub points_of_interest: Vec<String>,
}

/// Splits a synthesis the model wrote. A malformed or missing marker leaves no points; the
/// summary is then the whole text.
///
/// ```
/// use stepwise_core::research::split_synthesis;
/// let parts = split_synthesis("Both agree.\nPOINTS_OF_INTEREST: [\"Dose\", \"Cost\", \"Dose\"]\n");
/// assert_eq!(parts.summary, "Both agree.");
/// assert_eq!(parts.points_of_interest, ["Dose", "Cost"]);
/// ```
pub fn split_synthesis(text: &str) -> SynthesisParts {
    let mut registry = MarkerRegistry::new();
    registry
        .register_payload(POINTS_MARKER)
        .expect("a valid marker name");
    let mut parser = MarkerParser::with_registry(registry);
    parser.feed(text);
    parser.feed("\n");
    let parsed = parser.finish();
    let mut points: Vec<String> = Vec::new();
    let wanted = POINTS_MARKER.to_ascii_lowercase();
    for payload in parsed.payloads.iter().filter(|p| p.payload_type == wanted) {
        let Ok(items) = serde_json::from_str::<Vec<serde_json::Value>>(payload.data.as_str())
        else {
            continue;
        };
        for item in items {
            let Some(text) = item.as_str().map(str::trim).filter(|t| !t.is_empty()) else {
                continue;
            };
            let text: String = text.chars().take(MAX_POINT_CHARS).collect();
            if points.len() < MAX_POINTS && !points.contains(&text) {
                points.push(text);
            }
        }
    }
    SynthesisParts {
        summary: parsed.message,
        points_of_interest: points,
    }
}

#[cfg(test)]
mod tests {
    use super::split_synthesis;

    #[test]
    fn a_missing_or_malformed_marker_keeps_the_whole_text_and_no_points() {
        assert!(
            split_synthesis("Just a report.")
                .points_of_interest
                .is_empty()
        );
        let parts = split_synthesis("Report.\nPOINTS_OF_INTEREST: [1, \"ok\", \"\"]\n");
        assert_eq!(parts.points_of_interest, ["ok"]);
        assert_eq!(parts.summary, "Report.");
    }

    #[test]
    fn points_are_capped_in_count_and_length() {
        let many: Vec<String> = (0..30).map(|i| format!("p{i}")).collect();
        let text = format!(
            "R\nPOINTS_OF_INTEREST: {}\n",
            serde_json::to_string(&many).unwrap()
        );
        assert_eq!(split_synthesis(&text).points_of_interest.len(), 20);
        let long = format!("R\nPOINTS_OF_INTEREST: [\"{}\"]\n", "x".repeat(900));
        assert_eq!(split_synthesis(&long).points_of_interest[0].len(), 500);
    }
}
