//! Size limits of the marker parser: over-long marker lines and oversized JSON bodies are
//! dropped with a diagnostic, memory stays bounded, and the parse goes on after them.

mod common;

use common::{parse_chunks, registry, split_at_offsets};
use stepwise_core::markers::{DiagnosticCode, MAX_LINE_LEN, MAX_PAYLOAD_LEN, MarkerParser};

fn codes(diagnostics: &[stepwise_core::markers::Diagnostic]) -> Vec<DiagnosticCode> {
    diagnostics.iter().map(|d| d.code).collect()
}

/// Each diagnostic's code and line.
fn lines(text: &str, payloads: &[String]) -> Vec<(DiagnosticCode, u32)> {
    let (_, parsed) = parse_chunks(registry(payloads), &[text]);
    parsed
        .diagnostics
        .iter()
        .map(|d| (d.code, d.line))
        .collect()
}

fn every_kib(text: &str) -> Vec<&str> {
    split_at_offsets(
        text,
        &(1..)
            .map(|k| k * 1024)
            .take_while(|&o| o < text.len())
            .collect::<Vec<_>>(),
    )
}

#[test]
fn an_over_long_marker_line_is_dropped_and_the_next_line_is_parsed() {
    let text = format!(
        "Before\nSUGGESTIONS: {}\nAfter\nOPTIONS: A|B\n",
        "x".repeat(MAX_LINE_LEN)
    );
    for chunks in [vec![text.as_str()], every_kib(&text)] {
        let (_, parsed) = parse_chunks(registry(&[]), &chunks);
        assert_eq!(codes(&parsed.diagnostics), [DiagnosticCode::LineTooLong]);
        assert_eq!(parsed.diagnostics[0].line, 2);
        assert!(parsed.suggestions.is_empty());
        assert_eq!(parsed.options, ["A", "B"]);
        assert_eq!(parsed.message, "Before\nAfter");
    }
}

#[test]
fn an_oversized_payload_is_dropped_and_parsing_resumes_after_its_close() {
    let body = format!(
        "{{\"big\": \"{}\", \"nested\": {{\"a\": [1, 2]}}}}",
        "y".repeat(MAX_PAYLOAD_LEN)
    );
    let text = format!("Intro\nSCHEMA_PROPOSAL: {body}\nOutro\nSUGGESTIONS: ok\n");
    let names = vec!["SCHEMA_PROPOSAL".to_owned()];
    for chunks in [vec![text.as_str()], every_kib(&text)] {
        let (_, parsed) = parse_chunks(registry(&names), &chunks);
        assert_eq!(
            codes(&parsed.diagnostics),
            [DiagnosticCode::PayloadTooLarge]
        );
        assert!(parsed.payloads.is_empty());
        assert_eq!(parsed.suggestions, ["ok"]);
        assert_eq!(parsed.message, "Intro\nOutro");
    }
}

#[test]
fn a_payload_just_under_the_limit_is_kept() {
    let body = format!("{{\"big\": \"{}\"}}", "z".repeat(MAX_PAYLOAD_LEN - 16));
    let text = format!("SCHEMA_PROPOSAL: {body}\n");
    let (_, parsed) = parse_chunks(registry(&["SCHEMA_PROPOSAL".to_owned()]), &every_kib(&text));
    assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
    assert_eq!(parsed.payloads.len(), 1);
}

#[test]
fn feeding_after_the_end_is_ignored_with_a_diagnostic() {
    let mut parser = MarkerParser::new();
    assert_eq!(parser.feed("Hi\nSUGGESTIONS: a").count(), 1);
    assert_eq!(parser.end().count(), 1);
    let late: Vec<_> = parser.feed("more text\n").collect();
    assert_eq!(late.len(), 1);
    let parsed = parser.finish();
    assert_eq!(parsed.message, "Hi");
    assert_eq!(parsed.suggestions, ["a"]);
    assert_eq!(codes(&parsed.diagnostics), [DiagnosticCode::FeedAfterEnd]);
}

#[test]
fn diagnostics_report_the_line_where_the_marker_started() {
    let text = "one\ntwo\nSCHEMA_PROPOSAL: {\n\"a\": 1,\n}\nEXTRACTED_DATA: nothing\n";
    let expected = [
        (DiagnosticCode::MalformedJson, 3),
        (DiagnosticCode::MalformedMarker, 6),
    ];
    assert_eq!(lines(text, &["SCHEMA_PROPOSAL".to_owned()]), expected);
}

#[test]
fn an_escaped_line_break_inside_a_json_string_counts_as_a_line() {
    let text = "SUGGESTED_VALUES: [\"a\\\n\"]\nEXTRACTED_DATA: nope\n";
    let expected = [
        (DiagnosticCode::MalformedJson, 1),
        (DiagnosticCode::MalformedMarker, 3),
    ];
    assert_eq!(lines(text, &[]), expected);
}
