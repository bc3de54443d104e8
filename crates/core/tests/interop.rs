//! The UI message stream and AG-UI encoders over whole turns: order of chunks, text parts split
//! by tool calls, tool outputs from the answer, errors and deferred turns ending the stream,
//! and AG-UI run input read into a guided or an assistant turn.

use serde_json::{Value, json};
use stepwise_core::agent::{AssistantResponse, ToolUse};
use stepwise_core::handshake::{ContextRequest, Origin, RequestStatus, Slot, Urgency};
use stepwise_core::interop::agui::{
    AgUiEncoder, ResumeAnswer, RunAgentInput, RunRequest, run_input,
};
use stepwise_core::interop::ui_message::UiMessageEncoder;
use stepwise_core::protocol::{ChatResponse, ContextRequired, StreamEvent, TurnAnswer};

/// The JSON values of a run of `data:` frames (`[DONE]` kept as a string).
fn frames(text: &str) -> Vec<Value> {
    text.split("\n\n")
        .filter(|f| !f.is_empty())
        .map(|f| {
            let data = f.strip_prefix("data: ").expect("data frames only");
            serde_json::from_str(data).unwrap_or(Value::String(data.into()))
        })
        .collect()
}

fn types(values: &[Value]) -> Vec<String> {
    values
        .iter()
        .map(|v| {
            v.get("type")
                .and_then(Value::as_str)
                .unwrap_or("[DONE]")
                .to_owned()
        })
        .collect()
}

fn guided_answer() -> TurnAnswer {
    TurnAnswer::Guided(ChatResponse {
        message: "Got it.".into(),
        next_step: "business_goals".into(),
        suggestions: vec!["Launches".into()],
        turns: Some(1),
        ..ChatResponse::default()
    })
}

fn assistant_answer() -> TurnAnswer {
    TurnAnswer::Assistant(AssistantResponse {
        message: "Found three.".into(),
        tool_history: vec![ToolUse {
            tool_name: "search_pubmed".into(),
            input: json!({"query": "egfr"}),
            output: "3 articles found".into(),
            is_error: false,
        }],
        ..serde_json::from_value(json!({"message": ""})).unwrap()
    })
}

#[test]
fn a_guided_turn_is_one_message_with_its_answer_as_data_then_done() {
    let mut encoder = UiMessageEncoder::new("m1");
    let mut out = String::new();
    for event in [
        StreamEvent::Status {
            message: "Thinking".into(),
        },
        StreamEvent::TextDelta {
            text: "Got ".into(),
        },
        StreamEvent::TextDelta { text: "it.".into() },
        StreamEvent::Complete {
            payload: Box::new(guided_answer()),
        },
    ] {
        out.push_str(&encoder.encode(&event));
    }
    let values = frames(&out);
    assert_eq!(
        types(&values),
        [
            "start",
            "start-step",
            "data-status",
            "text-start",
            "text-delta",
            "text-delta",
            "text-end",
            "data-stepwise",
            "finish-step",
            "finish",
            "[DONE]"
        ]
    );
    assert_eq!(values[7]["data"]["step"], "business_goals");
    assert_eq!(values[7]["data"]["kind"], "guided");
    assert_eq!(values[7]["data"]["turns"], 1);
    assert!(encoder.ended());
    assert_eq!(
        encoder.encode(&StreamEvent::TextDelta {
            text: "late".into()
        }),
        ""
    );
}

#[test]
fn tool_calls_split_text_parts_and_take_their_outputs_from_the_answer() {
    let mut encoder = UiMessageEncoder::new("m1");
    let mut out = String::new();
    for event in [
        StreamEvent::TextDelta {
            text: "Searching.".into(),
        },
        StreamEvent::ToolStart {
            tool: "search_pubmed".into(),
            input: json!({"query": "egfr"}),
            call_id: None,
        },
        StreamEvent::ToolComplete {
            tool: "search_pubmed".into(),
            index: 0,
        },
        StreamEvent::TextDelta {
            text: "Found three.".into(),
        },
        StreamEvent::Complete {
            payload: Box::new(assistant_answer()),
        },
    ] {
        out.push_str(&encoder.encode(&event));
    }
    let values = frames(&out);
    assert_eq!(
        types(&values),
        [
            "start",
            "start-step",
            "text-start",
            "text-delta",
            "text-end",
            "tool-input-available",
            "text-start",
            "text-delta",
            "text-end",
            "tool-output-available",
            "data-stepwise",
            "finish-step",
            "finish",
            "[DONE]"
        ]
    );
    assert_eq!(values[2]["id"], "text-1");
    assert_eq!(values[6]["id"], "text-2");
    assert_eq!(values[5]["toolCallId"], values[9]["toolCallId"]);
    assert_eq!(values[9]["output"], "3 articles found");
}

#[test]
fn an_error_ends_either_stream() {
    let error = StreamEvent::Error {
        code: "timeout".into(),
        message: "too slow".into(),
    };
    let mut ui = UiMessageEncoder::new("m1");
    let values = frames(&ui.encode(&error));
    assert_eq!(types(&values), ["start", "start-step", "error", "[DONE]"]);
    assert_eq!(values[2]["errorText"], "too slow (timeout)");

    let mut agui = AgUiEncoder::new("t", "r", "m1", Some("purpose"));
    let values = frames(&agui.encode(&StreamEvent::TextDelta { text: "Hi".into() }));
    assert_eq!(
        types(&values),
        [
            "RUN_STARTED",
            "STEP_STARTED",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT"
        ]
    );
    let values = frames(&agui.encode(&error));
    assert_eq!(types(&values), ["TEXT_MESSAGE_END", "RUN_ERROR"]);
    assert_eq!(values[1]["code"], "timeout");
    assert!(agui.ended());
}

#[test]
fn an_agui_run_closes_its_step_before_the_state_snapshot_and_the_result() {
    let mut agui = AgUiEncoder::new("t", "r", "m1", Some("purpose"));
    let mut out = agui.encode(&StreamEvent::TextDelta {
        text: "Got it.".into(),
    });
    out.push_str(&agui.encode(&StreamEvent::Complete {
        payload: Box::new(guided_answer()),
    }));
    let values = frames(&out);
    assert_eq!(
        types(&values),
        [
            "RUN_STARTED",
            "STEP_STARTED",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
            "STEP_FINISHED",
            "STATE_SNAPSHOT",
            "RUN_FINISHED"
        ]
    );
    assert_eq!(
        values[6]["snapshot"],
        json!({"current_step": "business_goals", "config": {}, "skipped": []})
    );
    assert_eq!(values[7]["result"]["suggestions"], json!(["Launches"]));
    assert_eq!(values[7]["threadId"], "t");
}

#[test]
fn run_input_needs_a_last_user_message_and_keeps_the_history() {
    let input = |messages: Value, props: Value| -> RunAgentInput {
        serde_json::from_value(json!({"threadId": "t", "runId": "r", "messages": messages,
            "state": {"current_step": "business_goals", "config": {"purpose": "A"}},
            "forwardedProps": props}))
        .unwrap()
    };
    let Ok(RunRequest::Guided(request)) = run_input(&input(
        json!([{"role": "user", "content": "A"}, {"role": "assistant", "content": "Goals?"},
               {"role": "tool", "content": "x"},
               {"role": "user", "content": [{"type": "text", "text": "Launches"}]}]),
        json!({"turns": 1, "conversation_id": "ab"}),
    )) else {
        panic!("a guided run")
    };
    assert_eq!(request.message, "Launches");
    assert_eq!(request.conversation_history.len(), 2);
    assert_eq!(request.current_step.as_deref(), Some("business_goals"));
    assert_eq!(request.turns, Some(1));

    let refused = run_input(&input(
        json!([{"role": "assistant", "content": "Hi"}]),
        json!({}),
    ));
    assert!(refused.unwrap_err().0.contains("assistant"));
    assert!(run_input(&input(json!([]), json!({}))).is_err());
    let unknown: Result<RunAgentInput, _> = serde_json::from_value(
        json!({"threadId": "t", "runId": "r", "messages": [], "forwardedProps": {"colour": 1}}),
    );
    assert!(unknown.is_err(), "unknown forwarded props are refused");
}

#[test]
fn an_assistant_run_needs_the_page_context_and_takes_no_guided_field() {
    let input = |props: Value, state: Value| -> RunAgentInput {
        serde_json::from_value(json!({"threadId": "t", "runId": "r", "state": state,
            "messages": [{"role": "assistant", "content": "Earlier"}, {"role": "user", "content": "EGFR articles"}],
            "forwardedProps": props}))
        .unwrap()
    };
    let context = json!({"current_page": "streams", "active_tab": "articles"});
    let Ok(RunRequest::Assistant(run)) = run_input(&input(
        json!({"agent": "assistant", "context": context, "conversation_id": "ab"}),
        json!({}),
    )) else {
        panic!("an assistant run")
    };
    assert_eq!(run.message, "EGFR articles");
    assert_eq!(run.context, context);
    assert_eq!(run.conversation_id.as_deref(), Some("ab"));

    let refused = |props: Value, state: Value| run_input(&input(props, state)).unwrap_err().0;
    assert!(refused(json!({"agent": "assistant"}), json!({})).contains("page context"));
    for field in ["workflow", "turns", "user_action"] {
        let value = match field {
            "turns" => json!(1),
            "user_action" => json!({"type": "confirm"}),
            _ => json!("research_stream"),
        };
        let props = json!({"agent": "assistant", "context": context, field: value});
        assert!(refused(props, json!({})).contains(field), "{field}");
    }
    let guided_state = json!({"current_step": "purpose"});
    assert!(
        refused(
            json!({"agent": "assistant", "context": context}),
            guided_state
        )
        .contains("state")
    );
    assert!(refused(json!({"context": context}), json!({})).contains("assistant run"));
    assert!(refused(json!({"agent": "critic"}), json!({})).contains("critic"));
}

#[test]
fn an_assistant_turn_speaks_tool_calls_as_agui_events() {
    let mut encoder = AgUiEncoder::new("t", "r", "m", None);
    let mut frames = String::new();
    let events = [
        StreamEvent::Status {
            message: "Thinking...".into(),
        },
        StreamEvent::ToolStart {
            tool: "search_pubmed".into(),
            input: json!({"query": "EGFR"}),
            call_id: None,
        },
        StreamEvent::ToolComplete {
            tool: "search_pubmed".into(),
            index: 0,
        },
        StreamEvent::TextDelta {
            text: "Found 3.".into(),
        },
        StreamEvent::Complete {
            payload: Box::new(TurnAnswer::Assistant(AssistantResponse {
                message: "Found 3.".into(),
                tool_history: vec![ToolUse {
                    tool_name: "search_pubmed".into(),
                    input: json!({"query": "EGFR"}),
                    output: "3 articles found".into(),
                    is_error: false,
                }],
                ..AssistantResponse::default()
            })),
        },
    ];
    for event in &events {
        frames.push_str(&encoder.encode(event));
    }
    let values = self::frames(&frames);
    let types: Vec<&str> = values.iter().map(|v| v["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "RUN_STARTED",
            "CUSTOM",
            "TOOL_CALL_START",
            "TOOL_CALL_ARGS",
            "TOOL_CALL_END",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
            "TOOL_CALL_RESULT",
            "RUN_FINISHED"
        ]
    );
    assert_eq!(values[2]["toolCallName"], "search_pubmed");
    assert_eq!(values[3]["delta"], json!({"query": "EGFR"}).to_string());
    assert_eq!(values[8]["toolCallId"], values[2]["toolCallId"]);
    assert_eq!(values[8]["content"], "3 articles found");
    assert_eq!(values[9]["result"]["kind"], "assistant");
}

#[test]
fn a_refused_call_never_started_so_results_go_to_the_calls_that_ran() {
    let refused = ToolUse {
        tool_name: "nope".into(),
        input: json!({}),
        output: "error: there is no tool `nope`".into(),
        is_error: true,
    };
    let ran = ToolUse {
        tool_name: "search_pubmed".into(),
        input: json!({"query": "EGFR"}),
        output: "3 articles found".into(),
        is_error: false,
    };
    let events = [
        StreamEvent::ToolStart {
            tool: "search_pubmed".into(),
            input: json!({"query": "EGFR"}),
            call_id: None,
        },
        StreamEvent::ToolComplete {
            tool: "search_pubmed".into(),
            index: 1,
        },
        StreamEvent::Complete {
            payload: Box::new(TurnAnswer::Assistant(AssistantResponse {
                message: "Found 3.".into(),
                tool_history: vec![refused, ran],
                ..AssistantResponse::default()
            })),
        },
    ];
    let mut agui = AgUiEncoder::new("t", "r", "m", None);
    let mut ui = UiMessageEncoder::new("m");
    let (mut agui_text, mut ui_text) = (String::new(), String::new());
    for event in &events {
        agui_text.push_str(&agui.encode(event));
        ui_text.push_str(&ui.encode(event));
    }
    let results: Vec<Value> = frames(&agui_text)
        .into_iter()
        .filter(|v| v["type"] == "TOOL_CALL_RESULT")
        .collect();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["content"], "3 articles found");
    let outputs: Vec<Value> = frames(&ui_text)
        .into_iter()
        .filter(|v| v["type"] == "tool-output-available" || v["type"] == "tool-output-error")
        .collect();
    assert_eq!(outputs.len(), 1);
    assert_eq!(outputs[0]["output"], "3 articles found");
}

#[test]
fn a_held_call_is_a_tool_part_awaiting_approval_and_its_approved_run_answers_that_part() {
    let mut approval = stepwise_core::approval::Approval::proposed(
        "start_research",
        "call_9",
        json!({"prompt": "x", "providers": ["a"]}),
        2,
    );
    approval.issue("ap1", 0, 1000);
    let mut held = UiMessageEncoder::new("m1");
    let mut out = String::new();
    for event in [
        StreamEvent::TextDelta {
            text: "I will start it.".into(),
        },
        StreamEvent::ApprovalRequired {
            approval: Box::new(approval.clone()),
        },
    ] {
        out.push_str(&held.encode(&event));
    }
    let values = frames(&out);
    let kinds = types(&values);
    let input = kinds
        .iter()
        .position(|t| t == "tool-input-available")
        .unwrap();
    assert_eq!(kinds[input + 1], "tool-approval-request");
    assert_eq!(values[input]["toolCallId"], "call_9");
    assert_eq!(
        values[input]["input"],
        json!({"prompt": "x", "providers": ["a"]})
    );
    assert_eq!(
        values[input + 1],
        json!({"type": "tool-approval-request", "approvalId": "ap1", "toolCallId": "call_9"})
    );
    // The approved run: its tool part is the held call's, its output the tool's.
    let mut run = UiMessageEncoder::new("m2");
    let answer = TurnAnswer::Assistant(AssistantResponse {
        message: "Started.".into(),
        tool_history: vec![ToolUse {
            tool_name: "start_research".into(),
            input: json!({}),
            output: "Started job j1.".into(),
            is_error: false,
        }],
        ..AssistantResponse::default()
    });
    let mut out = String::new();
    for event in [
        StreamEvent::ToolStart {
            tool: "start_research".into(),
            input: json!({"prompt": "x"}),
            call_id: Some("call_9".into()),
        },
        StreamEvent::ToolComplete {
            tool: "start_research".into(),
            index: 0,
        },
        StreamEvent::Complete {
            payload: Box::new(answer),
        },
    ] {
        out.push_str(&run.encode(&event));
    }
    let values = frames(&out);
    assert!(
        !types(&values).contains(&"tool-input-available".to_owned()),
        "the held call's part is not started again"
    );
    let output = values
        .iter()
        .find(|v| v["type"] == "tool-output-available")
        .unwrap();
    assert_eq!(output["toolCallId"], "call_9");
    assert_eq!(output["output"], "Started job j1.");
}

#[test]
fn a_deferred_assistant_run_ends_with_the_request_as_an_interrupt_a_resume_answers() {
    let slot = Slot::open(
        "s1".into(),
        0,
        "note",
        None,
        0,
        Urgency::Required,
        "Your notes",
    );
    let request = ContextRequest {
        request_id: "r1".into(),
        user_message_id: "m1".into(),
        origin: Origin::Analyzer,
        created_at: 0,
        sla_ms: 300_000,
        reminded: false,
        status: RequestStatus::Open,
        resolved_at: None,
        slots: vec![slot],
    };
    let waiting = StreamEvent::ContextRequired {
        payload: Box::new(ContextRequired::of("c1", &request)),
    };
    let mut agui = AgUiEncoder::new("t", "r", "m", None);
    let values = frames(&agui.encode(&waiting));
    let finished = values.last().unwrap();
    assert_eq!(finished["type"], "RUN_FINISHED");
    let interrupt = &finished["outcome"]["interrupts"][0];
    assert_eq!(finished["outcome"]["type"], "interrupt");
    assert_eq!(interrupt["id"], "context:r1");
    assert_eq!(interrupt["reason"], "context_request");
    assert_eq!(interrupt["message"], "Context for the answer: Your notes");
    assert_eq!(interrupt["expiresAt"], "1970-01-01T00:05:00Z");
    assert_eq!(
        interrupt["responseSchema"]["properties"]["skip"]["items"]["enum"],
        json!(["s1"])
    );

    let resume = |id: &str, status: &str, payload: Value| {
        let input: RunAgentInput = serde_json::from_value(json!({"threadId": "t", "runId": "r2",
            "messages": [], "resume": [{"interruptId": id, "status": status, "payload": payload}],
            "forwardedProps": {"agent": "assistant", "conversation_id": "c1"}}))
        .unwrap();
        run_input(&input)
    };
    let supplied = resume(
        "context:r1",
        "resolved",
        json!({"payloads": [{"slot": "s1", "text": "My note"}], "skip": []}),
    );
    let Ok(RunRequest::Resume(run)) = supplied else {
        panic!("a resume: {supplied:?}")
    };
    assert_eq!(run.conversation_id, "c1");
    assert_eq!(
        run.answer,
        ResumeAnswer::Context {
            request_id: "r1".into(),
            payloads: vec![json!({"slot": "s1", "text": "My note"})],
            skip: vec![],
            run_without: false,
        }
    );
    let Ok(RunRequest::Resume(run)) = resume("context:r1", "cancelled", Value::Null) else {
        panic!("a cancelled resume")
    };
    assert!(matches!(
        run.answer,
        ResumeAnswer::Context {
            run_without: true,
            ..
        }
    ));
    // An approval's id has no prefix: the same entry shape decides an approval.
    let Ok(RunRequest::Resume(run)) = resume("a1", "resolved", json!({"approved": true})) else {
        panic!("an approval")
    };
    assert!(matches!(
        run.answer,
        ResumeAnswer::Approval { approved: true, .. }
    ));
    for (status, payload) in [
        ("resolved", json!({})),
        ("resolved", json!({"payloads": "x"})),
        ("resolved", json!({"skip": [1]})),
        ("maybe", json!({"skip": ["s1"]})),
    ] {
        let refused = resume("context:r1", status, payload.clone());
        assert!(refused.is_err(), "{status} {payload}");
    }
}
