//! Fuzz target: the marker parser never panics, and any split of any input gives the same
//! events (adjacent text merged) and the same parse as the whole input, in span mode too, and
//! with the lines of display text a caller finds itself taken through `skip_text`; span mode's
//! value places cut each marker line's strings from the chunk.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stepwise_core::markers::{
    Event, Marker, MarkerParser, MarkerRegistry, Parsed, TextPosition, TextSource,
};

fn parse(chunks: &[&str], spans: bool, skipping: bool) -> (Vec<Event>, Parsed) {
    let mut registry = MarkerRegistry::new();
    registry.register_payload("SCHEMA_PROPOSAL").unwrap();
    let mut parser = MarkerParser::with_registry(registry);
    parser.set_text_spans(spans);
    let mut events: Vec<Event> = Vec::new();
    let push = |event: Event, events: &mut Vec<Event>| match (events.last_mut(), event) {
        (Some(Event::Text { text: last }), Event::Text { text }) => last.push_str(&text),
        (_, event) => events.push(event),
    };
    for whole in chunks.iter().copied().chain([""]) {
        let chunk = if skipping { skip_text_lines(&mut parser, whole) } else { whole };
        if chunk.len() < whole.len() {
            let text = whole[..whole.len() - chunk.len()].to_owned();
            push(Event::Text { text }, &mut events);
        }
        let mut fed: Vec<Event> = if whole.is_empty() {
            parser.end().collect()
        } else if chunk.is_empty() {
            Vec::new()
        } else {
            parser.feed(chunk).collect()
        };
        // In span mode the text events are empty; their text is in the pieces.
        for piece in parser.take_text_pieces() {
            let Event::Text { text } = &mut fed[piece.event] else { panic!("piece of a non-text event") };
            match piece.source {
                TextSource::Earlier(held) => text.push_str(&held),
                TextSource::Chunk(range) => text.push_str(&chunk[range]),
            }
        }
        // The strings of a marker line parsed in place, cut from the chunk: all of its strings.
        let places: Vec<(usize, std::ops::Range<usize>)> = parser.take_value_places().collect();
        for (index, event) in fed.iter().enumerate() {
            let cut: Vec<&str> = places.iter().filter(|(e, _)| *e == index).map(|(_, r)| &chunk[r.clone()]).collect();
            if !cut.is_empty() {
                let Event::Marker(marker) = event else { panic!("value place of a non-marker event") };
                assert_eq!(cut, marker_strings(marker), "value places");
            }
        }
        assert!(places.iter().all(|(e, _)| *e < fed.len()), "value place past the feed's events");
        for event in fed {
            push(event, &mut events);
        }
    }
    (events, parser.finish())
}

/// The strings of a one-line marker, in the order span mode places them.
fn marker_strings(marker: &Marker) -> Vec<&str> {
    match marker {
        Marker::Suggestions(items) | Marker::Options(items) => items.iter().map(String::as_str).collect(),
        Marker::ProposedMessage(text) | Marker::TargetField(text) => vec![text.as_str()],
        Marker::ExtractedData(field) => vec![field.field.as_str(), field.value.as_str()],
        _ => Vec::new(),
    }
}

/// Takes the display text at the start of `chunk` that a caller can tell apart by first bytes
/// (as the browser package's entry does) through `skip_text`; returns the rest, to feed.
fn skip_text_lines<'a>(parser: &mut MarkerParser, chunk: &'a str) -> &'a str {
    let bytes = chunk.as_bytes();
    let line_end = |from: usize| bytes[from..].iter().position(|&b| b == b'\n').map(|at| from + at + 1);
    let (mut at, mut lines, mut in_line) = (0, 0, false);
    match parser.text_position() {
        TextPosition::Elsewhere => return chunk,
        TextPosition::InTextLine => match line_end(0) {
            Some(end) => (at, lines) = (end, 1),
            None => (at, in_line) = (bytes.len(), true),
        },
        TextPosition::LineStart => {}
    }
    while !in_line && at < bytes.len() && !parser.may_begin_marker(bytes[at]) {
        match line_end(at) {
            Some(end) => (at, lines) = (end, lines + 1),
            None => (at, in_line) = (bytes.len(), true),
        }
    }
    if at > 0 {
        assert!(parser.skip_text(at, lines, in_line), "skip_text refused at a text position");
    }
    &chunk[at..]
}

fuzz_target!(|data: &[u8]| {
    // The first byte seeds the split points; the rest is the text.
    let Some((&seed, rest)) = data.split_first() else { return };
    let text = String::from_utf8_lossy(rest);
    let mut chunks = Vec::new();
    let mut start = 0;
    let mut state = u32::from(seed) | 1;
    while start < text.len() {
        state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        let mut end = (start + 1 + (state >> 16) as usize % 9).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        chunks.push(&text[start..end]);
        start = end;
    }
    let whole = parse(&[&text], false, false);
    assert_eq!(whole, parse(&chunks, false, false), "chunking changed the parse");
    // In span mode the message is the caller's to build from the text events.
    for skipping in [false, true] {
        let (events, mut parsed) = parse(&chunks, true, skipping);
        assert!(parsed.message.is_empty(), "span mode kept the message");
        parsed.message.clone_from(&whole.1.message);
        assert_eq!(whole, (events, parsed), "span mode changed the parse (skipping: {skipping})");
    }
});
