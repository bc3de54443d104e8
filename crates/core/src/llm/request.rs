//! The HTTP request of a streamed model call, for each provider protocol: the system prompt,
//! the conversation, and, for a model with tools, the tools offered and the rounds of calls and
//! replies of the current turn, in each protocol's own shape.

use serde_json::{Value, json};

use super::tools::{Round, ToolSpec};
use super::{ProviderConfig, ProviderKind};
use crate::protocol::{ChatMessage, Role};

/// A model call: the system prompt and the conversation, oldest first, ending with the user;
/// then, with tools, the rounds of the current turn.
#[derive(Debug, Clone, Copy)]
pub struct ModelCall<'a> {
    /// Instructions for the model.
    pub system: &'a str,
    /// The conversation.
    pub messages: &'a [ChatMessage],
    /// Most tokens to generate.
    pub max_tokens: u32,
    /// Tools the model may call (none: a plain text answer).
    pub tools: &'a [ToolSpec<'a>],
    /// The current turn's rounds so far: the model's calls and their replies.
    pub rounds: &'a [Round],
    /// The model must answer in text now: the tools stay declared (providers refuse calls in
    /// the history without them) but may not be called (`tool_choice` none).
    pub answer_now: bool,
}

impl<'a> ModelCall<'a> {
    /// A call without tools.
    pub fn text(system: &'a str, messages: &'a [ChatMessage], max_tokens: u32) -> Self {
        ModelCall {
            system,
            messages,
            max_tokens,
            tools: &[],
            rounds: &[],
            answer_now: false,
        }
    }
}

/// An HTTP request to perform: always a POST of a JSON body that asks for a streamed answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpRequest {
    /// Full URL.
    pub url: String,
    /// Headers, the key's among them when one was given. Never log these.
    pub headers: Vec<(String, String)>,
    /// JSON body.
    pub body: String,
}

/// Builds the streamed request for a provider; `None` for the offline provider, which needs no
/// request. `api_key` goes into the protocol's auth header only.
///
/// ```
/// use stepwise_core::llm::{build_request, ModelCall, ProviderConfig, ProviderKind};
/// use stepwise_core::protocol::{ChatMessage, Role};
/// let provider = ProviderConfig { name: "claude".into(), kind: ProviderKind::Anthropic,
///     base_url: Some("http://127.0.0.1:9000/v1".into()), model: "m".into(), api_key_secret: None };
/// let messages = [ChatMessage::new(Role::User, "Hi")];
/// let request = build_request(&provider, Some("k"), &ModelCall::text("Be brief", &messages, 512)).unwrap();
/// assert_eq!(request.url, "http://127.0.0.1:9000/v1/messages");
/// assert!(request.headers.contains(&("x-api-key".into(), "k".into())));
/// ```
pub fn build_request(
    provider: &ProviderConfig,
    api_key: Option<&str>,
    call: &ModelCall<'_>,
) -> Option<HttpRequest> {
    let base = |default: &str| {
        provider
            .base_url
            .as_deref()
            .unwrap_or(default)
            .trim_end_matches('/')
            .to_owned()
    };
    let mut headers = vec![
        ("content-type".to_owned(), "application/json".to_owned()),
        ("accept".to_owned(), "text/event-stream".to_owned()),
    ];
    let (url, body) = match provider.kind {
        ProviderKind::Offline => return None,
        ProviderKind::OpenAi => {
            if let Some(key) = api_key {
                headers.push(("authorization".into(), format!("Bearer {key}")));
            }
            let mut messages = vec![json!({"role": "system", "content": call.system})];
            messages.extend(
                call.messages
                    .iter()
                    .map(|m| json!({"role": role_name(m.role, "assistant"), "content": m.content})),
            );
            for round in call.rounds {
                let calls: Vec<Value> = round
                    .calls
                    .iter()
                    .map(|c| {
                        let arguments = if c.malformed { "{}" } else { &c.arguments };
                        json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": arguments}})
                    })
                    .collect();
                let text = Some(&round.text).filter(|t| !t.is_empty());
                messages.push(json!({"role": "assistant", "content": text, "tool_calls": calls}));
                for reply in &round.replies {
                    messages.push(json!({"role": "tool", "tool_call_id": reply.call_id, "content": reply.content}));
                }
            }
            let mut body = json!({"model": provider.model, "stream": true, "max_tokens": call.max_tokens, "messages": messages});
            if !call.tools.is_empty() {
                let tools: Vec<Value> = call
                    .tools
                    .iter()
                    .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}))
                    .collect();
                body["tools"] = Value::Array(tools);
                if call.answer_now {
                    body["tool_choice"] = json!("none");
                }
            }
            (
                format!("{}/chat/completions", base("https://api.openai.com/v1")),
                body,
            )
        }
        ProviderKind::Anthropic => {
            if let Some(key) = api_key {
                headers.push(("x-api-key".into(), key.to_owned()));
            }
            headers.push(("anthropic-version".into(), "2023-06-01".into()));
            let mut messages: Vec<Value> = alternating(call.messages)
                .into_iter()
                .map(|(role, content)| json!({"role": role_name(role, "assistant"), "content": content}))
                .collect();
            for round in call.rounds {
                let mut content = Vec::new();
                if !round.text.is_empty() {
                    content.push(json!({"type": "text", "text": round.text}));
                }
                content.extend(round.calls.iter().map(|c| {
                    let input = c.input().unwrap_or_else(|| json!({}));
                    json!({"type": "tool_use", "id": c.id, "name": c.name, "input": input})
                }));
                messages.push(json!({"role": "assistant", "content": content}));
                let results: Vec<Value> = round
                    .replies
                    .iter()
                    .map(|r| json!({"type": "tool_result", "tool_use_id": r.call_id, "content": r.content, "is_error": r.is_error}))
                    .collect();
                messages.push(json!({"role": "user", "content": results}));
            }
            let mut body = json!({"model": provider.model, "stream": true, "max_tokens": call.max_tokens, "system": call.system, "messages": messages});
            if !call.tools.is_empty() {
                let tools: Vec<Value> = call
                    .tools
                    .iter()
                    .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
                    .collect();
                body["tools"] = Value::Array(tools);
                if call.answer_now {
                    body["tool_choice"] = json!({"type": "none"});
                }
            }
            (
                format!("{}/messages", base("https://api.anthropic.com/v1")),
                body,
            )
        }
        ProviderKind::Gemini => {
            if let Some(key) = api_key {
                headers.push(("x-goog-api-key".into(), key.to_owned()));
            }
            let mut contents: Vec<Value> = alternating(call.messages)
                .into_iter()
                .map(|(role, content)| json!({"role": role_name(role, "model"), "parts": [{"text": content}]}))
                .collect();
            for round in call.rounds {
                let mut parts = Vec::new();
                if !round.text.is_empty() {
                    parts.push(json!({"text": round.text}));
                }
                parts.extend(round.calls.iter().map(|c| {
                    let args = c.input().unwrap_or_else(|| json!({}));
                    json!({"functionCall": {"name": c.name, "args": args}})
                }));
                contents.push(json!({"role": "model", "parts": parts}));
                let responses: Vec<Value> = round
                    .replies
                    .iter()
                    .map(|r| json!({"functionResponse": {"name": r.name, "response": {"content": r.content, "is_error": r.is_error}}}))
                    .collect();
                contents.push(json!({"role": "user", "parts": responses}));
            }
            let mut body = json!({
                "systemInstruction": {"parts": [{"text": call.system}]},
                "contents": contents,
                "generationConfig": {"maxOutputTokens": call.max_tokens},
            });
            if !call.tools.is_empty() {
                let declarations: Vec<Value> = call
                    .tools
                    .iter()
                    .map(|t| json!({"name": t.name, "description": t.description, "parameters": t.parameters}))
                    .collect();
                body["tools"] = json!([{"functionDeclarations": declarations}]);
                if call.answer_now {
                    body["toolConfig"] = json!({"functionCallingConfig": {"mode": "NONE"}});
                }
            }
            let base = base("https://generativelanguage.googleapis.com/v1beta");
            (
                format!(
                    "{base}/models/{}:streamGenerateContent?alt=sse",
                    provider.model
                ),
                body,
            )
        }
    };
    Some(HttpRequest {
        url,
        headers,
        body: body.to_string(),
    })
}

fn role_name(role: Role, assistant: &'static str) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => assistant,
    }
}

/// The conversation as these APIs want it: starting with the user, roles alternating (leading
/// assistant messages dropped, consecutive messages of one role joined).
fn alternating(messages: &[ChatMessage]) -> Vec<(Role, String)> {
    let mut out: Vec<(Role, String)> = Vec::with_capacity(messages.len());
    for message in messages.iter().skip_while(|m| m.role == Role::Assistant) {
        match out.last_mut() {
            Some((role, content)) if *role == message.role => {
                content.push_str("\n\n");
                content.push_str(&message.content);
            }
            _ => out.push((message.role, message.content.clone())),
        }
    }
    out
}
