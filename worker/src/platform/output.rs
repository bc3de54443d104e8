//! Where a turn's events go, for the guided chat and the assistant alike: an SSE stream written
//! as they happen (Stepwise's own events, each with its `id`, or another dialect: the AI SDK's
//! UI message stream, AG-UI), a live turn's log that clients join and leave (`super::live`), or
//! collected into one JSON answer (`Accept: application/json`).

use std::rc::Rc;

use serde_json::Value;
use stepwise_core::interop::ui_message::STREAM_HEADER;
use stepwise_core::llm::ProviderError;
use stepwise_core::markers::Event;
use stepwise_core::protocol::{ContextRequired, StreamEvent, TurnAnswer};
use worker::Response;

use super::error::{AppError, AppResult};
use super::live::TurnLog;
use super::negotiate::Wire;
use super::sse::{EventSink, stream_response};

/// The events of one turn.
pub enum Output {
    /// An event stream.
    Sse {
        /// Frames to the response body.
        sink: EventSink,
        /// The id of the last event sent.
        last_id: u64,
        /// The dialect the events are written in.
        wire: Wire,
    },
    /// A live turn's log: every client of the turn reads it, the turn does not wait for any.
    Live(Rc<TurnLog>),
    /// One JSON answer: the turn's answer, or the failure that ended it.
    Json(Option<Result<JsonAnswer, AppError>>),
}

/// What a collected turn answers.
pub enum JsonAnswer {
    /// The turn's answer.
    Turn(Box<TurnAnswer>),
    /// The turn waits for context.
    Waiting(Box<ContextRequired>),
}

/// The display text among parser events (marker lines are never shown as text).
pub fn display_text(events: std::vec::Drain<'_, Event>) -> String {
    events
        .filter_map(|e| match e {
            Event::Text { text } => Some(text),
            _ => None,
        })
        .collect()
}

impl Output {
    /// An event stream in the dialect `wire`, and the response that carries it (marked with the
    /// dialect's header where it has one: the UI message stream's).
    pub fn sse(wire: Wire) -> AppResult<(Self, Response)> {
        let (mut response, sink) = stream_response()?;
        if matches!(wire, Wire::UiMessage(_)) {
            response
                .headers_mut()
                .set(STREAM_HEADER.0, STREAM_HEADER.1)?;
        }
        let out = Output::Sse {
            sink,
            last_id: 0,
            wire,
        };
        Ok((out, response))
    }

    /// A collector for one JSON answer.
    pub fn json() -> Self {
        Output::Json(None)
    }

    /// A status note.
    pub async fn status(&mut self, message: &str) {
        if matches!(self, Output::Sse { .. } | Output::Live(_)) {
            let message = message.to_owned();
            self.emit(StreamEvent::Status { message }).await;
        }
    }

    /// A piece of the model's answer: its display text, or its own text when asked for. False
    /// once the client of an event stream has gone away.
    pub async fn delta(&mut self, model_text: &str, shown: String) -> bool {
        let model_deltas = matches!(
            self,
            Output::Sse {
                wire: Wire::Stepwise { model_deltas: true },
                ..
            }
        );
        let event = match self {
            Output::Sse { .. } if model_deltas && !model_text.is_empty() => {
                StreamEvent::ModelDelta {
                    text: model_text.to_owned(),
                }
            }
            Output::Sse { .. } if !model_deltas && !shown.is_empty() => {
                StreamEvent::TextDelta { text: shown }
            }
            Output::Sse { sink, .. } => return sink.is_open(),
            Output::Live(log) => {
                if !shown.is_empty() || !model_text.is_empty() {
                    let event = StreamEvent::TextDelta { text: shown };
                    log.push(event, Some(model_text.to_owned())).await;
                }
                return !log.is_stopped();
            }
            Output::Json(_) => return true,
        };
        self.emit(event).await
    }

    /// A tool starts (`tool_start`).
    pub async fn tool_start(&mut self, tool: &str, input: &Value) -> bool {
        self.tool_start_of(tool, input, None).await
    }

    /// A tool started: the `tool_start` event, with the model's `call_id` for a call that was
    /// held for approval (false once an event stream's client has gone away).
    pub async fn tool_start_of(
        &mut self,
        tool: &str,
        input: &Value,
        call_id: Option<&str>,
    ) -> bool {
        let event = StreamEvent::ToolStart {
            tool: tool.to_owned(),
            input: input.clone(),
            call_id: call_id.map(str::to_owned),
        };
        self.emit(event).await
    }

    /// A tool reports progress (`tool_progress`).
    pub async fn tool_progress(&mut self, tool: &str, stage: &str, message: &str, progress: f64) {
        let event = StreamEvent::ToolProgress {
            tool: tool.to_owned(),
            stage: stage.to_owned(),
            message: message.to_owned(),
            progress,
        };
        self.emit(event).await;
    }

    /// A tool finished (`tool_complete`), the call's index in the turn.
    pub async fn tool_complete(&mut self, tool: &str, index: u32) {
        let tool = tool.to_owned();
        self.emit(StreamEvent::ToolComplete { tool, index }).await;
    }

    /// The turn's answer: the `complete` event.
    pub async fn complete(&mut self, answer: TurnAnswer) {
        match self {
            Output::Json(slot) => *slot = Some(Ok(JsonAnswer::Turn(Box::new(answer)))),
            Output::Sse { .. } | Output::Live(_) => {
                let payload = Box::new(answer);
                self.emit(StreamEvent::Complete { payload }).await;
            }
        }
    }

    /// The turn ends with a call held for the owner's approval: the `approval_required` event
    /// (a JSON answer carries the approval on the answer).
    pub async fn approval_required(&mut self, approval: &stepwise_core::approval::Approval) {
        if matches!(self, Output::Sse { .. } | Output::Live(_)) {
            let approval = Box::new(approval.clone());
            self.emit(StreamEvent::ApprovalRequired { approval }).await;
        }
    }

    /// The turn was deferred: the `context_required` event (the JSON answer).
    pub async fn context_required(&mut self, waiting: ContextRequired) {
        match self {
            Output::Json(slot) => *slot = Some(Ok(JsonAnswer::Waiting(Box::new(waiting)))),
            Output::Sse { .. } | Output::Live(_) => {
                let payload = Box::new(waiting);
                self.emit(StreamEvent::ContextRequired { payload }).await;
            }
        }
    }

    /// The collected answer, if the turn produced one (JSON mode).
    pub fn answer(&self) -> Option<&TurnAnswer> {
        match self {
            Output::Json(Some(Ok(JsonAnswer::Turn(answer)))) => Some(answer),
            _ => None,
        }
    }

    /// The provider failure that ended the turn: the `error` event.
    pub async fn failed(&mut self, error: ProviderError) {
        self.error(error.into()).await;
    }

    /// The failure that ended the turn: the `error` event (the JSON answer's error).
    pub async fn error(&mut self, error: AppError) {
        match self {
            Output::Json(slot) => *slot = Some(Err(error)),
            Output::Sse { .. } | Output::Live(_) => {
                let event = StreamEvent::Error {
                    code: error.code().into(),
                    message: error.message().into(),
                };
                self.emit(event).await;
            }
        }
    }

    /// Sends an event; false when the client has gone away (the response stream was closed).
    async fn emit(&mut self, event: StreamEvent) -> bool {
        match self {
            Output::Sse {
                sink,
                last_id,
                wire,
            } => {
                *last_id += 1;
                let frame = match wire {
                    Wire::Stepwise { .. } => event.to_sse(*last_id),
                    Wire::UiMessage(encoder) => encoder.encode(&event),
                    Wire::AgUi(encoder) => encoder.encode(&event),
                };
                if frame.is_empty() {
                    return sink.is_open();
                }
                sink.write(frame.as_bytes())
            }
            Output::Live(log) => {
                log.push(event, None).await;
                !log.is_stopped()
            }
            Output::Json(_) => true,
        }
    }

    /// The turn's log, when it is a live turn.
    pub fn live(&self) -> Option<&Rc<TurnLog>> {
        match self {
            Output::Live(log) => Some(log),
            _ => None,
        }
    }

    /// `next` (a model's next piece), unless the live turn's owner stops it first: `None` then
    /// (dropping `next` closes what it reads from). Not a live turn: `next` as it ends.
    pub async fn unless_stopped<F: std::future::Future>(&self, next: F) -> Option<F::Output> {
        let Some(log) = self.live() else {
            return Some(next.await);
        };
        if log.is_stopped() {
            return None;
        }
        let next = std::pin::pin!(next);
        match futures::future::select(next, log.stop_requested()).await {
            futures::future::Either::Left((piece, _)) => Some(piece),
            futures::future::Either::Right(_) => None,
        }
    }

    /// The model's answer is whole: a live turn no longer takes a Stop (it commits as answered).
    pub fn answered(&self) {
        if let Some(log) = self.live() {
            log.answered();
        }
    }

    /// Whether this is a live turn its owner stopped.
    pub fn is_stopped(&self) -> bool {
        self.live().is_some_and(|log| log.is_stopped())
    }

    /// Sends the `stopped` event that ends a stopped turn, with the partial answer kept.
    pub async fn stopped(&mut self, message: String) {
        self.emit(StreamEvent::Stopped { message }).await;
    }

    /// The JSON answer of a collected turn (header `x-stepwise-persisted`), or its error.
    pub fn into_json_response(self, persisted: bool) -> AppResult<Response> {
        match self {
            Output::Json(Some(Ok(JsonAnswer::Waiting(waiting)))) => {
                Ok(Response::from_json(&waiting)?)
            }
            Output::Json(Some(Ok(JsonAnswer::Turn(answer)))) => {
                let mut response = Response::from_json(&answer)?;
                let flag = if persisted { "true" } else { "false" };
                response.headers_mut().set("x-stepwise-persisted", flag)?;
                Ok(response)
            }
            Output::Json(Some(Err(error))) => Err(error),
            Output::Json(None) | Output::Sse { .. } | Output::Live(_) => {
                Err(AppError::internal(&"a turn ended without an answer"))
            }
        }
    }
}
