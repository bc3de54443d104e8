//! Provider protocols: stream decoding replayed from `tests/vectors/provider_streams.json` at
//! every byte split, error normalization, request bodies, and provider settings.

mod common;

use common::vectors;
use serde_json::{Value, json};
use stepwise_core::llm::{
    ErrorCode, MAX_ARGUMENT_BYTES, MAX_CALLS_PER_ANSWER, ModelCall, ProviderConfig, ProviderError,
    ProviderKind, ProviderSettings, StreamDecoder, StreamItem, build_request,
};
use stepwise_core::protocol::{ChatMessage, Role};

fn kind(name: &str) -> ProviderKind {
    serde_json::from_value(Value::String(name.into())).unwrap()
}

/// Decodes the chunks and merges adjacent text items (the only chunking-dependent part).
fn decode(kind: ProviderKind, chunks: &[&[u8]]) -> Vec<StreamItem> {
    let mut decoder = StreamDecoder::new(kind);
    let mut items: Vec<StreamItem> = Vec::new();
    let all = chunks
        .iter()
        .flat_map(|c| decoder.feed(c))
        .collect::<Vec<_>>();
    for item in all.into_iter().chain(decoder.finish()) {
        match (items.last_mut(), item) {
            (Some(StreamItem::Text { text: last }), StreamItem::Text { text }) => {
                last.push_str(&text)
            }
            (_, item) => items.push(item),
        }
    }
    items
}

#[test]
fn provider_streams_decode_identically_at_every_byte_split() {
    let file = vectors("provider_streams.json");
    for case in file["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let kind = kind(case["provider"].as_str().unwrap());
        let stream = case["stream"].as_str().unwrap().as_bytes();
        let expected: Vec<StreamItem> = serde_json::from_value(case["expect"].clone()).unwrap();
        assert_eq!(decode(kind, &[stream]), expected, "{name}");
        for cut in 0..=stream.len() {
            assert_eq!(
                decode(kind, &[&stream[..cut], &stream[cut..]]),
                expected,
                "{name}: cut at {cut}"
            );
        }
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(decode(kind, &bytes), expected, "{name}: byte by byte");
    }
}

#[test]
fn http_error_statuses_map_to_stable_codes() {
    let file = vectors("provider_streams.json");
    for case in file["statuses"].as_array().unwrap() {
        let error = ProviderError::from_status(
            case["status"].as_u64().unwrap() as u16,
            case["body"].as_str().unwrap(),
        );
        assert_eq!(
            serde_json::to_value(&error).unwrap(),
            case["expect"],
            "status {}",
            case["status"]
        );
    }
}

#[test]
fn nothing_is_decoded_after_the_end() {
    let mut decoder = StreamDecoder::new(ProviderKind::OpenAi);
    decoder.feed(b"data: [DONE]\n\n");
    assert!(decoder.is_ended());
    assert!(
        decoder
            .feed(b"data: {\"choices\":[{\"delta\":{\"content\":\"late\"}}]}\n\n")
            .is_empty()
    );
    assert!(decoder.finish().is_empty());
}

/// The tool calls decoded from OpenAI `tool_calls` deltas, one event each.
fn openai_calls(deltas: &[Value]) -> Vec<(String, String, String, bool)> {
    let mut body = String::new();
    for delta in deltas {
        let event = json!({"choices": [{"delta": {"tool_calls": [delta]}}]});
        body.push_str(&format!("data: {event}\n\n"));
    }
    body.push_str(
        "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n",
    );
    decode(ProviderKind::OpenAi, &[body.as_bytes()])
        .into_iter()
        .filter_map(|item| match item {
            StreamItem::ToolCall(c) => Some((c.id, c.name, c.arguments, c.malformed)),
            _ => None,
        })
        .collect()
}

#[test]
fn openai_calls_without_an_index_are_told_apart_by_their_ids() {
    let calls = openai_calls(&[
        json!({"id": "a", "function": {"name": "x", "arguments": "{\"q\":"}}),
        json!({"function": {"arguments": "1}"}}),
        json!({"id": "b", "function": {"name": "y", "arguments": "{}"}}),
    ]);
    let expected = |id: &str, name: &str, args: &str| (id.into(), name.into(), args.into(), false);
    assert_eq!(
        calls,
        vec![expected("a", "x", "{\"q\":1}"), expected("b", "y", "{}")]
    );
}

#[test]
fn one_answer_makes_a_bounded_number_of_calls_with_bounded_arguments() {
    let many: Vec<Value> = (0..40)
        .map(|i| json!({"index": i, "id": format!("c{i}"), "function": {"name": "t", "arguments": "{}"}}))
        .collect();
    assert_eq!(openai_calls(&many).len(), MAX_CALLS_PER_ANSWER);
    let piece = format!("\"{}", "a".repeat(1000));
    let mut long =
        vec![json!({"index": 0, "id": "l", "function": {"name": "t", "arguments": "{\"q\":"}})];
    for _ in 0..(MAX_ARGUMENT_BYTES / 1000 + 2) {
        long.push(json!({"index": 0, "function": {"arguments": piece}}));
    }
    let calls = openai_calls(&long);
    assert_eq!(calls.len(), 1);
    assert!(calls[0].3, "arguments past the bound are malformed");
    assert!(calls[0].2.len() <= MAX_ARGUMENT_BYTES);
}

fn call_messages() -> Vec<ChatMessage> {
    vec![
        ChatMessage::new(Role::Assistant, "Welcome!"),
        ChatMessage::new(Role::User, "Hi"),
        ChatMessage::new(Role::User, "Track rivals"),
        ChatMessage::new(Role::Assistant, "Noted."),
        ChatMessage::new(Role::User, "Next"),
    ]
}

fn provider(kind: ProviderKind) -> ProviderConfig {
    ProviderConfig {
        name: "p".into(),
        kind,
        base_url: Some("http://127.0.0.1:9/v1/".into()),
        model: "m1".into(),
        api_key_secret: None,
    }
}

fn body(kind: ProviderKind, key: Option<&str>) -> (String, Vec<(String, String)>, Value) {
    let messages = call_messages();
    let call = ModelCall::text("SYS", &messages, 256);
    let request = build_request(&provider(kind), key, &call).unwrap();
    (
        request.url,
        request.headers,
        serde_json::from_str(&request.body).unwrap(),
    )
}

#[test]
fn openai_requests_put_the_system_prompt_first_and_keep_every_message() {
    let (url, headers, body) = body(ProviderKind::OpenAi, Some("sk-test"));
    assert_eq!(url, "http://127.0.0.1:9/v1/chat/completions");
    assert!(headers.contains(&("authorization".into(), "Bearer sk-test".into())));
    assert_eq!(body["stream"], true);
    assert_eq!(
        body["messages"][0],
        json!({"role": "system", "content": "SYS"})
    );
    assert_eq!(body["messages"].as_array().unwrap().len(), 6);
}

#[test]
fn anthropic_requests_alternate_roles_starting_with_the_user() {
    let (url, headers, body) = body(ProviderKind::Anthropic, Some("ak"));
    assert_eq!(url, "http://127.0.0.1:9/v1/messages");
    assert!(headers.contains(&("x-api-key".into(), "ak".into())));
    assert!(headers.contains(&("anthropic-version".into(), "2023-06-01".into())));
    assert_eq!(body["system"], "SYS");
    assert_eq!(body["max_tokens"], 256);
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": "Hi\n\nTrack rivals"}, {"role": "assistant", "content": "Noted."}, {"role": "user", "content": "Next"}])
    );
}

#[test]
fn gemini_requests_use_system_instruction_and_model_roles() {
    let (url, headers, body) = body(ProviderKind::Gemini, Some("gk"));
    assert_eq!(
        url,
        "http://127.0.0.1:9/v1/models/m1:streamGenerateContent?alt=sse"
    );
    assert!(headers.contains(&("x-goog-api-key".into(), "gk".into())));
    assert_eq!(body["systemInstruction"]["parts"][0]["text"], "SYS");
    assert_eq!(
        body["contents"][1],
        json!({"role": "model", "parts": [{"text": "Noted."}]})
    );
}

#[test]
fn without_a_key_no_auth_header_is_sent_and_offline_needs_no_request() {
    let (_, headers, _) = body(ProviderKind::OpenAi, None);
    assert!(headers.iter().all(|(name, _)| name != "authorization"));
    let messages = call_messages();
    let call = ModelCall::text("", &messages, 1);
    assert!(build_request(&provider(ProviderKind::Offline), None, &call).is_none());
}

#[test]
fn settings_default_to_offline_and_accept_the_list_or_the_shorthand() {
    let default = ProviderSettings::resolve(None, None, None, None).unwrap();
    assert_eq!(default.chat_provider().kind, ProviderKind::Offline);
    assert_eq!(
        default.names(),
        ["offline", "offline-analyst", "offline-critic"]
    );
    assert!(
        default
            .providers
            .iter()
            .all(|p| p.kind == ProviderKind::Offline)
    );

    let list = r#"[{"name":"fast","kind":"openai","base_url":"http://127.0.0.1:1/v1","model":"a","api_key_secret":"FAST_KEY"},
                   {"name":"claude","kind":"anthropic","model":"c","api_key_secret":"CLAUDE_KEY"},
                   {"name":"offline-a","kind":"offline"}]"#;
    let settings = ProviderSettings::resolve(Some(list), Some("claude"), None, None).unwrap();
    assert_eq!(settings.chat, "claude");
    assert_eq!(settings.providers.len(), 3);
    assert_eq!(
        ProviderSettings::resolve(Some(list), None, None, None)
            .unwrap()
            .chat,
        "fast"
    );

    let shorthand =
        ProviderSettings::resolve(Some(" "), Some("gemini"), None, Some("gemini-2.5-flash"))
            .unwrap();
    assert_eq!(shorthand.chat_provider().model, "gemini-2.5-flash");
}

#[test]
fn invalid_settings_are_refused_with_a_reason() {
    let cases = [
        (
            Some("not json"),
            None,
            "LLM_PROVIDERS is not a JSON array of providers",
        ),
        (Some("[]"), None, "the list is empty"),
        (
            Some(r#"[{"name":"A","kind":"openai","model":"m"}]"#),
            None,
            "the name must be",
        ),
        (
            Some(r#"[{"name":"a","kind":"openai"}]"#),
            None,
            "a model is required",
        ),
        (
            Some(r#"[{"name":"a","kind":"openai","model":"m","base_url":"ftp://x"}]"#),
            None,
            "base_url must be",
        ),
        (
            Some(r#"[{"name":"a","kind":"offline"},{"name":"a","kind":"offline"}]"#),
            None,
            "used twice",
        ),
        (
            Some(r#"[{"name":"a","kind":"offline"}]"#),
            Some("b"),
            "LLM_PROVIDER `b` is not a configured provider",
        ),
        (
            None,
            Some("mistral"),
            "LLM_PROVIDER `mistral` is not a configured provider",
        ),
        (None, Some("openai"), "a model is required"),
    ];
    for (list, chosen, expected) in cases {
        let error = ProviderSettings::resolve(list, chosen, None, None).unwrap_err();
        assert!(
            error.to_string().contains(expected),
            "{list:?} {chosen:?}: {error}"
        );
        assert_eq!(error.code(), "invalid_provider_settings");
    }
}

#[test]
fn messages_shown_to_clients_are_scrubbed_before_they_are_cut() {
    let error = ProviderError::new(ErrorCode::UpstreamError, "x".repeat(1000));
    assert!(error.for_client(None).message.chars().count() <= 301);
    let key = "sk-test-9f8e7d6c5b4a39281706";
    for padding in 280..305 {
        let shown = ProviderError::new(
            ErrorCode::Auth,
            format!("{}{key} tail", "y".repeat(padding)),
        )
        .for_client(Some(key));
        assert!(
            !shown.message.contains("sk-test"),
            "padding {padding}: {}",
            shown.message
        );
    }
}
