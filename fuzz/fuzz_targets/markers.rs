//! Fuzz target: the marker parser never panics, and any split of any input gives the same
//! events (adjacent text merged) and the same parse as the whole input, in span mode too.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stepwise_core::markers::{Event, MarkerParser, MarkerRegistry, Parsed, TextSource};

fn parse(chunks: &[&str], spans: bool) -> (Vec<Event>, Parsed) {
    let mut registry = MarkerRegistry::new();
    registry.register_payload("SCHEMA_PROPOSAL").unwrap();
    let mut parser = MarkerParser::with_registry(registry);
    parser.set_text_spans(spans);
    let mut events: Vec<Event> = Vec::new();
    let push = |event: Event, events: &mut Vec<Event>| match (events.last_mut(), event) {
        (Some(Event::Text { text: last }), Event::Text { text }) => last.push_str(&text),
        (_, event) => events.push(event),
    };
    for chunk in chunks.iter().copied().chain([""]) {
        let mut fed: Vec<Event> = if chunk.is_empty() {
            parser.end().collect()
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
        for event in fed {
            push(event, &mut events);
        }
    }
    (events, parser.finish())
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
    let whole = parse(&[&text], false);
    assert_eq!(whole, parse(&chunks, false), "chunking changed the parse");
    // In span mode the message is the caller's to build from the text events.
    let (events, mut parsed) = parse(&chunks, true);
    assert!(parsed.message.is_empty(), "span mode kept the message");
    parsed.message.clone_from(&whole.1.message);
    assert_eq!(whole, (events, parsed), "span mode changed the parse");
});
