//! The conversation's Durable Object: one per conversation, owning its record, so two tabs on
//! one conversation can no longer lose turns and a turn right after another never reads a stale
//! copy (the object is read-after-write consistent, unlike KV). No rule of its own: it reads
//! the command whole, loads the record, hands both to `core::conversation::handle`, saves or
//! erases, and arms the alarm that erases the conversation past its retention.
// `#[durable_object]` generates wasm-bindgen glue without docs; everything written here has them.
#![allow(missing_docs)]

use stepwise_core::conversation::{self, Command, Conversation as Record, ConversationKind};
use worker::{DurableObject, Env, Request, Response, Result, State, Storage, durable_object};

use super::client::{ID_HEADER, OWNER_HEADER};
use super::index;
use crate::platform::deadline::{alarm_delay, now_ms};
use crate::platform::error::{AppError, AppResult};
use crate::platform::kv::Kv;
use crate::platform::settings::number;

/// Storage key of the record.
const RECORD: &str = "conversation";
/// Days a conversation is kept after its last turn (`CONVERSATION_RETENTION_DAYS`).
pub const DEFAULT_RETENTION_DAYS: u64 = 90;
const DAY_MS: u64 = 24 * 3600 * 1000;

/// The Durable Object class `Conversation` (wrangler.toml), one instance per conversation id.
#[durable_object]
pub struct Conversation {
    state: State,
    env: Env,
}

impl DurableObject for Conversation {
    fn new(state: State, env: Env) -> Self {
        Conversation { state, env }
    }

    async fn fetch(&self, req: Request) -> Result<Response> {
        match self.answer(req).await {
            Ok(response) => Ok(response),
            Err(error) => error.to_response(),
        }
    }

    async fn alarm(&self) -> Result<Response> {
        let storage = self.state.storage();
        if let Some(record) = load(&storage).await?
            && now_ms() >= record.updated_at.saturating_add(retention_ms(&self.env))
        {
            storage.delete_all().await?;
            if let Ok(kv) = Kv::new(&self.env) {
                let _ = index::delete(&kv, &record).await;
            }
        }
        Response::ok("")
    }
}

impl Conversation {
    /// `POST /` a command of the owner in `x-stepwise-owner` (see [`super::client`]). The body
    /// is read before the record is loaded, so the record handed over is the latest.
    async fn answer(&self, mut req: Request) -> AppResult<Response> {
        let header = |name: &str| -> AppResult<String> {
            req.headers()
                .get(name)?
                .filter(|v| !v.is_empty())
                .ok_or_else(AppError::conversation_not_found)
        };
        let owner = header(OWNER_HEADER)?;
        let id = header(ID_HEADER)?;
        // serde_json, from the text: `Request::json` would link a second deserializer.
        let command: Command = serde_json::from_str(&req.text().await?)?;
        let storage = self.state.storage();
        let record = load(&storage).await?;
        let handled = conversation::handle(record.as_ref(), &id, &owner, &command, now_ms())?;
        if handled.erase {
            storage.delete_all().await?;
            if let Some(gone) = record.filter(|r| r.kind == ConversationKind::Assistant)
                && let Ok(kv) = Kv::new(&self.env)
            {
                let _ = index::delete(&kv, &gone).await;
            }
        } else if let Some(next) = &handled.record {
            storage.put(RECORD, serde_json::to_string(next)?).await?;
            let expires = next.updated_at.saturating_add(retention_ms(&self.env));
            storage.set_alarm(alarm_delay(expires)).await?;
        }
        Ok(Response::from_json(&handled.reply)?)
    }
}

/// How long a conversation is kept after its last turn.
pub fn retention_ms(env: &Env) -> u64 {
    number::<u64>(env, "CONVERSATION_RETENTION_DAYS")
        .unwrap_or(DEFAULT_RETENTION_DAYS)
        .saturating_mul(DAY_MS)
}

async fn load(storage: &Storage) -> Result<Option<Record>> {
    match storage.get::<String>(RECORD).await? {
        Some(json) => Ok(Some(serde_json::from_str(&json)?)),
        None => Ok(None),
    }
}
