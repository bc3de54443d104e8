//! Fuzz target: the marker parser never panics, and any split of any input gives the same
//! events (adjacent text merged) and the same parse as the whole input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stepwise_core::markers::{Event, MarkerParser, MarkerRegistry, Parsed};

fn parse(chunks: &[&str]) -> (Vec<Event>, Parsed) {
    let mut registry = MarkerRegistry::new();
    registry.register_payload("SCHEMA_PROPOSAL").unwrap();
    let mut parser = MarkerParser::with_registry(registry);
    let mut events: Vec<Event> = Vec::new();
    let mut push = |event: Event, events: &mut Vec<Event>| match (events.last_mut(), event) {
        (Some(Event::Text { text: last }), Event::Text { text }) => last.push_str(&text),
        (_, event) => events.push(event),
    };
    for chunk in chunks {
        for event in parser.feed(chunk) {
            push(event, &mut events);
        }
    }
    for event in parser.end() {
        push(event, &mut events);
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
    let whole = parse(&[&text]);
    let split = parse(&chunks);
    assert_eq!(whole, split, "chunking changed the parse");
});
