//! The help-desk session's Durable Object (class `HelpDesk`, one per session): it owns the
//! transcript and the clarification context, so a reload, a second tab or a restart mid-loop
//! resumes at the same question, and it serializes turns (one lease at a time). No rule of its
//! own: load → `core::help::handle` → save or erase. Its alarm announces an escalation to
//! operators (listing and event, retried every 30 s until both succeed, then marked with the
//! core's `Announced`) and erases the session past its retention (`CONVERSATION_RETENTION_DAYS`).
//! It also runs the session's turns (`POST /turn`, `super::live`), so a turn outlives the
//! request that began it, and answers those who join (`GET /join`) or stop (`POST /stop`) it.
// `#[durable_object]` generates wasm-bindgen glue without docs; everything written here has them.
#![allow(missing_docs)]

use std::rc::Rc;

use serde_json::json;
use stepwise_core::help::session::Handled;
use stepwise_core::help::{Caller, HelpCommand, HelpError, HelpSession, SessionStatus, handle};
use worker::wasm_bindgen::{JsCast, JsValue};
use worker::{
    DurableObject, Env, Method, Request, Response, Result, State, Storage, WebSocket,
    WebSocketIncomingMessage, WebSocketPair, console_warn, durable_object,
};

use super::client::{Envelope, ID_HEADER, OWNER_HEADER, TurnOrder};
use super::lane::{self, Lane};
use super::live::{Ended, HelpRun, stopped_error};
use super::{escalations, index};
use crate::conversations::client::retention_ms;
use crate::platform::deadline::{Alarm, now_ms};
use crate::platform::error::{AppError, AppResult};
use crate::platform::kv::Kv;
use crate::platform::owner::WS_PROTOCOL;
use crate::platform::upgrade;
use crate::platform::url_parts::{query_param, seen_event};

/// Storage key of the record.
const RECORD: &str = "session";
/// Wait before announcing an escalation again after a failure.
const ANNOUNCE_RETRY_MS: u64 = 30_000;
/// Tabs that may watch one session at once.
const MAX_WATCHERS: usize = 16;

/// The Durable Object class `HelpDesk` (wrangler.toml), one instance per session id.
#[durable_object]
pub struct HelpDesk {
    state: State,
    env: Env,
    /// The alarm this instance set, until it fires.
    armed: Alarm,
    /// The session's running (or last) turn and the messages waiting behind it.
    lane: Rc<Lane>,
}

impl DurableObject for HelpDesk {
    fn new(state: State, env: Env) -> Self {
        let lane = Rc::new(Lane::new(JsValue::from(state.as_raw()).unchecked_into()));
        HelpDesk {
            state,
            env,
            armed: Alarm::default(),
            lane,
        }
    }

    async fn fetch(&self, req: Request) -> Result<Response> {
        let answered = match (req.method(), req.path().as_str()) {
            // Started ahead of its first turn (`crate::platform::warm`): nothing is read or stored.
            (Method::Post, "/warm") => Ok(Response::empty()?.with_status(204)),
            (Method::Post, "/turn") => self.begin_turn(req).await,
            (Method::Get, "/join") => self.join(&req).await,
            (Method::Post, "/stop") => self.stop(&req).await,
            (Method::Get, "/ws") => self.watch(&req).await,
            _ => self.answer(req).await,
        };
        match answered {
            Ok(response) => Ok(response),
            Err(error) => error.to_response(),
        }
    }

    async fn alarm(&self) -> Result<Response> {
        // The alarm that fired is gone.
        self.armed.forget();
        let storage = self.state.storage();
        let Some(mut record) = load(&storage).await? else {
            return Response::ok("");
        };
        let now = now_ms();
        let expires = record.updated_at.saturating_add(retention_ms(&self.env));
        if now >= expires {
            storage.delete_all().await?;
            if let Ok(kv) = Kv::new(&self.env) {
                let _ = escalations::unlist(&kv, &record).await;
                let _ = index::unlist(&kv, &record).await;
            }
            return Response::ok("");
        }
        if unannounced(&record) {
            if let Err(error) = escalations::announce(&self.env, &record.view()).await {
                console_warn!(
                    "help: escalation of {} not announced yet: {error:?}",
                    record.id
                );
                let retry = now.saturating_add(ANNOUNCE_RETRY_MS);
                self.armed.at(&storage, retry).await?;
                return Response::ok("");
            }
            // Read again: other commands may have changed the session while it was announced.
            let Some(fresh) = load(&storage).await? else {
                return Response::ok("");
            };
            record = fresh;
            let announced = handle(
                Some(&record),
                &record.id,
                &Caller::Operator,
                &HelpCommand::Announced,
                now,
            );
            if let Ok(Handled {
                record: Some(next), ..
            }) = announced
            {
                storage.put(RECORD, serde_json::to_string(&next)?).await?;
                record = next;
            }
        }
        let expires = record.updated_at.saturating_add(retention_ms(&self.env));
        self.armed.at(&storage, expires).await?;
        Response::ok("")
    }

    async fn websocket_message(
        &self,
        ws: WebSocket,
        message: WebSocketIncomingMessage,
    ) -> Result<()> {
        // `{"type": "resume"}` (a tab that connected): the running turn, if one runs, then
        // `help:caught_up`, then the questions waiting behind it.
        if upgrade::resume_asked(&ws, message).is_some() {
            if let Some(started) = self.lane.run().and_then(|run| run.started()) {
                ws.send_with_str(started.to_string())?;
            }
            ws.send_with_str(json!({ "type": "help:caught_up" }).to_string())?;
            ws.send_with_str(self.lane.line().to_string())?;
        }
        Ok(())
    }

    async fn websocket_close(
        &self,
        ws: WebSocket,
        code: usize,
        _reason: String,
        _clean: bool,
    ) -> Result<()> {
        upgrade::close_as_asked(&ws, code);
        Ok(())
    }

    async fn websocket_error(&self, ws: WebSocket, _error: worker::Error) -> Result<()> {
        upgrade::close_on_error(&ws);
        Ok(())
    }
}

impl HelpDesk {
    /// `GET /ws` of the owner: a tab watches the session (a hibernatable WebSocket). It is told
    /// when a turn begins (`help:turn_started`, with the question and the event id to join it
    /// after) and when what the session shows changed (`help:changed`: an answer, a handoff, a
    /// close); 404 for a session that is not the owner's, 409 past [`MAX_WATCHERS`] tabs.
    async fn watch(&self, req: &Request) -> AppResult<Response> {
        self.owning(req).await?;
        if self.state.get_websockets().len() >= MAX_WATCHERS {
            return Err(AppError::conflict(
                "too_many_watchers",
                "this session has as many watchers as it may; close a tab",
            ));
        }
        let pair = WebSocketPair::new()?;
        self.state.accept_web_socket(&pair.server);
        let response = Response::from_websocket(pair.client)?;
        response
            .headers()
            .set("sec-websocket-protocol", WS_PROTOCOL)?;
        Ok(response)
    }

    /// `POST /turn` a [`TurnOrder`]: runs the turn in the background (it goes on when the
    /// request goes). Once the session grants it, a streamed order is answered with the turn's
    /// events; a JSON order waits for its answer. A refusal (another owner's session, a turn
    /// already running, a closed session) is answered as the error, with nothing changed.
    async fn begin_turn(&self, mut req: Request) -> AppResult<Response> {
        let id = session_id(&req)?;
        let order: TurnOrder = serde_json::from_str(&req.text().await?)?;
        // Only the session's owner reaches its lane (anyone else is refused as for a missing
        // session, whatever runs); a new session's first turn has no one else's to wait for.
        if !order.create {
            let record = load(&self.state.storage()).await?;
            let caller = Caller::Owner(order.owner.id.clone());
            handle(record.as_ref(), &id, &caller, &HelpCommand::Read, now_ms())?;
        }
        // While the session's turn runs, the owner's streamed message waits behind it, and any
        // other is refused. (No wait between this check and the lane's hold below.)
        if let Some(running) = self.lane.busy() {
            if !running.is_of(&order.owner.id) {
                return Err(HelpError::NotFound.into());
            }
            if order.streamed && !order.create && lane::queues(&self.env) {
                return self.lane.enqueue(&id, order);
            }
            return Err(HelpError::TurnInProgress.into());
        }
        let (run, awaited) = HelpRun::new(&order.owner.id, &order.message);
        let run = Rc::new(run);
        self.lane.hold(&run);
        let streamed = order.streamed;
        let work = self
            .lane
            .clone()
            .work(self.env.clone(), id.clone(), order, run.clone());
        self.state.wait_until(work);
        match awaited.begun.await {
            Ok(Ok(())) => {}
            Ok(Err(refused)) => return Err(refused),
            Err(_) => return Err(AppError::internal(&"the help turn ended unseen")),
        }
        self.lane.granted(&run);
        if streamed {
            let mut response = run
                .subscribe(0)?
                .ok_or_else(|| AppError::internal(&"a help turn ended before it was read"))?;
            response.headers_mut().set(ID_HEADER, &id)?;
            return Ok(response);
        }
        match awaited.ended.await {
            Ok(Ended::Answer(answer)) => Ok(Response::from_json(&answer)?),
            Ok(Ended::Failed(error)) => Err(error),
            Ok(Ended::Stopped) => Err(stopped_error()),
            Err(_) => Err(AppError::internal(&"the help turn ended unseen")),
        }
    }

    /// `GET /join?after=n` of the owner in `x-stepwise-owner`: the events after `n` of the turn
    /// `n` names (the running one, or one of the few before it), then the live ones; for an `n`
    /// of a turn not kept (or none), the running turn's, whole; 204 when there is nothing to
    /// join; 404 for a session that is not the owner's.
    async fn join(&self, req: &Request) -> AppResult<Response> {
        let owner = self.owning(req).await?;
        let after = seen_event(req)?;
        // A turn named by `after` (running, or one of the few before), else the running one.
        let joined = match self.lane.run_named(after).or_else(|| self.lane.run()) {
            Some(run) if run.is_of(&owner) => run.subscribe(after)?,
            _ => None,
        };
        match joined {
            Some(response) => Ok(response),
            None => Ok(Response::empty()?.with_status(204)),
        }
    }

    /// `POST /stop[?waiting=<id>[&withdraw=1]]` of the owner: `{"stopped": true}` when a turn ran
    /// and was asked to stop, or the question that waits as `id` was taken out of the line (or
    /// its turn, once begun, was asked to stop; with `withdraw`, it is then left to run).
    async fn stop(&self, req: &Request) -> AppResult<Response> {
        let owner = self.owning(req).await?;
        let url = req.inner().url();
        let stopped = match query_param(&url, "waiting") {
            Some(waiting) if query_param(&url, "withdraw").is_some() => {
                self.lane.withdraw(&waiting)
            }
            // A question that waited: taken out of the line, or its turn stopped once begun.
            Some(waiting) => self.lane.stop_waiting(&waiting),
            None => self
                .lane
                .run()
                .is_some_and(|run| run.is_of(&owner) && run.stop()),
        };
        Ok(Response::from_json(&json!({ "stopped": stopped }))?)
    }

    /// The owner in `x-stepwise-owner`, once the session is found to be theirs (the core's
    /// `Read`: 404 for a missing session and for another owner's alike).
    async fn owning(&self, req: &Request) -> AppResult<String> {
        let id = session_id(req)?;
        let owner = req.headers().get(OWNER_HEADER)?.unwrap_or_default();
        let record = load(&self.state.storage()).await?;
        let caller = Caller::Owner(owner.clone());
        handle(record.as_ref(), &id, &caller, &HelpCommand::Read, now_ms())?;
        Ok(owner)
    }

    /// `POST /` an [`Envelope`] (a caller and a command) for the session in `x-stepwise-session`.
    async fn answer(&self, mut req: Request) -> AppResult<Response> {
        let id = session_id(&req)?;
        let envelope: Envelope = serde_json::from_str(&req.text().await?)?;
        let storage = self.state.storage();
        let record = load(&storage).await?;
        let handled: Handled = handle(
            record.as_ref(),
            &id,
            &envelope.caller,
            &envelope.command,
            now_ms(),
        )?;
        // Watching tabs read the session again when what it shows changed.
        let shown = |r: &HelpSession| (r.messages.len(), r.status, r.handoff_offered);
        let changed = handled.erase
            || handled
                .record
                .as_ref()
                .is_some_and(|next| record.as_ref().map(shown) != Some(shown(next)));
        if handled.erase {
            storage.delete_all().await?;
            self.armed.forget();
            // An erased session's last turn is not joinable any more.
            self.lane.forget();
            if let Some(gone) = &record
                && let Ok(kv) = Kv::new(&self.env)
            {
                let _ = escalations::unlist(&kv, gone).await;
                let _ = index::unlist(&kv, gone).await;
            }
        } else if let Some(next) = &handled.record {
            storage.put(RECORD, serde_json::to_string(next)?).await?;
            let retention_seconds = retention_ms(&self.env) / 1000;
            let listed = match Kv::new(&self.env) {
                Ok(kv) => index::relist(&kv, record.as_ref(), next, retention_seconds).await,
                Err(error) => Err(error),
            };
            if let Err(error) = listed {
                console_warn!("help: session {} not listed: {error:?}", next.id);
            }
            // An escalation is announced by the alarm, at once; otherwise the alarm is retention.
            let at = if unannounced(next) {
                now_ms()
            } else {
                next.updated_at.saturating_add(retention_ms(&self.env))
            };
            self.armed.at(&storage, at).await?;
        }
        if changed {
            self.lane.tell(&json!({ "type": "help:changed" }));
        }
        Ok(Response::from_json(&handled.reply)?)
    }
}

/// The session named in `x-stepwise-session`.
fn session_id(req: &Request) -> AppResult<String> {
    req.headers()
        .get(ID_HEADER)?
        .filter(|v| !v.is_empty())
        .ok_or_else(|| AppError::not_found("help session"))
}

/// Whether the session was escalated and operators were not told yet.
fn unannounced(record: &HelpSession) -> bool {
    record.escalation.as_ref().is_some_and(|e| !e.announced)
        && record.status == SessionStatus::Escalated
}

async fn load(storage: &Storage) -> Result<Option<HelpSession>> {
    match storage.get::<String>(RECORD).await? {
        Some(json) => Ok(Some(serde_json::from_str(&json)?)),
        None => Ok(None),
    }
}
