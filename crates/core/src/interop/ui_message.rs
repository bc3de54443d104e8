//! The Vercel AI SDK's UI message stream (`x-vercel-ai-ui-message-stream: v1`): what `useChat`
//! reads. One turn is one assistant message: `start`, `start-step`, its text as `text-start` /
//! `text-delta` / `text-end`, the assistant's tools as `tool-input-available` and
//! `tool-output-available`, the turn's answer as a `data-stepwise` part ([`answer_data`]),
//! `finish-step`, `finish`, then `[DONE]`. A failed turn ends with an `error` chunk; a deferred
//! one with a `data-context-required` part. Progress notes are transient data parts.

use serde_json::{Value, json};

use super::{TextParts, ToolCalls, answer_data, answer_message, data_frame};
use crate::protocol::StreamEvent;

/// The response header that marks a UI message stream, and its value.
pub const STREAM_HEADER: (&str, &str) = ("x-vercel-ai-ui-message-stream", "v1");

/// Encodes one turn's events as UI message stream chunks.
///
/// ```
/// use stepwise_core::interop::ui_message::UiMessageEncoder;
/// use stepwise_core::protocol::StreamEvent;
///
/// let mut encoder = UiMessageEncoder::new("msg-1");
/// let frames = encoder.encode(&StreamEvent::TextDelta { text: "Hi".into() });
/// assert!(frames.starts_with("data: {\"messageId\":\"msg-1\",\"type\":\"start\"}\n\n"));
/// assert!(frames.ends_with("data: {\"delta\":\"Hi\",\"id\":\"text-1\",\"type\":\"text-delta\"}\n\n"));
/// ```
#[derive(Debug)]
pub struct UiMessageEncoder {
    message_id: String,
    started: bool,
    ended: bool,
    /// Its text parts (`text-1`, `text-2`, … split by tool calls).
    text: TextParts,
    /// Ids of the tool calls started, in order; their outputs come with the answer.
    tool_calls: ToolCalls,
}

impl UiMessageEncoder {
    /// An encoder for the assistant message `message_id`.
    pub fn new(message_id: impl Into<String>) -> Self {
        UiMessageEncoder {
            message_id: message_id.into(),
            started: false,
            ended: false,
            text: TextParts::new("text", |base, n| format!("{base}-{n}")),
            tool_calls: ToolCalls::default(),
        }
    }

    /// Whether the stream has ended (`[DONE]` was written); later events encode to nothing.
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// The frames for one event (empty once the stream has ended).
    pub fn encode(&mut self, event: &StreamEvent) -> String {
        let mut out = String::new();
        if self.ended {
            return out;
        }
        if !self.started {
            self.started = true;
            push(
                &mut out,
                // An empty id continues the client's last message (an approved call's run).
                match self.message_id.as_str() {
                    "" => json!({"type": "start"}),
                    id => json!({"type": "start", "messageId": id}),
                },
            );
            push(&mut out, json!({"type": "start-step"}));
        }
        match event {
            StreamEvent::Status { message } => push(
                &mut out,
                json!({"type": "data-status", "data": {"message": message}, "transient": true}),
            ),
            StreamEvent::TextDelta { text } | StreamEvent::ModelDelta { text } => {
                self.text(&mut out, text)
            }
            StreamEvent::ToolStart {
                tool,
                input,
                call_id,
            } => {
                self.close_text(&mut out);
                // An approved call's part is on the client already (awaiting approval): its
                // output goes to that part, which is not started again.
                let id = match call_id {
                    Some(id) => id.clone(),
                    None => {
                        let id = format!("call-{}", self.tool_calls.len() + 1);
                        push(
                            &mut out,
                            json!({"type": "tool-input-available", "toolCallId": id, "toolName": tool, "input": input}),
                        );
                        id
                    }
                };
                self.tool_calls.start(id);
            }
            StreamEvent::ToolProgress {
                tool,
                stage,
                message,
                progress,
            } => push(
                &mut out,
                json!({"type": "data-tool-progress", "transient": true,
                       "data": {"tool": tool, "stage": stage, "message": message, "progress": progress}}),
            ),
            StreamEvent::ToolComplete { index, .. } => self.tool_calls.finish(*index),
            StreamEvent::ApprovalRequired { approval } => {
                // The AI SDK's shape: the held call as a tool part awaiting approval
                // (`addToolApprovalResponse` answers it).
                self.close_text(&mut out);
                push(
                    &mut out,
                    json!({"type": "tool-input-available", "toolCallId": approval.call_id,
                           "toolName": approval.tool, "input": approval.arguments}),
                );
                push(
                    &mut out,
                    json!({"type": "tool-approval-request", "approvalId": approval.id,
                           "toolCallId": approval.call_id}),
                );
                push(&mut out, json!({"type": "data-approval", "data": approval}));
            }
            StreamEvent::ContextRequired { payload } => {
                self.close_text(&mut out);
                push(
                    &mut out,
                    json!({"type": "data-context-required", "data": payload}),
                );
                self.finish(&mut out);
            }
            StreamEvent::Complete { payload } => {
                if !self.text.sent() {
                    self.text(&mut out, answer_message(payload));
                }
                self.close_text(&mut out);
                for (id, used) in self.tool_calls.results(payload) {
                    let chunk = if used.is_error {
                        json!({"type": "tool-output-error", "toolCallId": id, "errorText": used.output})
                    } else {
                        json!({"type": "tool-output-available", "toolCallId": id, "output": used.output})
                    };
                    push(&mut out, chunk);
                }
                push(
                    &mut out,
                    json!({"type": "data-stepwise", "data": answer_data(payload)}),
                );
                self.finish(&mut out);
            }
            StreamEvent::Stopped { .. } => {
                // The AI SDK's own chunk for a stream the user aborted.
                self.close_text(&mut out);
                push(&mut out, json!({"type": "abort"}));
                self.finish(&mut out);
            }
            StreamEvent::Error { code, message } => {
                self.close_text(&mut out);
                push(
                    &mut out,
                    json!({"type": "error", "errorText": format!("{message} ({code})")}),
                );
                out.push_str("data: [DONE]\n\n");
                self.ended = true;
            }
        }
        out
    }

    fn text(&mut self, out: &mut String, text: &str) {
        if let Some((id, opened)) = self.text.write(text) {
            if opened {
                push(out, json!({"type": "text-start", "id": id}));
            }
            push(out, json!({"type": "text-delta", "id": id, "delta": text}));
        }
    }

    fn close_text(&mut self, out: &mut String) {
        if let Some(id) = self.text.close() {
            push(out, json!({"type": "text-end", "id": id}));
        }
    }

    fn finish(&mut self, out: &mut String) {
        push(out, json!({"type": "finish-step"}));
        push(out, json!({"type": "finish", "finishReason": "stop"}));
        out.push_str("data: [DONE]\n\n");
        self.ended = true;
    }
}

fn push(out: &mut String, chunk: Value) {
    out.push_str(&data_frame(&chunk));
}
