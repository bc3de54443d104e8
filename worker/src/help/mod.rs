//! The help desk (clarification-loop.md): `POST /api/help` turns (`turn.rs`), sessions read and
//! handed to a person, the knowledge base's articles (`GET /api/help/docs[/:id]`, public; admin
//! `PUT /api/help/docs/:id` and `POST /api/help/docs:import`), and the operators' escalations
//! (`escalations.rs`). The rules are the core's (`core::help`); the session lives on its Durable
//! Object (`object.rs`), the knowledge base in D1 (`kb.rs`, `search.rs`).

pub mod client;
pub mod escalations;
pub mod index;
pub mod kb;
pub mod lane;
pub mod live;
pub mod object;
pub mod search;
pub mod turn;

use serde_json::json;
use stepwise_core::help::{Caller, HelpCommand, HelpDoc, HelpError, SessionStatus, read_import};
use worker::{Env, Method, Request, Response};

use self::kb::{ImportReport, Kb};
use crate::platform::body::{read_json_text, read_limited, require_json};
use crate::platform::deadline::now_ms;
use crate::platform::error::{AppError, AppResult};
use crate::platform::kv::Kv;
use crate::platform::owner::Owner;
use crate::platform::spend;
use crate::platform::stop::stop_path;
use crate::platform::url_parts::seen_event;

/// `GET /api/help/sessions/:id`: the owner's session (transcript, clarification context,
/// status, counters), so a reload or a second tab resumes where the session stands.
pub async fn get_session(env: &Env, owner: &Owner, id: &str) -> AppResult<Response> {
    let reply = client::send(env, id, Caller::Owner(owner.id.clone()), HelpCommand::Read).await?;
    Ok(Response::from_json(&reply.session)?)
}

/// `POST /api/help/sessions/:id/handoff`: the owner asks for a person (the "Talk to a person"
/// button, offered with every answer): the same handoff as a typed request, its reply and footer
/// added to the transcript. Asking again changes nothing.
///
/// A handoff counts against the daily handoff caps (`spend::count_handoff`; 429
/// `quota_exceeded` past them, the session unchanged); asking again, or for a session already
/// with a person, counts nothing.
pub async fn handoff(req: &Request, env: &Env, owner: &Owner, id: &str) -> AppResult<Response> {
    require_json(req)?;
    let caller = Caller::Owner(owner.id.clone());
    let current = client::send(env, id, caller.clone(), HelpCommand::Read).await?;
    match current.session.status {
        SessionStatus::Escalated => return Ok(Response::from_json(&current.session)?),
        // A closed session is refused by the session itself, with nothing to count.
        SessionStatus::Resolved => {
            let reply = client::send(env, id, caller, HelpCommand::RequestHandoff).await?;
            return Ok(Response::from_json(&reply.session)?);
        }
        SessionStatus::Open => spend::count_handoff(env, owner).await?,
    }
    match client::send(env, id, caller, HelpCommand::RequestHandoff).await {
        Ok(reply) => {
            if !reply.escalated {
                spend::uncount_handoff(env, owner).await;
            }
            Ok(Response::from_json(&reply.session)?)
        }
        Err(error) => {
            spend::uncount_handoff(env, owner).await;
            Err(error)
        }
    }
}

/// `GET /api/help/sessions/:id/stream`: joins the session's running (or last) turn after the
/// event the client saw last (`Last-Event-ID`, or `?after=`): every later event once, in order,
/// then the live ones until the turn ends; 204 when the session has no turn to join. Another
/// owner's session: 404, as a missing one.
pub async fn join(req: &Request, env: &Env, owner: &Owner, id: &str) -> AppResult<Response> {
    let after = seen_event(req)?;
    client::ask(env, owner, id, &format!("join?after={after}"), Method::Get).await
}

/// `POST /api/help/sessions/:id/stop` (`{}`, or `{"waiting": "<id>"}` for a question that waits
/// behind another turn, named by its stream's `waiting`): stops the session's running turn: its
/// work is dropped (closing its model call) and nothing of it is kept; every client's stream
/// ends with `stopped`, and the request that began it gets 409 `turn_stopped`. A waiting
/// question is taken out of the line (its stream ends with `stopped`), or, once its turn has
/// begun, that turn is stopped. `{"stopped": true}`, or `false` when nothing was stopped (no turn
/// runs, its answer is already found, or no such question waits).
pub async fn stop(mut req: Request, env: &Env, owner: &Owner, id: &str) -> AppResult<Response> {
    require_json(&req)?;
    let path = stop_path(&read_limited(&mut req).await?)?;
    client::ask(env, owner, id, &path, Method::Post).await
}

/// `GET /api/help/sessions/:id/ws`: the owner's tab watches the session (a WebSocket; a browser
/// names the owner token as the subprotocol `bearer.<token>`). It is told when a turn begins,
/// `{"type": "help:turn_started", "turn", "after", "message"}` (join it with `GET …/stream`
/// after `after`; with `waiting_id` when its question waited), and when what the session shows
/// changed, `{"type": "help:changed"}` (read it again), and of the questions waiting behind the
/// running turn whenever they change, `{"type": "help:waiting", "messages": [{"id", "content"}]}`,
/// and when one of them could not begin, `{"type": "help:not_begun", "waiting_id", "content",
/// "code", "message"}`; sending `{"type": "resume"}` gets
/// the running turn's `help:turn_started`, if one runs, then `{"type": "help:caught_up"}` and
/// `help:waiting`. Another owner's session: 404; another site's page: 403;
/// a 17th tab: 409 `too_many_watchers`.
pub async fn watch(req: &Request, env: &Env, owner: &Owner, id: &str) -> AppResult<Response> {
    crate::platform::upgrade::admit(req, env)?;
    client::ask(env, owner, id, "ws", Method::Get).await
}

/// `DELETE /api/help/sessions/:id`: the owner deletes the session (and its operator listing).
pub async fn delete_session(env: &Env, owner: &Owner, id: &str) -> AppResult<Response> {
    client::send(
        env,
        id,
        Caller::Owner(owner.id.clone()),
        HelpCommand::Delete,
    )
    .await?;
    Ok(Response::empty()?.with_status(204))
}

/// `GET /api/help/docs`: every article's summary (no bodies).
pub async fn list_docs(env: &Env) -> AppResult<Response> {
    let docs = Kb::new(env)?.list().await?;
    Ok(Response::from_json(&json!({ "items": docs }))?)
}

/// `GET /api/help/docs/:id`: one article.
pub async fn get_doc(env: &Env, id: &str) -> AppResult<Response> {
    match Kb::new(env)?.doc(id).await? {
        Some(doc) => Ok(Response::from_json(&doc)?),
        None => Err(AppError::not_found("help article")),
    }
}

/// `PUT /api/help/docs/:id` (admin): creates or replaces one article, checked whole.
pub async fn put_doc(mut req: Request, env: &Env, id: &str) -> AppResult<Response> {
    let text = read_json_text(&mut req).await?;
    let doc = HelpDoc::read(id, &text, now_ms())?;
    let report = import(env, &[doc]).await?;
    Ok(Response::from_json(&report)?)
}

/// `POST /api/help/docs:import` (admin): `{"docs": [...]}`, every article checked before any is
/// stored; repeating an import changes nothing.
pub async fn import_docs(mut req: Request, env: &Env) -> AppResult<Response> {
    let text = read_json_text(&mut req).await?;
    let docs = read_import(&text, now_ms())?;
    let report = import(env, &docs).await?;
    Ok(Response::from_json(&report)?)
}

async fn import(env: &Env, docs: &[HelpDoc]) -> AppResult<ImportReport> {
    if docs.is_empty() {
        return Err(HelpError::InvalidDoc("nothing to import".into()).into());
    }
    let written = Kb::new(env)?.import(docs).await;
    // Any change retires cached answers, a partly written import too (its batches are
    // transactions of 25 articles each).
    if written
        .as_ref()
        .map_or(true, |r| !(r.created.is_empty() && r.updated.is_empty()))
    {
        let version = now_ms().to_string();
        Kv::new(env)?
            .put_text(turn::KB_VERSION_KEY, &version, None)
            .await?;
    }
    written
}
