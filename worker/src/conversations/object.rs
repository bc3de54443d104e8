//! The conversation's Durable Object: one per conversation, owning its record, so two tabs on
//! one conversation can no longer lose turns and a turn right after another never reads a stale
//! copy (the object is read-after-write consistent, unlike KV). No rule of its own: it reads
//! the command whole, loads the record, hands both to `core::conversation::handle`, saves or
//! erases, tells the watching browsers the events the core returned, and arms its alarm.
//!
//! Browsers watch over hibernatable WebSockets (`GET /ws`, the owner only): the object sleeps
//! between events and wakes for each. The alarm is the earliest of the waiting context
//! request's reminder, its SLA (the fallback turn is queued on `LLM_CALL`), and the end of the
//! retention, which erases the conversation.
// `#[durable_object]` generates wasm-bindgen glue without docs; everything written here has them.
#![allow(missing_docs)]

use std::rc::Rc;

use stepwise_core::conversation::{
    self, Command, Conversation as Record, ConversationEvent, ConversationKind, Handled, Reply,
};
use worker::{
    DurableObject, Env, Request, Response, Result, State, Storage, WebSocket,
    WebSocketIncomingMessage, WebSocketPair, durable_object,
};

use super::client::{ID_HEADER, OWNER_HEADER, retention_ms};
use super::index;
use super::rows::Rows;
use crate::assistant::host::{Host, KIND_HEADER, Ordered, TurnOrder};
use crate::assistant::log_header::interrupted_entries;
use crate::chat::conversation::{TOKEN_HEADER, hash_token, require_token};
use crate::chat::hosted;
use crate::platform::deadline::{Alarm, now_ms};
use crate::platform::error::{AppError, AppResult};
use crate::platform::kv::{Kv, relist_due};
use crate::platform::negotiate::stream_wire;
use crate::platform::owner::WS_PROTOCOL;
use crate::platform::queues;
use crate::platform::upgrade;
use crate::platform::url_parts::{query_param, seen_event};
use crate::platform::{ids, live};

/// Most browsers watching one conversation.
const MAX_WATCHERS: usize = 16;
/// The message kind of a fallback turn on the `LLM_CALL` queue.
pub const CONTEXT_FALLBACK: &str = "context_fallback";

/// The Durable Object class `Conversation` (wrangler.toml), one instance per conversation id.
#[durable_object]
pub struct Conversation {
    state: State,
    env: Env,
    /// The assistant and guided turns this instance runs.
    host: Host,
    /// The record, kept in memory once read; a message or request a row of its own.
    rows: Rows,
    /// When this instance last set the alarm for (ms since the epoch), until it fires; `None`
    /// when unknown (a fresh instance, a fired alarm, an erased record).
    armed: Alarm,
}

impl DurableObject for Conversation {
    fn new(state: State, env: Env) -> Self {
        Conversation {
            state,
            env,
            host: Host::default(),
            rows: Rows::default(),
            armed: Alarm::default(),
        }
    }

    async fn fetch(&self, req: Request) -> Result<Response> {
        let answered = match req.path().as_str() {
            // Started ahead of its first turn (`crate::platform::warm`): nothing is read or stored.
            "/warm" => Ok(Response::empty()?.with_status(204)),
            "/ws" => self.watch(&req).await,
            "/broadcast" => self.relay(req).await,
            "/turn" => self.turn(req).await,
            "/join" => self.join(&req).await,
            "/stop" => self.stop(&req).await,
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
        if let Err(error) = self.wake().await {
            worker::console_error!("conversation alarm: {error}; tried again in 30 s");
            self.armed
                .at(&self.state.storage(), now_ms() + 30_000)
                .await?;
        }
        Response::ok("")
    }

    async fn websocket_message(
        &self,
        ws: WebSocket,
        message: WebSocketIncomingMessage,
    ) -> Result<()> {
        // `{"type": "resume", "after": <seq>}`: the running turn's events the tab missed.
        if let Some(asked) = upgrade::resume_asked(&ws, message) {
            let after = asked["after"].as_u64().unwrap_or(0);
            if let Ok(Some(record)) = self.load_current(&self.state.storage()).await {
                self.host.replay(ws.as_ref(), &record.id, after);
            }
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
        self.host.sockets_changed();
        Ok(())
    }

    async fn websocket_error(&self, ws: WebSocket, _error: worker::Error) -> Result<()> {
        upgrade::close_on_error(&ws);
        self.host.sockets_changed();
        Ok(())
    }
}

impl Conversation {
    /// `POST /` a command of the owner in `x-stepwise-owner` (see [`super::client`]). The body
    /// is read before the record is loaded, so the record handed over is the latest.
    async fn answer(&self, mut req: Request) -> AppResult<Response> {
        let owner = header(&req, OWNER_HEADER)?;
        let id = header(&req, ID_HEADER)?;
        // serde_json, from the text: `Request::json` would link a second deserializer.
        let command: Command = serde_json::from_str(&req.text().await?)?;
        let storage = self.state.storage();
        let record = self.load_current(&storage).await?;
        let handled = conversation::handle(record.as_deref(), &id, &owner, &command, now_ms())?;
        let settled = self.settle(&storage, record, handled).await?;
        Ok(Response::from_json(&settled.reply)?)
    }

    /// `POST /turn`: runs a turn the edge ordered: an assistant one ([`Host::run`]) or a guided
    /// one (`crate::chat::hosted`).
    async fn turn(&self, mut req: Request) -> AppResult<Response> {
        let owner = header(&req, OWNER_HEADER)?;
        let order: TurnOrder = serde_json::from_str(&req.text().await?)?;
        // A turn lost with an earlier instance is settled before a new one begins. A new
        // conversation's first turn (its id just made by the edge, at random) reads nothing:
        // its model call waits on no storage (a new object's first read makes its database).
        let record = match order.start {
            true => None,
            false => self.load_current(&self.state.storage()).await?,
        };
        // The owner is checked here too, not only when the turn begins: a message queued behind
        // a running turn waits before it begins, and another owner must get 404 at once.
        let kind = match order.what {
            Ordered::Guided(_) => ConversationKind::Guided,
            _ => ConversationKind::Assistant,
        };
        // A new guided conversation's first turn runs here and nothing is stored yet: its owner,
        // with its token, may send the next message (which waits behind it).
        let behind_first = match (&record, &order.what) {
            (None, Ordered::Guided(guided)) if !order.start && ids::is_id(&guided.token) => {
                self.host.admits(&owner, &hash_token(&guided.token).await?)
            }
            _ => false,
        };
        let mine = match &record {
            Some(r) => !order.start && r.owner == owner && r.kind == kind,
            None => order.start || behind_first,
        };
        if !mine || order.owner.id != owner {
            return Err(AppError::conversation_not_found());
        }
        match kind {
            ConversationKind::Guided => {
                hosted::run(&self.host, &self.state, &self.env, order, behind_first).await
            }
            ConversationKind::Assistant => self.host.run(&self.state, &self.env, order).await,
        }
    }

    /// `GET /join?after=<seq>`: the owner (with a guided conversation's token) joins the running (or last) turn's events after
    /// `after`, in the dialect the request's headers ask for; 204 when there is none to join.
    async fn join(&self, req: &Request) -> AppResult<Response> {
        self.owned(req).await?;
        let after = seen_event(req)?;
        match self.host.join(after, stream_wire(req)?)? {
            Some(response) => Ok(response),
            None => Ok(Response::empty()?.with_status(204)),
        }
    }

    /// `POST /stop`: the owner (with a guided conversation's token) stops the running turn: `{"stopped": true}`, or `false` when no
    /// streamed turn runs; `POST /stop?waiting=…` stops the message that waits as that id (with
    /// `&withdraw=1`, only while it still waits).
    async fn stop(&self, req: &Request) -> AppResult<Response> {
        self.owned(req).await?;
        let url = req.url()?;
        let stopped = match query_param(url.as_ref(), "waiting") {
            Some(waiting) => {
                let stopped = match query_param(url.as_ref(), "withdraw").is_some() {
                    true => self.host.withdraw_waiting(&waiting),
                    false => self.host.stop_waiting(&waiting),
                };
                if stopped && let Ok(id) = header(req, ID_HEADER) {
                    self.host.announce_waiting(&self.state, &id);
                }
                stopped
            }
            None => self.host.stop(),
        };
        Ok(Response::from_json(
            &serde_json::json!({ "stopped": stopped }),
        )?)
    }

    /// Whether the request's owner (with a guided conversation's token: 403 otherwise, as for
    /// its reads) may join or stop this conversation's turn, of the kind its route names; 404
    /// for anyone else and for the other kind. A guided first turn, whose conversation is not
    /// stored yet, admits its owner with its token.
    async fn owned(&self, req: &Request) -> AppResult<()> {
        let owner = header(req, OWNER_HEADER)?;
        let kind = match req.headers().get(KIND_HEADER)?.as_deref() {
            Some("guided") => ConversationKind::Guided,
            _ => ConversationKind::Assistant,
        };
        let record = self.load_current(&self.state.storage()).await?;
        let token = req.headers().get(TOKEN_HEADER)?;
        let Some(record) = record else {
            let admitted = match token.filter(|t| ids::is_id(t)) {
                Some(token) if kind == ConversationKind::Guided => {
                    self.host.admits(&owner, &hash_token(&token).await?)
                }
                _ => false,
            };
            return match admitted {
                true => Ok(()),
                false => Err(AppError::conversation_not_found()),
            };
        };
        if record.owner != owner || record.kind != kind {
            return Err(AppError::conversation_not_found());
        }
        if record.kind == ConversationKind::Guided {
            let read = Command::Read {
                token_hash: Some(hash_token(&require_token(token)?).await?),
            };
            conversation::handle(Some(&record), &record.id, &owner, &read, now_ms())?;
        }
        Ok(())
    }

    /// The record as stored, after settling a turn it says runs while this instance runs none:
    /// that turn died with an earlier instance; what it generated is kept, marked
    /// `interrupted`, and the conversation takes new messages.
    async fn load_current(&self, storage: &Storage) -> AppResult<Option<Rc<Record>>> {
        let record = self.rows.load(storage).await?;
        let Some(before) = record else {
            return Ok(None);
        };
        let Some(lost) = before.running.filter(|_| self.host.idle()) else {
            return Ok(Some(before));
        };
        let (entries, guided) = interrupted_entries(storage, lost.lease).await?;
        let command = Command::Interrupt {
            lease: lost.lease,
            entries,
            guided,
        };
        let handled =
            conversation::handle(Some(&before), &before.id, &before.owner, &command, now_ms())?;
        worker::console_log!("conversation {}: turn {} interrupted", before.id, lost.turn);
        let saved = handled.record.is_some();
        let settled = self.settle(storage, Some(before), handled).await?;
        live::clear_stored(storage).await?;
        if let (true, Some(after), Ok(kv)) = (saved, &settled.record, Kv::new(&self.env)) {
            let ttl_seconds = retention_ms(&self.env) / 1000;
            if let Err(error) = index::write(&kv, after, ttl_seconds).await {
                worker::console_warn!("conversation {}: list entry not written: {error}", after.id);
            }
        }
        Ok(settled.record)
    }

    /// Saves or erases what a command left, tells the watchers, and arms the alarm: the reply,
    /// and the record now.
    async fn settle(
        &self,
        storage: &Storage,
        before: Option<Rc<Record>>,
        handled: Handled,
    ) -> AppResult<Settled> {
        let Handled {
            record,
            erase,
            reply,
            events,
        } = handled;
        let now = if erase {
            // A streamed turn still running stops at its next event (its commit then finds
            // nothing to commit to).
            self.host.stop();
            self.host.forget();
            self.rows.erase(storage).await?;
            self.armed.forget();
            for ws in self.state.get_websockets() {
                let _ = ws.close(Some(1000), Some("conversation deleted"));
            }
            if let Some(gone) = before
                && let Ok(kv) = Kv::new(&self.env)
            {
                let _ = index::delete(&kv, &gone).await;
            }
            None
        } else if let Some(next) = record {
            let before_change = before.as_ref().map(|r| r.updated_at);
            let next = self.rows.save(storage, next).await?;
            self.armed
                .at(storage, next.next_wake(retention_ms(&self.env)))
                .await?;
            // Guided conversations are listed only for their owner's export and erase: when
            // created, and again on the first change of a day (the entry outlives that day).
            if next.kind == ConversationKind::Guided && relist_due(before_change, next.updated_at) {
                let ttl_seconds = retention_ms(&self.env) / 1000;
                let listed = match Kv::new(&self.env) {
                    Ok(kv) => index::write(&kv, &next, ttl_seconds).await,
                    Err(error) => Err(error),
                };
                if let Err(error) = listed {
                    worker::console_warn!("conversation {}: not listed: {error}", next.id);
                }
            }
            Some(next)
        } else {
            before
        };
        self.broadcast(&events);
        Ok(Settled { reply, record: now })
    }

    /// `GET /ws`: a browser of the owner watches the conversation of the route's kind (a guided
    /// one with its token): 404 for anyone else, and for a guided conversation not stored yet.
    async fn watch(&self, req: &Request) -> AppResult<Response> {
        self.owned(req).await?;
        if self.load_current(&self.state.storage()).await?.is_none() {
            return Err(AppError::conversation_not_found());
        }
        if self.state.get_websockets().len() >= MAX_WATCHERS {
            return Err(AppError::conflict(
                "too_many_watchers",
                "this conversation has as many watchers as it may; close a tab",
            ));
        }
        let pair = WebSocketPair::new()?;
        self.state.accept_web_socket(&pair.server);
        self.host.sockets_changed();
        let response = Response::from_websocket(pair.client)?;
        response
            .headers()
            .set("sec-websocket-protocol", WS_PROTOCOL)?;
        Ok(response)
    }

    /// `POST /broadcast`: an event the edge produced (an answer's deltas), sent as is.
    async fn relay(&self, mut req: Request) -> AppResult<Response> {
        let text = req.text().await?;
        for ws in self.state.get_websockets() {
            let _ = ws.send_with_str(&text);
        }
        Ok(Response::empty()?.with_status(204))
    }

    fn broadcast(&self, events: &[ConversationEvent]) {
        if events.is_empty() {
            return;
        }
        let sockets = self.state.get_websockets();
        for event in events {
            let text = event.to_json();
            for ws in &sockets {
                let _ = ws.send_with_str(&text);
            }
        }
    }

    /// The alarm: the waiting request's reminder or fallback, pending approvals' expiry, then
    /// the retention.
    async fn wake(&self) -> AppResult<()> {
        let storage = self.state.storage();
        let Some(record) = self.load_current(&storage).await? else {
            return Ok(());
        };
        let handled = conversation::handle(
            Some(&record),
            &record.id,
            &record.owner,
            &Command::Tick,
            now_ms(),
        )?;
        if let Reply::Ticked {
            fallback: Some(request_id),
        } = &handled.reply
        {
            let message = serde_json::json!({"kind": CONTEXT_FALLBACK, "conversation_id": record.id,
                "owner": record.owner, "request_id": request_id});
            queues::send_all(&self.env, "LLM_CALL", &[message.to_string()], 1).await?;
        }
        let current = self.settle(&storage, Some(record), handled).await?.record;
        if let Some(record) = current {
            let retention = retention_ms(&self.env);
            if record.waiting.is_none() && now_ms() >= record.updated_at.saturating_add(retention) {
                self.rows.erase(&storage).await?;
                if let Ok(kv) = Kv::new(&self.env) {
                    let _ = index::delete(&kv, &record).await;
                }
            } else {
                self.armed.at(&storage, record.next_wake(retention)).await?;
            }
        }
        Ok(())
    }
}

fn header(req: &Request, name: &str) -> AppResult<String> {
    req.headers()
        .get(name)?
        .filter(|v| !v.is_empty())
        .ok_or_else(AppError::conversation_not_found)
}

/// What a command left: its reply, and the record now (`None` when there is none).
struct Settled {
    reply: Reply,
    record: Option<Rc<Record>>,
}
