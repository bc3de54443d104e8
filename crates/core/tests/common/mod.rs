//! Helpers shared by the integration tests: vector loading, chunked feeding, event normalization.
#![allow(dead_code, missing_docs)]

pub mod help;

use serde_json::Value;
use stepwise_core::markers::{Event, MarkerParser, MarkerRegistry, Parsed};

/// Reads a vector file from the repository's `tests/vectors/`.
pub fn vectors(name: &str) -> Value {
    let path = format!("{}/../../tests/vectors/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {path}: {e}"))
}

pub fn registry(names: &[String]) -> MarkerRegistry {
    let mut registry = MarkerRegistry::new();
    for name in names {
        registry
            .register_payload(name)
            .expect("valid payload marker name");
    }
    registry
}

/// Splits `text` at the given byte offsets (moved forward to char boundaries).
pub fn split_at_offsets<'a>(text: &'a str, offsets: &[usize]) -> Vec<&'a str> {
    let mut cuts: Vec<usize> = offsets
        .iter()
        .map(|&o| {
            let mut o = o.min(text.len());
            while !text.is_char_boundary(o) {
                o += 1;
            }
            o
        })
        .collect();
    cuts.push(0);
    cuts.push(text.len());
    cuts.sort_unstable();
    cuts.dedup();
    cuts.windows(2).map(|w| &text[w[0]..w[1]]).collect()
}

/// Deterministic chunkings of a text: whole, one char at a time, fixed sizes and pseudo-random.
pub fn chunkings(text: &str) -> Vec<Vec<&str>> {
    let mut out = vec![vec![text]];
    out.push(
        text.char_indices()
            .map(|(i, c)| &text[i..i + c.len_utf8()])
            .collect(),
    );
    for size in [2, 3, 7, 16] {
        out.push(split_at_offsets(
            text,
            &(1..)
                .map(|k| k * size)
                .take_while(|&o| o < text.len())
                .collect::<Vec<_>>(),
        ));
    }
    let mut seed = 0x9E37_79B9_7F4A_7C15u64 ^ text.len() as u64;
    for _ in 0..8 {
        let mut offsets = Vec::new();
        for _ in 0..(text.len() / 3).max(1) {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            offsets.push((seed >> 33) as usize % (text.len() + 1));
        }
        out.push(split_at_offsets(text, &offsets));
    }
    out
}

/// Feeds chunks and returns the normalized events (adjacent text merged) and the parse.
pub fn parse_chunks(registry: MarkerRegistry, chunks: &[&str]) -> (Vec<Event>, Parsed) {
    let mut parser = MarkerParser::with_registry(registry);
    let mut events = Vec::new();
    for chunk in chunks {
        events.extend(parser.feed(chunk));
    }
    events.extend(parser.end());
    (normalize(events), parser.finish())
}

/// Merges adjacent text events: the only way two chunkings may legitimately differ.
pub fn normalize(events: Vec<Event>) -> Vec<Event> {
    let mut out: Vec<Event> = Vec::with_capacity(events.len());
    for event in events {
        match (out.last_mut(), event) {
            (Some(Event::Text { text: last }), Event::Text { text }) => last.push_str(&text),
            (_, event) => out.push(event),
        }
    }
    out
}

pub fn display_text(events: &[Event]) -> String {
    events
        .iter()
        .filter_map(|e| {
            if let Event::Text { text } = e {
                Some(text.as_str())
            } else {
                None
            }
        })
        .collect()
}

/// Fills the keys an expectation leaves out with their empty defaults.
pub fn with_defaults(defaults: Value, expect: &Value) -> Value {
    let mut merged = defaults;
    for (key, value) in expect.as_object().expect("expectation is an object") {
        merged[key] = value.clone();
    }
    merged
}
