//! Property tests: chunk invariance of the marker parser over random texts and splits, payload
//! bodies located in the fed text, no marker syntax in display text, and turn invariants (a
//! rejected action changes nothing).

mod common;

use common::{display_text, parse_chunks, registry, split_at_offsets};
use proptest::prelude::*;
use stepwise_core::protocol::ChatRequest;
use stepwise_core::turn::{self, Rejection, TurnStart};
use stepwise_core::workflow::{Config, DONE_STEP, FieldValue, UserAction, WorkflowSpec};

const NAMES: [&str; 8] = [
    "SUGGESTIONS",
    "OPTIONS",
    "EXTRACTED_DATA",
    "PROPOSED_MESSAGE",
    "TARGET_FIELD",
    "SUGGESTED_VALUES",
    "SUGGESTED_ACTIONS",
    "SCHEMA_PROPOSAL",
];

fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("\n".to_owned()),
        Just("\r\n".to_owned()),
        Just("SUGGESTIONS: a, b".to_owned()),
        Just("  - **OPTIONS**: X|Y|Z".to_owned()),
        Just("__EXTRACTED_DATA__: purpose=Track é rivals".to_owned()),
        Just("PROPOSED_MESSAGE: \"Go\"".to_owned()),
        Just("TARGET_FIELD: focus_areas".to_owned()),
        Just("SUGGESTED_VALUES: [{\"label\": \"Y\", \"value\": \"y\\u00e9\"}]".to_owned()),
        Just(
            "SUGGESTED_ACTIONS: [{\"label\": \"A\", \"action\": \"a\", \"handler\": \"server\"}]"
                .to_owned()
        ),
        Just("SCHEMA_PROPOSAL: {\"a\": \"}{\\\"\", \"b\": [1, {\"c\": null}]}".to_owned()),
        Just("SCHEMA_PROPOSAL:\n{\n \"x\": \"😀\"\n}".to_owned()),
        Just("SCHEMA_PROPOSAL: {\"open\": [".to_owned()),
        // Bodies that break over lines and turn invalid: at a line break in a literal, a line
        // break in a string.
        Just("SCHEMA_PROPOSAL: {\n \"a\": tru\n }\n".to_owned()),
        Just("SCHEMA_PROPOSAL: [1,\n \"a\nb\"\n]".to_owned()),
        Just("• ".to_owned()),
        Just("**".to_owned()),
        Just("1. ".to_owned()),
        Just("SUGGEST".to_owned()),
        // Colons where no marker is: the line start is decided at its first colon.
        Just("OPTIONS x: y".to_owned()),
        Just(":OPTIONS:".to_owned()),
        Just("1: OPTIONS: a".to_owned()),
        Just(format!("{}OPTIONS: too deep", " ".repeat(70))),
        Just(format!("{}: past the longest prefix", "A".repeat(260))),
        "[a-zA-Z0-9 ,.:|=*_\\-{}\\[\\]\"\\\\éü😀•\t]{0,24}",
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(fragment(), 0..14).prop_map(|parts| parts.concat())
}

/// Whether a display line still reads as a marker line (decoration stripped).
fn looks_like_marker(line: &str) -> bool {
    let mut rest = line.trim_start_matches([' ', '\t']);
    // Indented past 64 columns, a line is text (`markers/line.rs`'s MAX_INDENT).
    if line.len() - rest.len() > 64 {
        return false;
    }
    // One list bullet at most, as `markers/line.rs` accepts: "- • NAME:" is a nested list item's
    // text, not a marker line.
    if let Some(after) = ["- ", "* ", "+ ", "• "]
        .iter()
        .find_map(|bullet| rest.strip_prefix(bullet))
    {
        rest = after.trim_start();
    }
    rest = rest
        .strip_prefix("**")
        .or_else(|| rest.strip_prefix("__"))
        .unwrap_or(rest);
    NAMES.iter().any(|name| {
        rest.strip_prefix(name).is_some_and(|after| {
            after.starts_with(':') || after.starts_with("**:") || after.starts_with("__:")
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn any_split_of_any_text_gives_the_same_events_and_parse(text in text(), offsets in prop::collection::vec(any::<usize>(), 0..24)) {
        let names = vec!["SCHEMA_PROPOSAL".to_owned()];
        let offsets: Vec<usize> = offsets.iter().map(|o| o % (text.len() + 1)).collect();
        let (whole_events, whole) = parse_chunks(registry(&names), &[&text]);
        let (events, parsed) = parse_chunks(registry(&names), &split_at_offsets(&text, &offsets));
        prop_assert_eq!(events, whole_events);
        prop_assert_eq!(parsed, whole);
    }

    #[test]
    fn one_char_at_a_time_gives_the_same_events_and_parse(text in text()) {
        let names = vec!["SCHEMA_PROPOSAL".to_owned()];
        let chars: Vec<&str> = text.char_indices().map(|(i, c)| &text[i..i + c.len_utf8()]).collect();
        let (whole_events, whole) = parse_chunks(registry(&names), &[&text]);
        let (events, parsed) = parse_chunks(registry(&names), &chars);
        prop_assert_eq!(events, whole_events);
        prop_assert_eq!(parsed, whole);
    }

    #[test]
    fn feeding_plain_chunks_through_feed_plain_changes_nothing(text in text(), offsets in prop::collection::vec(any::<usize>(), 0..24)) {
        let names = vec!["SCHEMA_PROPOSAL".to_owned()];
        let offsets: Vec<usize> = offsets.iter().map(|o| o % (text.len() + 1)).collect();
        let chunks = split_at_offsets(&text, &offsets);
        let (want_events, want) = parse_chunks(registry(&names), &chunks);
        let mut parser = stepwise_core::markers::MarkerParser::with_registry(registry(&names));
        let mut events = Vec::new();
        for chunk in &chunks {
            if parser.feed_plain(chunk) {
                events.push(stepwise_core::markers::Event::Text { text: (*chunk).to_owned() });
            } else {
                events.extend(parser.feed(chunk));
            }
        }
        events.extend(parser.end());
        prop_assert_eq!(common::normalize(events), want_events);
        prop_assert_eq!(parser.finish(), want);
    }

    #[test]
    fn span_mode_gives_the_same_events_feed_by_feed(text in text(), offsets in prop::collection::vec(any::<usize>(), 0..24)) {
        let names = vec!["SCHEMA_PROPOSAL".to_owned()];
        let offsets: Vec<usize> = offsets.iter().map(|o| o % (text.len() + 1)).collect();
        let chunks = split_at_offsets(&text, &offsets);
        let mut copies = stepwise_core::markers::MarkerParser::with_registry(registry(&names));
        let mut spans = stepwise_core::markers::MarkerParser::with_registry(registry(&names));
        spans.set_text_spans(true);
        for chunk in chunks.iter().copied().chain([""]) {
            let want: Vec<_> = if chunk.is_empty() { copies.end().collect() } else { copies.feed(chunk).collect() };
            let mut got: Vec<_> = if chunk.is_empty() { spans.end().collect() } else { spans.feed(chunk).collect() };
            fill_text(&mut got, &mut spans, chunk);
            prop_assert_eq!(got, want);
        }
        // In span mode the message is the caller's to keep: everything else is the same.
        let mut want = copies.finish();
        want.message.clear();
        prop_assert_eq!(spans.finish(), want);
    }

    #[test]
    fn skipping_the_text_lines_a_caller_finds_gives_the_same_events_and_parse(text in text(), offsets in prop::collection::vec(any::<usize>(), 0..24)) {
        let names = vec!["SCHEMA_PROPOSAL".to_owned()];
        let offsets: Vec<usize> = offsets.iter().map(|o| o % (text.len() + 1)).collect();
        let chunks = split_at_offsets(&text, &offsets);
        let (want_events, mut want) = parse_chunks(registry(&names), &chunks);
        let mut parser = stepwise_core::markers::MarkerParser::with_registry(registry(&names));
        parser.set_text_spans(true);
        let mut events = Vec::new();
        for chunk in chunks.iter().copied().chain([""]) {
            let rest = if chunk.is_empty() { chunk } else { skip_text_lines(&mut parser, chunk) };
            if chunk.len() > rest.len() {
                events.push(stepwise_core::markers::Event::Text { text: chunk[..chunk.len() - rest.len()].to_owned() });
            }
            if chunk.is_empty() { parser.end_parse() } else if !rest.is_empty() { parser.parse(rest) }
            let mut got: Vec<_> = parser.take_events().collect();
            fill_text(&mut got, &mut parser, rest);
            events.extend(got);
        }
        prop_assert_eq!(parser.fed(), text.len());
        prop_assert_eq!(common::normalize(events), want_events);
        want.message.clear();
        prop_assert_eq!(parser.finish(), want);
    }

    #[test]
    fn a_parser_reset_after_any_text_parses_the_next_as_a_new_one_does(before in text(), text in text(), cut in any::<usize>(), offsets in prop::collection::vec(any::<usize>(), 0..24)) {
        let names = vec!["SCHEMA_PROPOSAL".to_owned()];
        let offsets: Vec<usize> = offsets.iter().map(|o| o % (text.len() + 1)).collect();
        let chunks = split_at_offsets(&text, &offsets);
        let mut fresh = stepwise_core::markers::MarkerParser::with_registry(registry(&names));
        let mut reused = stepwise_core::markers::MarkerParser::with_registry(registry(&names));
        fresh.set_text_spans(true);
        reused.set_text_spans(true);
        // Cut anywhere, ended or not: inside a body, a held line start, a marker's value.
        let cut = before.char_indices().map(|(i, _)| i).nth(cut % (before.chars().count() + 1)).unwrap_or(before.len());
        reused.parse(&before[..cut]);
        if cut % 2 == 1 { reused.end_parse() }
        reused.reset();
        for chunk in chunks.iter().copied().chain([""]) {
            for parser in [&mut fresh, &mut reused] {
                if chunk.is_empty() { parser.end_parse() } else { parser.parse(chunk) }
            }
            prop_assert_eq!(reused.take_events().collect::<Vec<_>>(), fresh.take_events().collect::<Vec<_>>());
            prop_assert_eq!(reused.take_text_pieces().collect::<Vec<_>>(), fresh.take_text_pieces().collect::<Vec<_>>());
            prop_assert_eq!(reused.open_body_start(), fresh.open_body_start());
            prop_assert_eq!(reused.drain_body_spans().collect::<Vec<_>>(), fresh.drain_body_spans().collect::<Vec<_>>());
            prop_assert_eq!(reused.text_position(), fresh.text_position());
        }
        prop_assert_eq!(reused.fed(), text.len());
        prop_assert_eq!(reused.finish(), fresh.finish());
    }

    #[test]
    fn the_value_places_of_span_mode_cut_each_marker_s_strings_from_its_chunk(text in text(), offsets in prop::collection::vec(any::<usize>(), 0..24)) {
        let names = vec!["SCHEMA_PROPOSAL".to_owned()];
        let offsets: Vec<usize> = offsets.iter().map(|o| o % (text.len() + 1)).collect();
        let mut parser = stepwise_core::markers::MarkerParser::with_registry(registry(&names));
        parser.set_text_spans(true);
        let whole = offsets.is_empty();
        for chunk in split_at_offsets(&text, &offsets) {
            parser.parse(chunk);
            let events: Vec<_> = parser.take_events().collect();
            let _ = parser.take_text_pieces().count();
            let mut cut: Vec<(usize, &str)> = Vec::new();
            for (event, range) in parser.take_value_places() {
                cut.push((event, &chunk[range]));
            }
            prop_assert!(cut.iter().all(|(e, _)| *e < events.len()));
            for (index, event) in events.iter().enumerate() {
                let theirs: Vec<&str> = cut.iter().filter(|(e, _)| *e == index).map(|(_, s)| *s).collect();
                let stepwise_core::markers::Event::Marker(marker) = event else {
                    prop_assert!(theirs.is_empty(), "a value place of a non-marker event");
                    continue;
                };
                // Placed whole or not at all; in one chunk (a line whole in it), always.
                if !theirs.is_empty() || whole {
                    prop_assert_eq!(theirs, marker_strings(marker));
                }
            }
        }
    }

    #[test]
    fn the_body_spans_of_any_split_point_at_each_payload_body_in_the_text(text in text(), offsets in prop::collection::vec(any::<usize>(), 0..24)) {
        let names = vec!["SCHEMA_PROPOSAL".to_owned()];
        let offsets: Vec<usize> = offsets.iter().map(|o| o % (text.len() + 1)).collect();
        let mut parser = stepwise_core::markers::MarkerParser::with_registry(registry(&names));
        let mut bodies = Vec::new();
        let mut spans = Vec::new();
        for chunk in split_at_offsets(&text, &offsets) {
            for event in parser.feed(chunk) {
                if let stepwise_core::markers::Event::Marker(stepwise_core::markers::Marker::Payload(p)) = event {
                    bodies.push(p.data.as_str().to_owned());
                }
            }
            if let Some(start) = parser.open_body_start() {
                prop_assert!(start <= parser.fed());
            }
            spans.extend(parser.drain_body_spans());
        }
        parser.end();
        prop_assert_eq!(spans.len(), bodies.len());
        for (span, body) in spans.iter().zip(&bodies) {
            prop_assert_eq!(&text[span.clone()], body.as_str());
        }
    }

    #[test]
    fn every_line_break_is_counted_once_however_the_text_is_split(text in text(), offsets in prop::collection::vec(any::<usize>(), 0..24)) {
        let names = vec!["SCHEMA_PROPOSAL".to_owned()];
        let offsets: Vec<usize> = offsets.iter().map(|o| o % (text.len() + 1)).collect();
        let mut parser = stepwise_core::markers::MarkerParser::with_registry(registry(&names));
        for chunk in split_at_offsets(&text, &offsets) {
            parser.feed(chunk).for_each(drop);
        }
        parser.end().for_each(drop);
        // Text fed after the end is reported at the line the parser stands on.
        let after: Vec<_> = parser.feed("x").collect();
        let [stepwise_core::markers::Event::Diagnostic(late)] = after.as_slice() else {
            panic!("expected one diagnostic, got {after:?}");
        };
        prop_assert_eq!(late.line as usize, 1 + text.matches('\n').count());
    }

    #[test]
    fn display_text_never_contains_a_marker_line(text in text()) {
        let names = vec!["SCHEMA_PROPOSAL".to_owned()];
        let (events, _) = parse_chunks(registry(&names), &[&text]);
        for line in display_text(&events).split('\n') {
            prop_assert!(!looks_like_marker(line), "marker line shown: {:?}", line);
        }
    }
}

fn field_value() -> impl Strategy<Value = FieldValue> {
    let word = prop_oneof![
        Just("competitive".to_owned()),
        Just("Oncology".to_owned()),
        Just("banana".to_owned()),
        Just(String::new()),
        Just("  ".to_owned()),
        "[a-zA-Z ]{1,12}",
    ];
    prop_oneof![
        word.clone().prop_map(FieldValue::Text),
        prop::collection::vec(word, 0..4).prop_map(FieldValue::List),
    ]
}

fn field() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "purpose",
        "business_goals",
        "stream_type",
        "focus_areas",
        "competitors",
        "keywords",
        "colour",
    ])
    .prop_map(str::to_owned)
}

fn config() -> impl Strategy<Value = Config> {
    prop::collection::btree_map(field(), field_value(), 0..7)
        .prop_map(|map| map.into_iter().collect())
}

fn action() -> impl Strategy<Value = Option<UserAction>> {
    let value = prop_oneof![
        Just("competitive".to_owned()),
        Just("Oncology".to_owned()),
        Just("banana".to_owned()),
        Just(String::new())
    ];
    prop_oneof![
        Just(None),
        Just(Some(UserAction::TextInput)),
        Just(Some(UserAction::Confirm)),
        (field(), value.clone()).prop_map(|(target_field, selected_value)| Some(
            UserAction::OptionSelected {
                target_field,
                selected_value
            }
        )),
        (field(), prop::collection::vec(value, 0..3)).prop_map(
            |(target_field, selected_values)| Some(UserAction::OptionsSelected {
                target_field,
                selected_values
            })
        ),
        field().prop_map(|target_field| Some(UserAction::SkipStep { target_field })),
        (field(), field_value()).prop_map(|(target_field, value)| Some(UserAction::FieldEdit {
            target_field,
            value
        })),
        prop::sample::select(vec!["purpose", "keywords", "review", "done", "nowhere"])
            .prop_map(|s| Some(UserAction::GoToStep { step: s.to_owned() })),
    ]
}

fn request() -> impl Strategy<Value = ChatRequest> {
    let step = prop::sample::select(vec![
        "purpose",
        "business_goals",
        "stream_type",
        "focus_areas",
        "competitors",
        "keywords",
        "review",
        "done",
        "bogus",
    ]);
    let skipped = prop::collection::vec(
        prop::sample::select(vec!["competitors", "keywords", "colour"]).prop_map(str::to_owned),
        0..2,
    );
    (prop::option::of(step), config(), action(), skipped).prop_map(
        |(step, current_config, user_action, skipped)| ChatRequest {
            message: "hello".into(),
            current_step: step.map(str::to_owned),
            current_config,
            user_action,
            skipped,
            ..ChatRequest::default()
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn a_rejected_action_changes_nothing_and_an_accepted_one_leaves_a_valid_state(request in request()) {
        let spec = WorkflowSpec::builtin("research_stream").unwrap();
        // A new conversation's claim to be done counts as the inferred step (only confirm ends it).
        let complete = spec.infer_step(&request.current_config, &request.skipped, true) == DONE_STEP;
        let claimed = request.current_step.clone()
            .filter(|step| step != DONE_STEP || request.conversation_id.is_some() || !complete);
        let current = claimed
            .unwrap_or_else(|| spec.infer_step(&request.current_config, &request.skipped, false).to_owned());
        match turn::begin(&spec, &request) {
            Err(Rejection { error, response }) => {
                prop_assert_eq!(response.error.as_ref().map(|e| e.code.as_str()), Some(error.code()));
                prop_assert_eq!(&response.updated_config, &request.current_config);
                prop_assert_eq!(&response.skipped, &request.skipped);
                prop_assert_eq!(&response.next_step, &current);
                prop_assert!(response.message.is_empty() && response.suggestions.is_empty() && response.options.is_empty());
            }
            Ok(TurnStart::Respond(response)) => {
                // Only an inline edit answers without the model: the step never changes.
                prop_assert!(response.error.is_none());
                let is_edit = matches!(request.user_action, Some(UserAction::FieldEdit { .. }));
                prop_assert!(is_edit);
                prop_assert_eq!(&response.next_step, &current);
                prop_assert!(spec.normalize_config(&response.updated_config).is_ok());
            }
            Ok(TurnStart::CallModel(plan)) => {
                let checked = spec.normalize_state(&plan.state);
                prop_assert!(checked.is_ok(), "invalid state after action: {:?}", plan.state);
                prop_assert!(plan.step == DONE_STEP || spec.step(&plan.step).is_some());
                for field in &plan.state.skipped {
                    prop_assert!(!spec.step_for_field(field).unwrap().required);
                }
            }
        }
    }
}

/// Takes the run of display text at the start of `chunk` as the browser package's entry finds
/// it (the rest of a text line, then whole lines whose first byte rules out a marker) through
/// `skip_text`, counting bytes; returns the rest of the chunk, to feed.
fn skip_text_lines<'a>(
    parser: &mut stepwise_core::markers::MarkerParser,
    chunk: &'a str,
) -> &'a str {
    use stepwise_core::markers::TextPosition;
    let bytes = chunk.as_bytes();
    let (mut at, mut lines, mut in_line) = (0, 0, false);
    match parser.text_position() {
        TextPosition::Elsewhere => return chunk,
        TextPosition::InTextLine => match bytes.iter().position(|&b| b == b'\n') {
            Some(end) => (at, lines) = (end + 1, 1),
            None => (at, in_line) = (bytes.len(), true),
        },
        TextPosition::LineStart => {}
    }
    while !in_line && at < bytes.len() && !parser.may_begin_marker(bytes[at]) {
        match bytes[at..].iter().position(|&b| b == b'\n') {
            Some(end) => (at, lines) = (at + end + 1, lines + 1),
            None => (at, in_line) = (bytes.len(), true),
        }
    }
    if at > 0 {
        assert!(parser.skip_text(at, lines, in_line));
    }
    &chunk[at..]
}

/// Puts the text of span mode's pieces into the (empty) text events of the feed of `chunk`.
fn fill_text(
    events: &mut [stepwise_core::markers::Event],
    parser: &mut stepwise_core::markers::MarkerParser,
    chunk: &str,
) {
    for piece in parser.take_text_pieces() {
        let stepwise_core::markers::Event::Text { text } = &mut events[piece.event] else {
            panic!("a text piece of a non-text event");
        };
        match piece.source {
            stepwise_core::markers::TextSource::Earlier(held) => text.push_str(&held),
            stepwise_core::markers::TextSource::Chunk(range) => text.push_str(&chunk[range]),
        }
    }
}

/// The strings of a one-line marker, in the order span mode places them (none for the others).
fn marker_strings(marker: &stepwise_core::markers::Marker) -> Vec<&str> {
    use stepwise_core::markers::Marker;
    match marker {
        Marker::Suggestions(items) | Marker::Options(items) => {
            items.iter().map(String::as_str).collect()
        }
        Marker::ProposedMessage(text) | Marker::TargetField(text) => vec![text.as_str()],
        Marker::ExtractedData(field) => vec![field.field.as_str(), field.value.as_str()],
        _ => Vec::new(),
    }
}
