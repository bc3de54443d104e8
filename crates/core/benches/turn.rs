//! Criterion benchmarks of the core's part of a real turn, stage by stage, natively: what the
//! Worker's CPU spends on a guided turn and on an assistant turn without tools, outside the
//! runtime's own I/O (request parse and validation, prompt assembly, upstream request encoding,
//! stream decoding, marker parsing, finish, persistence, SSE encoding), and each turn whole.
//! The model's answer is the offline provider's, sent as an OpenAI-compatible stream in deltas
//! of about 16 bytes (a token or so each, as providers send them).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use stepwise_core::agent::{Agent, AgentLimits, Step, finish as finish_answer};
use stepwise_core::conversation::{self, Command, ConversationKind, Entry, GuidedState};
use stepwise_core::handshake::{Baseline, PromptSheet, classify, mode_of};
use stepwise_core::llm::{ModelCall, ProviderConfig, ProviderKind, StreamDecoder, build_request};
use stepwise_core::markers::{Event, MarkerParser};
use stepwise_core::offline::{self, assistant_reply};
use stepwise_core::protocol::{ChatMessage, ChatRequest, Role, StreamEvent, TurnAnswer};
use stepwise_core::registry::{ChatContext, Registry, system_prompt};
use stepwise_core::turn::{self, TurnPlan, TurnStart};
use stepwise_core::workflow::WorkflowSpec;

/// The body of a guided turn at the fourth step, with the history so far.
const GUIDED_REQUEST: &str = r#"{
  "conversation_id": "0123456789abcdef0123456789abcdef", "turns": 3,
  "message": "Oncology and cardiology, mostly",
  "current_step": "focus_areas",
  "current_config": {"purpose": "Monitor competitors for strategic planning",
                     "business_goals": ["Track launches", "pricing"], "stream_type": "competitive"},
  "conversation_history": [
    {"role": "user", "content": "Monitor competitors for strategic planning"},
    {"role": "assistant", "content": "Noted your purpose. Which business goals should this stream serve?"},
    {"role": "user", "content": "Track launches, pricing"},
    {"role": "assistant", "content": "Noted your business goals. What type of stream is this?\nSUGGESTIONS: competitive, regulatory, clinical, scientific"},
    {"role": "user", "content": "competitive"},
    {"role": "assistant", "content": "Saved your stream type. Which therapeutic or focus areas should it cover?"}
  ],
  "user_action": {"type": "text_input"}
}"#;

/// The page an assistant turn is asked from: a stream's Articles tab with results on screen.
fn assistant_context() -> Value {
    let items: Vec<Value> = (0..20)
        .map(|i| json!({"id": format!("pmid-{i}"), "title": format!("EGFR resistance study {i}"), "year": 2020 + i % 5}))
        .collect();
    json!({"current_page": "streams", "active_tab": "articles",
           "search": {"query": "EGFR resistance", "date_from": "2020"},
           "results": {"total": 120, "loaded": 20}, "item_summaries": items})
}

fn provider() -> ProviderConfig {
    ProviderConfig {
        name: "bench".into(),
        kind: ProviderKind::OpenAi,
        base_url: Some("https://api.example.com/v1".into()),
        model: "gpt-bench".into(),
        api_key_secret: Some("KEY".into()),
    }
}

/// `text` as an OpenAI-compatible chat completions stream, in deltas of about 16 bytes.
fn upstream_stream(text: &str) -> Vec<u8> {
    let mut out = String::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut end = 16.min(rest.len());
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        let chunk = json!({"choices": [{"index": 0, "delta": {"content": &rest[..end]}}]});
        out.push_str(&format!("data: {chunk}\n\n"));
        rest = &rest[end..];
    }
    out.push_str("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
    out.into_bytes()
}

/// The stream's bytes as the network hands them over: about 1 KiB at a time.
fn network_chunks(bytes: &[u8]) -> Vec<&[u8]> {
    bytes.chunks(1024).collect()
}

/// Decodes the upstream stream and feeds its text through `parser`, emitting each text delta
/// as an SSE frame; returns the frames' total length.
fn stream_through(chunks: &[&[u8]], parser: &mut MarkerParser) -> usize {
    let mut decoder = StreamDecoder::new(ProviderKind::OpenAi);
    let mut sent = 0;
    let mut id = 0;
    for chunk in chunks {
        for item in decoder.feed(chunk) {
            if let stepwise_core::llm::StreamItem::Text { text } = item {
                let shown: String = parser
                    .feed(&text)
                    .filter_map(|e| match e {
                        Event::Text { text } => Some(text),
                        _ => None,
                    })
                    .collect();
                if !shown.is_empty() {
                    id += 1;
                    sent += StreamEvent::TextDelta { text: shown }.to_sse(id).len();
                }
            }
        }
    }
    sent + decoder.finish().len()
}

fn guided(c: &mut Criterion) {
    let spec = WorkflowSpec::builtin("research_stream").expect("built in");
    let request: ChatRequest = serde_json::from_str(GUIDED_REQUEST).expect("valid request");
    let Ok(TurnStart::CallModel(plan)) = turn::begin(&spec, &request) else {
        panic!("a model call")
    };
    let answer = offline::reply(&spec, &plan);
    let stream = upstream_stream(&answer);
    let chunks = network_chunks(&stream);
    let parsed = {
        let mut parser = MarkerParser::new();
        stream_through(&chunks, &mut parser);
        parser.finish()
    };
    let response = turn::finish(&spec, &plan, parsed.clone()).response;
    let state = committed_state(&request, &response, &answer);
    let record = started_record(&request);

    let mut group = c.benchmark_group("turn/guided");
    group.bench_function("1 parse and validate the request", |b| {
        b.iter(|| {
            let request: ChatRequest = serde_json::from_str(black_box(GUIDED_REQUEST)).unwrap();
            turn::begin(&spec, &request).is_ok()
        })
    });
    group.bench_function("2 prompt and upstream request", |b| {
        b.iter(|| upstream_body(black_box(&plan)))
    });
    group.bench_function("3 decode, parse markers, SSE deltas", |b| {
        b.iter(|| stream_through(black_box(&chunks), &mut MarkerParser::new()))
    });
    group.bench_function("4 finish and the complete event", |b| {
        b.iter(|| {
            let response = turn::finish(&spec, &plan, black_box(parsed.clone())).response;
            let answer: TurnAnswer = response.into();
            StreamEvent::Complete {
                payload: Box::new(answer),
            }
            .to_sse(30)
            .len()
        })
    });
    group.bench_function("5 persist (commit sent, handled and stored)", |b| {
        b.iter(|| persist_guided(black_box(&record), &state))
    });
    group.bench_function("whole turn", |b| {
        b.iter(|| {
            let request: ChatRequest = serde_json::from_str(black_box(GUIDED_REQUEST)).unwrap();
            let Ok(TurnStart::CallModel(plan)) = turn::begin(&spec, &request) else {
                unreachable!()
            };
            let body = upstream_body(&plan);
            let mut parser = MarkerParser::new();
            let sent = stream_through(&chunks, &mut parser);
            let response = turn::finish(&spec, &plan, parser.finish()).response;
            let state = committed_state(&request, &response, &answer);
            let stored = persist_guided(&record, &state);
            let complete = StreamEvent::Complete {
                payload: Box::new(response.into()),
            };
            body + sent + stored + complete.to_sse(30).len()
        })
    });
    group.finish();
}

/// The upstream request's body for a guided turn's plan (the system prompt is the plan's).
fn upstream_body(plan: &TurnPlan) -> usize {
    let call = ModelCall::text(&plan.system_prompt, &plan.messages, 1024);
    build_request(&provider(), Some("sk-bench"), &call)
        .expect("an HTTP provider")
        .body
        .len()
}

fn committed_state(
    request: &ChatRequest,
    response: &stepwise_core::protocol::ChatResponse,
    answer: &str,
) -> GuidedState {
    let mut history = request.conversation_history.clone();
    history.push(ChatMessage::new(Role::User, request.message.clone()));
    history.push(ChatMessage::new(Role::Assistant, answer.to_owned()));
    GuidedState {
        workflow: "research_stream".into(),
        current_step: response.next_step.clone(),
        current_config: response.updated_config.clone(),
        conversation_history: history,
        skipped: response.skipped.clone(),
    }
}

const OWNER: &str = "owner-bench";
const ID: &str = "0123456789abcdef0123456789abcdef";

/// A conversation with a guided turn running (lease 1).
fn started_record(request: &ChatRequest) -> conversation::Conversation {
    let begin = Command::BeginGuided {
        token_hash: "hash".into(),
        turns: None,
        lease_ms: 60_000,
    };
    let mut record = conversation::handle(None, ID, OWNER, &begin, 1_000)
        .expect("begun")
        .record
        .expect("a record");
    record.kind = ConversationKind::Guided;
    let _ = request;
    record
}

/// What persisting a guided turn costs the Worker and the object: the command serialized, read,
/// handled and the record serialized for storage.
fn persist_guided(record: &conversation::Conversation, state: &GuidedState) -> usize {
    let command = Command::CommitGuided {
        lease: 1,
        state: state.clone(),
    };
    let sent = serde_json::to_string(&command).unwrap();
    let read: Command = serde_json::from_str(&sent).unwrap();
    let handled = conversation::handle(Some(record), ID, OWNER, &read, 2_000).expect("committed");
    let stored = serde_json::to_string(handled.record.as_ref().expect("kept")).unwrap();
    sent.len() + stored.len()
}

fn assistant(c: &mut Criterion) {
    let registry = Registry::builtin();
    let raw_context = assistant_context();
    let context_text = raw_context.to_string();
    let message = "Which year is most common among these?";
    let sheet = PromptSheet::builtin();
    let context = ChatContext::from_value(raw_context.clone()).expect("a valid context");
    let resolution = registry.resolve(&context.current_page, context.active_tab.as_deref(), None);
    let offline = assistant_reply(message, &context, &resolution, &[], true);
    let stream = upstream_stream(&offline.text);
    let chunks = network_chunks(&stream);
    let history = vec![
        ChatMessage::new(Role::User, "EGFR resistance articles"),
        ChatMessage::new(
            Role::Assistant,
            "Here are 20 of 120 articles on EGFR resistance.",
        ),
    ];

    let mut group = c.benchmark_group("turn/assistant");
    group.bench_function("1 parse and check the context", |b| {
        b.iter(|| {
            let value: Value = serde_json::from_str(black_box(&context_text)).unwrap();
            ChatContext::from_value(value).is_ok()
        })
    });
    group.bench_function("2 resolve the page, prompt and upstream request", |b| {
        b.iter(|| assistant_prompt(&registry, &context, &sheet, black_box(message), &history))
    });
    group.bench_function("3 decode, parse markers, SSE deltas", |b| {
        b.iter(|| {
            let mut parser = MarkerParser::with_registry(resolution.marker_registry());
            stream_through(black_box(&chunks), &mut parser)
        })
    });
    group.bench_function("4 agent, finish and the complete event", |b| {
        b.iter(|| {
            let mut parser = MarkerParser::with_registry(resolution.marker_registry());
            stream_through(&chunks, &mut parser);
            complete_assistant(&resolution, parser, &offline.text)
        })
    });
    group.bench_function("whole turn", |b| {
        b.iter(|| {
            let value: Value = serde_json::from_str(black_box(&context_text)).unwrap();
            let context = ChatContext::from_value(value).unwrap();
            let resolution =
                registry.resolve(&context.current_page, context.active_tab.as_deref(), None);
            let body = assistant_prompt(&registry, &context, &sheet, message, &history);
            let mut parser = MarkerParser::with_registry(resolution.marker_registry());
            let sent = stream_through(&chunks, &mut parser);
            body + sent + complete_assistant(&resolution, parser, &offline.text)
        })
    });
    group.finish();
}

/// The system prompt (page, screen, payload instructions, tools, context bundle) and the
/// upstream request with the page's tools offered.
fn assistant_prompt(
    registry: &Registry,
    context: &ChatContext,
    sheet: &PromptSheet,
    message: &str,
    history: &[ChatMessage],
) -> usize {
    let resolution = registry.resolve(&context.current_page, context.active_tab.as_deref(), None);
    let mut system = system_prompt(&resolution, context, None);
    let baseline = Baseline {
        stream: None,
        literature: None,
        job: None,
        writing_style: None,
        earlier: "",
    };
    let mode = mode_of(classify(message));
    system.push_str(&baseline.render(sheet, &context.current_page, mode, None, None));
    let mut messages = history.to_vec();
    messages.push(ChatMessage::new(Role::User, message.to_owned()));
    let agent = Agent::new(&resolution, AgentLimits::default());
    let tools = agent.tool_specs();
    let call = ModelCall {
        tools: &tools,
        ..ModelCall::text(&system, &messages, 1024)
    };
    build_request(&provider(), Some("sk-bench"), &call)
        .expect("an HTTP provider")
        .body
        .len()
}

/// The loop's answer from the model's text, the `complete` event and the messages committed.
fn complete_assistant(
    resolution: &stepwise_core::registry::Resolution<'_>,
    parser: MarkerParser,
    text: &str,
) -> usize {
    let mut agent = Agent::new(resolution, AgentLimits::default());
    let Step::CallModel { .. } = agent.start() else {
        unreachable!()
    };
    agent.model_answered(text, Vec::new());
    let response = finish_answer(resolution, parser.finish(), agent);
    let mut answer = Entry::user(&response.message, 2, None);
    answer.role = Role::Assistant;
    answer.payloads = response.payloads.clone();
    answer.suggested_values = response.suggested_values.clone();
    answer.suggested_actions = response.suggested_actions.clone();
    let entries = vec![
        Entry::user("Which year is most common among these?", 1, Some("streams")),
        answer,
    ];
    let commit = Command::CommitAssistant {
        lease: 1,
        entries,
        resumed: None,
        requests: Vec::new(),
        writing_style: None,
    };
    let stored = serde_json::to_string(&commit).unwrap().len();
    let complete = StreamEvent::Complete {
        payload: Box::new(response.into()),
    };
    stored + complete.to_sse(40).len()
}

criterion_group!(benches, guided, assistant);
criterion_main!(benches);
