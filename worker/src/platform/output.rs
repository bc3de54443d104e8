//! Where a turn's events go, for the guided chat and the assistant alike: a live turn's log that
//! clients join and leave, each reading it in its dialect (`super::live`), one JSON answer
//! collected (`Accept: application/json`), or both (a deferred turn resumed by a JSON request,
//! which other tabs still stream).

use std::rc::Rc;

use serde_json::Value;
use stepwise_core::llm::ProviderError;
use stepwise_core::markers::Event;
use stepwise_core::protocol::{ContextRequired, StreamEvent, TurnAnswer};
use worker::Response;

use super::error::{AppError, AppResult};
use super::live::TurnLog;

/// The events of one turn.
pub enum Output {
    /// A live turn's log: every client of the turn reads it, the turn does not wait for any.
    Live(Rc<TurnLog>),
    /// A live turn's log whose request also waits for one JSON answer (a deferred turn resumed
    /// by a JSON request): every event goes to the log, and the answer is collected as `Json`'s.
    LiveJson(Rc<TurnLog>, Option<Result<JsonAnswer, AppError>>),
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
    /// A collector for one JSON answer.
    pub fn json() -> Self {
        Output::Json(None)
    }

    /// A status note.
    pub async fn status(&mut self, message: &str) {
        if self.streams() {
            let message = message.to_owned();
            self.emit(StreamEvent::Status { message }).await;
        }
    }

    /// A piece of the model's answer: its display text, with the model's own text for the
    /// clients that ask for it. False once the live turn's owner stopped it.
    pub async fn delta(&mut self, model_text: &str, shown: String) -> bool {
        match self {
            Output::Live(log) | Output::LiveJson(log, _) => {
                if !shown.is_empty() || !model_text.is_empty() {
                    let event = StreamEvent::TextDelta { text: shown };
                    log.push(event, Some(model_text.to_owned())).await;
                }
                !log.is_stopped()
            }
            Output::Json(_) => true,
        }
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
            Output::Json(slot) => {
                *slot = Some(Ok(JsonAnswer::Turn(Box::new(answer))));
                return;
            }
            Output::LiveJson(_, slot) => {
                *slot = Some(Ok(JsonAnswer::Turn(Box::new(answer.clone()))))
            }
            Output::Live(_) => {}
        }
        let payload = Box::new(answer);
        self.emit(StreamEvent::Complete { payload }).await;
    }

    /// The turn ends with a call held for the owner's approval: the `approval_required` event
    /// (a JSON answer carries the approval on the answer).
    pub async fn approval_required(&mut self, approval: &stepwise_core::approval::Approval) {
        if self.streams() {
            let approval = Box::new(approval.clone());
            self.emit(StreamEvent::ApprovalRequired { approval }).await;
        }
    }

    /// The turn was deferred: the `context_required` event (the JSON answer).
    pub async fn context_required(&mut self, waiting: ContextRequired) {
        match self {
            Output::Json(slot) => {
                *slot = Some(Ok(JsonAnswer::Waiting(Box::new(waiting))));
                return;
            }
            Output::LiveJson(_, slot) => {
                *slot = Some(Ok(JsonAnswer::Waiting(Box::new(waiting.clone()))));
            }
            Output::Live(_) => {}
        }
        let payload = Box::new(waiting);
        self.emit(StreamEvent::ContextRequired { payload }).await;
    }

    /// The collected answer, if the turn produced one (JSON mode).
    pub fn answer(&self) -> Option<&TurnAnswer> {
        match self {
            Output::Json(Some(Ok(JsonAnswer::Turn(answer))))
            | Output::LiveJson(_, Some(Ok(JsonAnswer::Turn(answer)))) => Some(answer),
            _ => None,
        }
    }

    /// The provider failure that ended the turn: the `error` event.
    pub async fn failed(&mut self, error: ProviderError) {
        self.error(error.into()).await;
    }

    /// The failure that ended the turn: the `error` event (the JSON answer's error).
    pub async fn error(&mut self, error: AppError) {
        let event = StreamEvent::Error {
            code: error.code().into(),
            message: error.message().into(),
        };
        match self {
            Output::Json(slot) => {
                *slot = Some(Err(error));
                return;
            }
            Output::LiveJson(_, slot) => *slot = Some(Err(error)),
            Output::Live(_) => {}
        }
        self.emit(event).await;
    }

    /// Sends an event; false once the live turn's owner stopped it.
    async fn emit(&mut self, event: StreamEvent) -> bool {
        match self {
            Output::Live(log) | Output::LiveJson(log, _) => {
                log.push(event, None).await;
                !log.is_stopped()
            }
            Output::Json(_) => true,
        }
    }

    /// The turn's log, when it is a live turn.
    pub fn live(&self) -> Option<&Rc<TurnLog>> {
        match self {
            Output::Live(log) | Output::LiveJson(log, _) => Some(log),
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

    /// Sends the `stopped` event that ends a stopped turn, with the partial answer kept (a
    /// request waiting for the JSON answer is told so: 409 `turn_stopped`).
    pub async fn stopped(&mut self, message: String) {
        if let Output::LiveJson(_, slot) = self {
            *slot = Some(Err(AppError::conflict(
                "turn_stopped",
                "the turn was stopped before it answered; what it wrote is kept, marked stopped",
            )));
        }
        self.emit(StreamEvent::Stopped { message }).await;
    }

    /// The JSON answer of a collected turn (header `x-stepwise-persisted`), or its error.
    pub fn into_json_response(self, persisted: bool) -> AppResult<Response> {
        let collected = match self {
            Output::Json(collected) | Output::LiveJson(_, collected) => collected,
            Output::Live(_) => None,
        };
        match collected {
            Some(Ok(JsonAnswer::Waiting(waiting))) => Ok(Response::from_json(&waiting)?),
            Some(Ok(JsonAnswer::Turn(answer))) => {
                let mut response = Response::from_json(&answer)?;
                let flag = if persisted { "true" } else { "false" };
                response.headers_mut().set("x-stepwise-persisted", flag)?;
                Ok(response)
            }
            Some(Err(error)) => Err(error),
            None => Err(AppError::internal(&"a turn ended without an answer")),
        }
    }

    /// Whether the turn's events go to a stream or a log (not only to one JSON answer).
    fn streams(&self) -> bool {
        !matches!(self, Output::Json(_))
    }
}
