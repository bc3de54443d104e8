//! Decoders of streamed model answers: provider bytes in; text deltas, tool calls, the end, or
//! a normalized error out. Byte-split invariant: SSE lines (and, for the offline provider, UTF-8
//! characters) are only decoded once complete, and a tool call is given out whole, at the event
//! that completes it (its arguments, streamed in pieces, checked by the incremental JSON
//! validator on the way).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::tools::ToolCall;
use super::{ErrorCode, ProviderError, ProviderKind};
use crate::json::JsonCheck;
use crate::sse::{SseDecoder, SseEvent};

/// What a stream produced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamItem {
    /// Generated text.
    Text {
        /// The text.
        text: String,
    },
    /// A complete tool call.
    ToolCall(ToolCall),
    /// The answer is complete.
    Finished {
        /// The provider's stop reason (`stop`, `end_turn`, `STOP`, `max_tokens`...).
        reason: Option<String>,
    },
    /// The stream failed; nothing more follows.
    Failed(ProviderError),
}

/// Incremental decoder of one provider answer.
///
/// ```
/// use stepwise_core::llm::{ProviderKind, StreamDecoder, StreamItem};
/// let mut decoder = StreamDecoder::new(ProviderKind::OpenAi);
/// let items = decoder.feed(b"data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"},\"finish_reason\":null}]}\n\ndata: [DONE]\n\n");
/// assert_eq!(items, [StreamItem::Text { text: "Hi".into() }, StreamItem::Finished { reason: None }]);
/// ```
#[derive(Debug, Clone)]
pub struct StreamDecoder {
    kind: ProviderKind,
    sse: SseDecoder,
    /// Bytes of an incomplete UTF-8 character (offline provider only).
    partial_char: Vec<u8>,
    finish_reason: Option<String>,
    ended: bool,
    /// Tool calls still streaming, by the provider's index.
    pending: Vec<(u64, PendingCall)>,
    /// Tool calls given out so far (for ids of providers that give none).
    calls: u32,
}

/// A tool call whose arguments are still streaming.
#[derive(Debug, Clone, Default)]
struct PendingCall {
    id: String,
    name: String,
    arguments: String,
    check: JsonCheck,
    /// The arguments went past [`MAX_ARGUMENT_BYTES`]; the rest was dropped.
    too_long: bool,
}

/// Most tool calls one answer may make; the provider's further calls are ignored (the agent
/// runs fewer still).
pub const MAX_CALLS_PER_ANSWER: usize = 16;
/// Longest arguments of one tool call; longer ones are given out as malformed.
pub const MAX_ARGUMENT_BYTES: usize = 64 * 1024;

impl StreamDecoder {
    /// A decoder for one answer of a provider of this kind.
    pub fn new(kind: ProviderKind) -> Self {
        StreamDecoder {
            kind,
            sse: SseDecoder::new(),
            partial_char: Vec::new(),
            finish_reason: None,
            ended: false,
            pending: Vec::new(),
            calls: 0,
        }
    }

    /// Whether the answer ended (finished or failed): later bytes are ignored.
    pub fn is_ended(&self) -> bool {
        self.ended
    }

    /// Decodes the next bytes of the response body.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<StreamItem> {
        let mut items = Vec::new();
        if self.ended {
            return items;
        }
        if self.kind == ProviderKind::Offline {
            self.feed_plain_text(bytes, &mut items);
            return items;
        }
        for event in self.sse.feed(bytes) {
            self.event(&event, &mut items);
            if self.ended {
                break;
            }
        }
        items
    }

    /// Ends the body: the answer is finished if the provider said so (a stop reason counts,
    /// for servers that omit their end event), otherwise it failed with `bad_stream`.
    pub fn finish(&mut self) -> Vec<StreamItem> {
        let mut items = Vec::new();
        if self.ended {
            return items;
        }
        self.sse.finish();
        if self.kind == ProviderKind::Offline {
            if !self.partial_char.is_empty() {
                items.push(StreamItem::Text {
                    text: String::from_utf8_lossy(&self.partial_char).into_owned(),
                });
                self.partial_char.clear();
            }
            self.end(&mut items, Ok(()));
        } else if self.finish_reason.is_some() {
            self.end(&mut items, Ok(()));
        } else {
            let error = ProviderError::new(
                ErrorCode::BadStream,
                "the stream ended before the answer was complete",
            );
            self.end(&mut items, Err(error));
        }
        items
    }

    fn event(&mut self, event: &SseEvent, items: &mut Vec<StreamItem>) {
        let data = event.data.trim();
        if self.kind == ProviderKind::OpenAi && data == "[DONE]" {
            return self.end(items, Ok(()));
        }
        let Ok(value) = serde_json::from_str::<Value>(data) else {
            let error = ProviderError::new(ErrorCode::BadStream, "a stream event is not JSON");
            return self.end(items, Err(error));
        };
        if let Some(error) = value.get("error").filter(|e| e.is_object()) {
            return self.end(items, Err(ProviderError::from_stream_error(error)));
        }
        match self.kind {
            ProviderKind::OpenAi => {
                let choice = &value["choices"][0];
                push_text(items, choice["delta"]["content"].as_str());
                for delta in choice["delta"]["tool_calls"]
                    .as_array()
                    .into_iter()
                    .flatten()
                {
                    // Some compatible servers leave the index out: a new id then starts a
                    // new call, anything else continues the last one.
                    let id = delta["id"].as_str().filter(|id| !id.is_empty());
                    let index =
                        delta["index"]
                            .as_u64()
                            .unwrap_or_else(|| match self.pending.last() {
                                Some((last, call)) if id.is_none_or(|id| id == call.id) => *last,
                                Some((last, _)) => last + 1,
                                None => 0,
                            });
                    let Some(call) = self.pending_call(index) else {
                        continue;
                    };
                    if let Some(id) = delta["id"].as_str().filter(|id| !id.is_empty()) {
                        call.id = id.to_owned();
                    }
                    let function = &delta["function"];
                    if let Some(name) = function["name"].as_str().filter(|n| !n.is_empty()) {
                        call.name = name.to_owned();
                    }
                    call.append(function["arguments"].as_str().unwrap_or(""));
                }
                if choice["finish_reason"].is_string() {
                    self.flush_calls(items);
                }
                self.note_reason(choice["finish_reason"].as_str());
            }
            ProviderKind::Anthropic => match value["type"].as_str().unwrap_or(&event.event) {
                "content_block_delta" if value["delta"]["type"] == "text_delta" => {
                    push_text(items, value["delta"]["text"].as_str());
                }
                "content_block_start" if value["content_block"]["type"] == "tool_use" => {
                    let index = value["index"].as_u64().unwrap_or(0);
                    let block = &value["content_block"];
                    let Some(call) = self.pending_call(index) else {
                        return;
                    };
                    call.id = block["id"].as_str().unwrap_or("").to_owned();
                    call.name = block["name"].as_str().unwrap_or("").to_owned();
                }
                "content_block_delta" if value["delta"]["type"] == "input_json_delta" => {
                    let index = value["index"].as_u64().unwrap_or(0);
                    let piece = value["delta"]["partial_json"].as_str().unwrap_or("");
                    // Only a block begun as `tool_use` takes arguments.
                    if let Some((_, call)) = self.pending.iter_mut().find(|(i, _)| *i == index) {
                        call.append(piece);
                    }
                }
                "content_block_stop" => {
                    let index = value["index"].as_u64().unwrap_or(0);
                    if let Some(at) = self.pending.iter().position(|(i, _)| *i == index) {
                        let (_, call) = self.pending.remove(at);
                        self.give_out(call, items);
                    }
                }
                "message_delta" => self.note_reason(value["delta"]["stop_reason"].as_str()),
                "message_stop" => self.end(items, Ok(())),
                _ => {} // message_start, text block starts, ping, and unknown events
            },
            ProviderKind::Gemini => {
                if let Some(reason) = value["promptFeedback"]["blockReason"].as_str() {
                    let error = ProviderError::new(
                        ErrorCode::UpstreamError,
                        format!("the prompt was blocked ({reason})"),
                    );
                    return self.end(items, Err(error));
                }
                let candidate = &value["candidates"][0];
                if let Some(parts) = candidate["content"]["parts"].as_array() {
                    let text: String = parts.iter().filter_map(|p| p["text"].as_str()).collect();
                    push_text(items, Some(&text));
                    for part in parts {
                        let function = &part["functionCall"];
                        if let Some(name) = function["name"].as_str() {
                            let arguments = match &function["args"] {
                                Value::Null => "{}".to_owned(),
                                args => args.to_string(),
                            };
                            let mut call = PendingCall {
                                name: name.to_owned(),
                                ..PendingCall::default()
                            };
                            call.append(&arguments);
                            self.give_out(call, items);
                        }
                    }
                }
                self.note_reason(candidate["finishReason"].as_str());
            }
            ProviderKind::Offline => unreachable!("offline answers are plain text"),
        }
    }

    fn feed_plain_text(&mut self, bytes: &[u8], items: &mut Vec<StreamItem>) {
        self.partial_char.extend_from_slice(bytes);
        let valid = match std::str::from_utf8(&self.partial_char) {
            Ok(_) => self.partial_char.len(),
            // An incomplete character at the end waits for the next bytes; invalid bytes are replaced.
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => self.partial_char.len(),
        };
        let text = String::from_utf8_lossy(&self.partial_char[..valid]).into_owned();
        self.partial_char.drain(..valid);
        push_text(items, Some(&text));
    }

    /// The call streaming at `index`, begun if new.
    /// The call streaming at `index`, begun if new; `None` once the answer has made
    /// [`MAX_CALLS_PER_ANSWER`] calls (so the search here stays short).
    fn pending_call(&mut self, index: u64) -> Option<&mut PendingCall> {
        let at = match self.pending.iter().position(|(i, _)| *i == index) {
            Some(at) => at,
            None if self.pending.len() + self.calls as usize >= MAX_CALLS_PER_ANSWER => {
                return None;
            }
            None => {
                self.pending.push((index, PendingCall::default()));
                self.pending.len() - 1
            }
        };
        Some(&mut self.pending[at].1)
    }

    /// Gives out every call still streaming, in the provider's order.
    fn flush_calls(&mut self, items: &mut Vec<StreamItem>) {
        let mut pending = std::mem::take(&mut self.pending);
        pending.sort_unstable_by_key(|(index, _)| *index);
        for (_, call) in pending {
            self.give_out(call, items);
        }
    }

    fn give_out(&mut self, call: PendingCall, items: &mut Vec<StreamItem>) {
        if call.name.is_empty() || self.calls as usize >= MAX_CALLS_PER_ANSWER {
            return; // pieces of no named call, or calls past the bound
        }
        self.calls += 1;
        let empty = call.arguments.trim().is_empty();
        let malformed = call.too_long || (!empty && call.check.finish().is_err());
        items.push(StreamItem::ToolCall(ToolCall {
            id: if call.id.is_empty() {
                format!("call_{}", self.calls)
            } else {
                call.id
            },
            name: call.name,
            arguments: if empty {
                "{}".to_owned()
            } else {
                call.arguments
            },
            malformed,
        }));
    }

    fn note_reason(&mut self, reason: Option<&str>) {
        if let Some(reason) = reason {
            self.finish_reason = Some(reason.to_owned());
        }
    }

    fn end(&mut self, items: &mut Vec<StreamItem>, outcome: Result<(), ProviderError>) {
        if outcome.is_ok() {
            self.flush_calls(items);
        }
        self.ended = true;
        items.push(match outcome {
            Ok(()) => StreamItem::Finished {
                reason: self.finish_reason.clone(),
            },
            Err(error) => StreamItem::Failed(error),
        });
    }
}

fn push_text(items: &mut Vec<StreamItem>, text: Option<&str>) {
    if let Some(text) = text.filter(|t| !t.is_empty()) {
        items.push(StreamItem::Text {
            text: text.to_owned(),
        });
    }
}

impl PendingCall {
    /// Adds a piece of the arguments, checking it as it comes.
    fn append(&mut self, piece: &str) {
        if self.too_long || piece.is_empty() {
            return;
        }
        if self.arguments.len() + piece.len() > MAX_ARGUMENT_BYTES {
            self.too_long = true;
            return;
        }
        self.check.feed(piece.as_bytes());
        self.arguments.push_str(piece);
    }
}
