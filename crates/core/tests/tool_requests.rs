//! Requests that offer tools and carry a turn's rounds of calls and replies, in each provider's
//! own wire format.

use serde_json::{Value, json};
use stepwise_core::llm::{
    ModelCall, ProviderConfig, ProviderKind, Round, ToolCall, ToolReply, ToolSpec, build_request,
};
use stepwise_core::protocol::{ChatMessage, Role};

fn request(kind: ProviderKind, answer_now: bool) -> Value {
    let schema = json!({"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]});
    let tools = [ToolSpec {
        name: "search_pubmed",
        description: "Search PubMed",
        parameters: &schema,
    }];
    let rounds = [Round {
        text: "Searching.".into(),
        calls: vec![
            ToolCall {
                id: "c1".into(),
                name: "search_pubmed".into(),
                arguments: r#"{"query":"EGFR"}"#.into(),
                malformed: false,
            },
            ToolCall {
                id: "c2".into(),
                name: "search_pubmed".into(),
                arguments: r#"{"query":"#.into(),
                malformed: true,
            },
        ],
        replies: vec![
            ToolReply {
                call_id: "c1".into(),
                name: "search_pubmed".into(),
                content: "3 articles".into(),
                is_error: false,
            },
            ToolReply {
                call_id: "c2".into(),
                name: "search_pubmed".into(),
                content: "arguments are not valid JSON".into(),
                is_error: true,
            },
        ],
    }];
    let messages = [ChatMessage::new(Role::User, "EGFR resistance articles")];
    let call = ModelCall {
        system: "SYS",
        messages: &messages,
        max_tokens: 100,
        tools: &tools,
        rounds: &rounds,
        answer_now,
    };
    let provider = ProviderConfig {
        name: "p".into(),
        kind,
        base_url: Some("http://127.0.0.1:9/v1".into()),
        model: "m".into(),
        api_key_secret: None,
    };
    serde_json::from_str(&build_request(&provider, None, &call).unwrap().body).unwrap()
}

#[test]
fn openai_offers_functions_and_replays_calls_as_tool_messages() {
    let body = request(ProviderKind::OpenAi, false);
    assert_eq!(
        body["tools"],
        json!([{"type": "function", "function": {"name": "search_pubmed", "description": "Search PubMed",
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}}])
    );
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 5);
    assert_eq!(messages[2]["role"], "assistant");
    assert_eq!(messages[2]["content"], "Searching.");
    assert_eq!(
        messages[2]["tool_calls"][0],
        json!({"id": "c1", "type": "function", "function": {"name": "search_pubmed", "arguments": "{\"query\":\"EGFR\"}"}})
    );
    // Malformed arguments go back as an empty object: the error reply says what was wrong.
    assert_eq!(messages[2]["tool_calls"][1]["function"]["arguments"], "{}");
    assert_eq!(
        messages[3],
        json!({"role": "tool", "tool_call_id": "c1", "content": "3 articles"})
    );
    assert_eq!(messages[4]["tool_call_id"], "c2");
}

#[test]
fn anthropic_offers_input_schemas_and_replays_tool_use_and_tool_result_blocks() {
    let body = request(ProviderKind::Anthropic, false);
    assert_eq!(body["tools"][0]["name"], "search_pubmed");
    assert_eq!(
        body["tools"][0]["input_schema"]["required"],
        json!(["query"])
    );
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3);
    assert_eq!(
        messages[1]["content"],
        json!([
            {"type": "text", "text": "Searching."},
            {"type": "tool_use", "id": "c1", "name": "search_pubmed", "input": {"query": "EGFR"}},
            {"type": "tool_use", "id": "c2", "name": "search_pubmed", "input": {}},
        ])
    );
    assert_eq!(messages[2]["role"], "user");
    assert_eq!(
        messages[2]["content"][1],
        json!({"type": "tool_result", "tool_use_id": "c2", "content": "arguments are not valid JSON", "is_error": true})
    );
}

#[test]
fn gemini_offers_function_declarations_and_replays_function_calls_and_responses() {
    let body = request(ProviderKind::Gemini, false);
    assert_eq!(
        body["tools"][0]["functionDeclarations"][0]["name"],
        "search_pubmed"
    );
    let contents = body["contents"].as_array().unwrap();
    assert_eq!(contents.len(), 3);
    assert_eq!(contents[1]["role"], "model");
    assert_eq!(
        contents[1]["parts"][1],
        json!({"functionCall": {"name": "search_pubmed", "args": {"query": "EGFR"}}})
    );
    assert_eq!(
        contents[2]["parts"][0],
        json!({"functionResponse": {"name": "search_pubmed", "response": {"content": "3 articles", "is_error": false}}})
    );
}

#[test]
fn an_empty_round_text_is_sent_as_no_content() {
    let schema = json!({"type": "object"});
    let tools = [ToolSpec {
        name: "t",
        description: "d",
        parameters: &schema,
    }];
    let rounds = [Round {
        text: String::new(),
        calls: vec![],
        replies: vec![],
    }];
    let call = ModelCall {
        system: "",
        messages: &[],
        max_tokens: 1,
        tools: &tools,
        rounds: &rounds,
        answer_now: false,
    };
    let provider = ProviderConfig {
        name: "p".into(),
        kind: ProviderKind::OpenAi,
        base_url: None,
        model: "m".into(),
        api_key_secret: None,
    };
    let body: Value =
        serde_json::from_str(&build_request(&provider, None, &call).unwrap().body).unwrap();
    assert_eq!(body["messages"][1]["content"], Value::Null);
}

#[test]
fn a_last_call_keeps_the_tools_declared_but_forbids_calling_them() {
    assert_eq!(request(ProviderKind::OpenAi, true)["tool_choice"], "none");
    assert_eq!(
        request(ProviderKind::Anthropic, true)["tool_choice"],
        serde_json::json!({"type": "none"})
    );
    let gemini = request(ProviderKind::Gemini, true);
    assert_eq!(
        gemini["toolConfig"]["functionCallingConfig"]["mode"],
        "NONE"
    );
    assert!(gemini["tools"].is_array());
    assert!(
        request(ProviderKind::OpenAi, false)
            .get("tool_choice")
            .is_none()
    );
}
