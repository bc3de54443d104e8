//! The validator against serde_json (same verdict on valid, mutated and random texts, at any
//! chunking) and the record reader's shape errors.

use proptest::prelude::*;

use super::{JsonCheck, JsonText, MAX_DEPTH, read_records};

/// serde_json's verdict: does it accept `text` as one JSON value?
fn serde_accepts(text: &str) -> bool {
    serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
}

fn verdict_in_pieces(text: &str, cuts: &[usize]) -> bool {
    let mut check = JsonCheck::default();
    let mut from = 0;
    for &cut in cuts {
        let cut = cut.clamp(from, text.len());
        check.feed(&text.as_bytes()[from..cut]);
        from = cut;
    }
    check.feed(&text.as_bytes()[from..]);
    check.finish().is_ok()
}

fn json_value() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::Bool),
        any::<i64>().prop_map(serde_json::Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(serde_json::Value::from),
        "(\\PC|[\"\\\\\n\t\u{1}])*".prop_map(serde_json::Value::String),
    ];
    leaf.prop_recursive(6, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::Array),
            prop::collection::btree_map("[a-z\"\\\\é]{0,4}", inner, 0..6)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Bytes that matter to the JSON grammar, for mutating texts.
const ALPHABET: &[u8] = b"{}[]\":,\\ \n\t-+.eE0123456789truefalsnuxAbf/\x01";

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn accepts_what_serde_json_writes(value in json_value(), pretty in any::<bool>(), cuts in prop::collection::vec(0usize..400, 0..6)) {
        let text = if pretty { serde_json::to_string_pretty(&value) } else { serde_json::to_string(&value) }.unwrap();
        prop_assert!(verdict_in_pieces(&text, &cuts), "rejected {text}");
    }

    #[test]
    fn agrees_with_serde_json_on_mutated_texts(
        value in json_value(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0usize..3, prop::sample::select(ALPHABET)), 1..4),
        cuts in prop::collection::vec(0usize..400, 0..6),
    ) {
        let mut bytes = serde_json::to_string(&value).unwrap().into_bytes();
        for (at, kind, byte) in edits {
            let at = at.index(bytes.len() + 1);
            match kind {
                0 => bytes.insert(at, byte),
                1 if at < bytes.len() => { bytes.remove(at); }
                _ if at < bytes.len() => bytes[at] = byte,
                _ => bytes.push(byte),
            }
        }
        let Ok(text) = String::from_utf8(bytes) else { return Ok(()) };
        prop_assert_eq!(verdict_in_pieces(&text, &cuts), serde_accepts(&text), "on {}", text);
    }

    /// The line breaks the validator reads are those before the byte that broke the text (or
    /// all of them), at any chunking: the marker parser counts a body's lines by them.
    #[test]
    fn counts_the_line_breaks_it_reads(
        value in json_value(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), prop::sample::select(ALPHABET)), 0..3),
        cuts in prop::collection::vec(0usize..400, 0..6),
    ) {
        let mut bytes = serde_json::to_string_pretty(&value).unwrap().into_bytes();
        for (at, byte) in edits {
            bytes.insert(at.index(bytes.len() + 1), byte);
        }
        let mut check = JsonCheck::default();
        let mut from = 0;
        for &cut in cuts.iter().chain([&bytes.len()]) {
            let cut = cut.clamp(from, bytes.len());
            check.feed(&bytes[from..cut]);
            from = cut;
        }
        let read = check.finish().err().filter(|e| e.reason != "unexpected end of the text").map_or(bytes.len(), |e| e.offset);
        prop_assert_eq!(check.lines(), bytes[..read].iter().filter(|&&b| b == b'\n').count());
    }

    #[test]
    fn agrees_with_serde_json_on_short_random_texts(text in "[{}\\[\\]\":,\\\\ 0-9.eE+\\-tfnrulsa]{0,12}") {
        prop_assert_eq!(verdict_in_pieces(&text, &[]), serde_accepts(&text), "on {}", text);
    }
}

#[test]
fn accepts_and_rejects_the_grammar_edges() {
    for good in [
        "0",
        "-0",
        "1.5e+3",
        "-12E-0",
        "\"\\u00e9\\ud83d\"",
        " [ ] ",
        "{\"a\":{}}",
        "true",
        "[null,false]",
        "\"\u{7f}é\"",
    ] {
        assert!(JsonText::parse(good).is_ok(), "{good}");
        assert!(serde_accepts(good), "{good}");
    }
    for bad in [
        "",
        "01",
        "1.",
        ".5",
        "1e",
        "-",
        "+1",
        "[1,]",
        "{\"a\":1,}",
        "{a:1}",
        "[1 2]",
        "\"\\x\"",
        "\"\\u12g4\"",
        "\"a\nb\"",
        "tru",
        "nul",
        "[}",
        "{]",
        "{\"a\"}",
        "[] []",
        "\"",
    ] {
        assert!(JsonText::parse(bad).is_err(), "{bad}");
        assert!(!serde_accepts(bad), "{bad}");
    }
}

#[test]
fn errors_name_the_reason_and_byte() {
    let error = JsonText::parse("{\"a\": 1 \"b\"}").unwrap_err();
    assert_eq!(error.to_string(), "expected `,` or `}` at byte 8");
    let error = JsonText::parse("[1, ").unwrap_err();
    assert_eq!(error.to_string(), "unexpected end of the text at byte 4");
}

#[test]
fn nesting_is_limited() {
    let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    assert!(JsonText::parse(&deep(MAX_DEPTH)).is_ok());
    // Whatever is accepted can be read into a `serde_json::Value`.
    assert!(serde_json::from_str::<serde_json::Value>(&deep(MAX_DEPTH)).is_ok());
    let error = JsonText::parse(&deep(MAX_DEPTH + 1)).unwrap_err();
    assert_eq!(error.reason, "nested too deep");
    assert_eq!(error.offset, MAX_DEPTH);
}

#[test]
fn json_text_round_trips_through_serde_json_unchanged() {
    let text = JsonText::parse("{ \"a\" : [1, 2.50] }").unwrap();
    assert_eq!(
        serde_json::to_string(&[&text]).unwrap(),
        r#"[{ "a" : [1, 2.50] }]"#
    );
    let back: JsonText = serde_json::from_str("[ true ]").unwrap();
    assert_eq!(back.as_str(), "[ true ]");
}

#[test]
fn records_are_read_with_escapes_in_key_order() {
    let text =
        r#" [ {"value": "a\"b\u00e9\ud83d\ude00", "label": "L\n"}, {"label":"x","value":""} ] "#;
    let records = read_records(text.trim(), &["label", "value"], 2).unwrap();
    assert_eq!(
        records,
        [
            vec!["L\n".to_owned(), "a\"bé😀".to_owned()],
            vec!["x".into(), String::new()]
        ]
    );
    assert_eq!(
        read_records("[]", &["label"], 1).unwrap(),
        Vec::<Vec<String>>::new()
    );
}

#[test]
fn record_shape_errors_say_what_did_not_fit() {
    let keys = &["label", "value"];
    for (text, why) in [
        (r#"{"label":"a"}"#, "the body is not an array"),
        (r#"[1]"#, "item 1 is not an object"),
        (
            r#"[{"label":"a","value":"b"},{"label":"a"}]"#,
            "item 2 has no `value`",
        ),
        (
            r#"[{"label":"a","value":"b","x":"c"}]"#,
            "item 1 has an unknown key `x`",
        ),
        (
            r#"[{"label":1,"value":"c"}]"#,
            "item 1: `label` must be a string",
        ),
        (
            r#"[{"label":"\ud800","value":"c"}]"#,
            "a string holds a lone UTF-16 surrogate",
        ),
        (
            r#"[{"label":"\udc00x","value":"c"}]"#,
            "a string holds a lone UTF-16 surrogate",
        ),
    ] {
        assert_eq!(
            read_records(text, keys, keys.len()).unwrap_err(),
            why,
            "{text}"
        );
    }
}
