//! `help_ask` over MCP: the help desk's turn (`help::turn::turn`, the same as `POST /api/help`),
//! its clarifying questions asked one at a time. A session's client that answers elicitation is
//! asked each question as a one-field form on the call's stream, and the call goes on until the
//! desk answers; declining leaves the session waiting at that question (nothing half-applied:
//! the desk took no turn). Any other client gets the question in the result, with the session id
//! to answer it in the next `help_ask`.

use std::rc::Rc;

use serde_json::{Value, json};
use stepwise_core::mcp::elicitation::{question_request, read_answer};
use stepwise_core::mcp::jsonrpc::RequestId;
use worker::{Env, Response};

use super::person::{Waiting, ask_person, streamed};
use crate::help::turn::turn;
use crate::platform::error::{AppError, AppResult};
use crate::platform::limits;
use crate::platform::owner::Owner;

/// Most clarifying questions one call asks (the desk's loops are shorter).
const MAX_QUESTIONS: usize = 8;

/// One turn, as a tool's result: the answer, or the desk's question to answer next.
pub async fn once(
    env: &Env,
    owner: &Owner,
    question: &str,
    session_id: Option<String>,
) -> AppResult<Value> {
    Ok(
        match checked_turn(env, owner, session_id.clone(), question).await {
            Ok(answer) => result_of(&answer),
            Err(error) => failed(&error, session_id.as_deref()),
        },
    )
}

/// One turn, unless the kill switch is on (checked before each turn: a call's questions can
/// take minutes).
async fn checked_turn(
    env: &Env,
    owner: &Owner,
    session_id: Option<String>,
    message: &str,
) -> AppResult<Value> {
    if limits::calls_disabled(env) {
        return Err(AppError::model_calls_disabled());
    }
    turn(env, owner, session_id, message).await
}

/// A turn that failed, as the tool's error the model can read, naming the session it left
/// waiting (the desk's last question still waits there).
fn failed(error: &AppError, session_id: Option<&str>) -> Value {
    let mut text = format!(
        "The help desk could not answer: {} ({}).",
        error.message(),
        error.code()
    );
    if let Some(id) = session_id {
        text.push_str(&format!(
            " The session {id} waits at its last question; help_ask with it goes on."
        ));
    }
    json!({"content": [{"type": "text", "text": text}], "isError": true,
        "structuredContent": {"session_id": session_id, "error": {"code": error.code(), "message": error.message()}}})
}

/// Answers the `tools/call` request `id` of a client that answers elicitation and takes a
/// stream: an SSE response asking each clarifying question, ending with the desk's answer.
pub fn run_streamed(
    env: Env,
    owner: Owner,
    waiting: Rc<Waiting>,
    id: RequestId,
    question: String,
    session_id: Option<String>,
) -> AppResult<Response> {
    let call = id.clone();
    streamed(&Rc::clone(&waiting), id, move |sink| async move {
        let mut answer = match checked_turn(&env, &owner, session_id.clone(), &question).await {
            Ok(answer) => answer,
            Err(error) => return Ok(failed(&error, session_id.as_deref())),
        };
        for _ in 0..MAX_QUESTIONS {
            let asked = &answer["question"];
            if asked.is_null() {
                break;
            }
            let params = question_request(
                asked["text"].as_str().unwrap_or(""),
                asked["number"].as_u64().unwrap_or(1) as usize,
                asked["total"].as_u64().unwrap_or(1) as usize,
            );
            let Some(reply) = read_answer(&ask_person(&waiting, &sink, &call, params).await?)
            else {
                // Not answered: the session waits at this question for a later help_ask.
                let mut result = result_of(&answer);
                result["content"][0]["text"] = format!(
                    "Not answered: the help desk's question waits in session {}.",
                    answer["session_id"].as_str().unwrap_or("")
                )
                .into();
                return Ok(result);
            };
            let session = answer["session_id"].as_str().map(str::to_owned);
            answer = match checked_turn(&env, &owner, session.clone(), &reply).await {
                Ok(answer) => answer,
                Err(error) => return Ok(failed(&error, session.as_deref())),
            };
        }
        Ok(result_of(&answer))
    })
}

/// A help turn's answer as a tool's result.
fn result_of(answer: &Value) -> Value {
    let session_id = answer["session_id"].clone();
    let status = answer["status"].as_str().unwrap_or("open");
    let question = &answer["question"];
    let mut text = answer["reply"].as_str().unwrap_or("").to_owned();
    if !question.is_null() {
        text = format!(
            "The help desk asks: {}\nAnswer with help_ask, session_id {} and the answer as question.",
            question["text"].as_str().unwrap_or(""),
            session_id.as_str().unwrap_or("")
        );
    } else if let Some(title) = answer["doc"]["title"].as_str() {
        text.push_str(&format!("\n\nSource: {title}"));
    }
    if status == "escalated" {
        text.push_str("\n\nHanded to a person: the session is on the operators' list.");
    }
    json!({
        "content": [{"type": "text", "text": text}],
        "structuredContent": {
            "session_id": session_id,
            "status": status,
            "needs_answer": !question.is_null(),
            "question": question,
            "reply": answer["reply"],
            "doc": answer["doc"],
            "handed_to_person": status == "escalated",
            "handoff_offered": answer["handoff_offered"],
            "no_answer": answer["no_answer"],
        }
    })
}
