//! Asking the person through the client mid-call, for every tool that does (`start.rs`,
//! `ask.rs`, `guided.rs`): a call answered as a resumable SSE stream ([`streamed`],
//! `resume.rs`), an `elicitation/create` request written to it and its answer waited for
//! ([`ask_person`]), the answer handed over by the session's object when the client POSTs it
//! ([`Waiting`]).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;

use futures::channel::oneshot;
use serde_json::{Value, json};
use stepwise_core::mcp::jsonrpc::{self, RequestId};
use worker::Response;

use super::resume::{CallStream, GONE_AT_MOST_MS, Streams};
use crate::platform::deadline::{now_ms, within};
use crate::platform::error::AppResult;
use crate::platform::ids;
use crate::platform::sse::stream_response;

/// How long the person has to answer a question.
const ANSWER_WITHIN_MS: u64 = 600_000;
/// How often the stream carries a comment while the question waits (so that proxies and the
/// client see it alive, and a client gone is noticed).
const KEEPALIVE_EVERY: Duration = Duration::from_secs(15);
/// An answer the client sent, or the cancellation of the call that asked.
pub(super) type Answer = Result<Value, Value>;

/// The session's questions waiting for the client's answer, by the id they were sent under,
/// each with the id of the call that asked it; and the streams of the calls that asked them.
#[derive(Default)]
pub struct Waiting {
    answers: RefCell<HashMap<String, (String, oneshot::Sender<Answer>)>>,
    /// The session's call streams, which a client resumes with `Last-Event-ID`.
    pub streams: Streams,
}

impl Waiting {
    /// Hands the client's answer to the question `id`; false when no question waits under it.
    pub fn answer(&self, id: &RequestId, outcome: Answer) -> bool {
        let key = id.to_json().to_string();
        match self.answers.borrow_mut().remove(&key) {
            Some((_, sender)) => sender.send(outcome).is_ok(),
            None => false,
        }
    }

    /// The client cancelled call `call` (`notifications/cancelled`): its question, if one
    /// waits, ends as dismissed, and nothing starts.
    pub fn cancel(&self, call: &Value) {
        let call = call.to_string();
        let mut answers = self.answers.borrow_mut();
        let asked: Vec<String> = answers
            .iter()
            .filter(|(_, (of, _))| *of == call)
            .map(|(key, _)| key.clone())
            .collect();
        for key in asked {
            if let Some((_, sender)) = answers.remove(&key) {
                let _ = sender.send(Err(json!({"code": 0, "message": "the call was cancelled"})));
            }
        }
    }

    fn ask(&self, id: &RequestId, call: &RequestId) -> oneshot::Receiver<Answer> {
        let (sender, receiver) = oneshot::channel();
        self.answers.borrow_mut().insert(
            id.to_json().to_string(),
            (call.to_json().to_string(), sender),
        );
        receiver
    }

    fn forget(&self, id: &RequestId) {
        self.answers.borrow_mut().remove(&id.to_json().to_string());
    }
}

/// An SSE answer to call `id`: `task` writes the call's questions and progress to the stream
/// it is given, and its outcome ends the stream as the call's response (a failure as the tool's
/// error). The stream's events can be resumed ([`Streams::resume`]); the call runs on when the
/// client goes away.
pub(super) fn streamed<T, F>(waiting: &Rc<Waiting>, id: RequestId, task: T) -> AppResult<Response>
where
    T: FnOnce(Rc<CallStream>) -> F + 'static,
    F: std::future::Future<Output = AppResult<Value>> + 'static,
{
    let (response, sink) = stream_response()?;
    let stream = waiting.streams.open(sink)?;
    let waiting = Rc::clone(waiting);
    worker::wasm_bindgen_futures::spawn_local(async move {
        let message = match task(Rc::clone(&stream)).await {
            Ok(result) => jsonrpc::result(&id, result),
            Err(error) => jsonrpc::result(&id, tool_error(error.message())),
        };
        stream.send(&message);
        waiting.streams.end(&stream);
    });
    Ok(response)
}

/// Asks the person through the client (`elicitation/create` with `params`, on the call's
/// stream) and waits for the answer, a comment on the stream every [`KEEPALIVE_EVERY`]: the
/// client's result, or `Err` when it answered with an error, the call was cancelled, no client
/// read the stream for [`GONE_AT_MOST_MS`] or no answer came within [`ANSWER_WITHIN_MS`].
pub(super) async fn ask_person(
    waiting: &Waiting,
    stream: &CallStream,
    call: &RequestId,
    params: Value,
) -> AppResult<Answer> {
    let question = RequestId::Text(format!("elicit-{}", ids::random_id()?));
    let mut answer = waiting.ask(&question, call);
    let ask = json!({"jsonrpc": "2.0", "id": question.to_json(), "method": "elicitation/create", "params": params});
    stream.send(&ask);
    let until = now_ms() + ANSWER_WITHIN_MS;
    let gone = || Err(json!({"code": 0, "message": "no answer"}));
    loop {
        match within(KEEPALIVE_EVERY, &mut answer).await {
            Some(Ok(outcome)) => return Ok(outcome),
            // The session went away.
            Some(Err(_)) => return Ok(gone()),
            None => {
                stream.comment("waiting for your answer");
                if stream.gone_for_ms() > GONE_AT_MOST_MS || now_ms() > until {
                    waiting.forget(&question);
                    return Ok(gone());
                }
            }
        }
    }
}

/// A tool's error result, which the model reads.
pub(super) fn tool_error(why: &str) -> Value {
    json!({"content": [{"type": "text", "text": why}], "isError": true})
}
