//! A live turn's log as its conversation's object begins it, and what survives the object: the
//! header stored beside the log's batches (the user's message, or a guided turn's state before
//! its answer), which is all a conversation keeps of a turn whose object died, with the answer
//! as far as it was stored, marked `interrupted`.

use std::rc::Rc;

use serde::{Deserialize, Serialize};
use stepwise_core::conversation::{Entry, EntryStatus, GuidedState};
use worker::wasm_bindgen::{JsCast, JsValue};
use worker::{State, Storage};

use super::turn::partial_answer;
use crate::platform::error::AppResult;
use crate::platform::live::{self, TurnLog, Watchers};

/// Storage key of the running turn's header (its lease and the user's message).
const HEADER: &str = "turn";

/// The turn's header in storage: enough to keep the user's message of a turn that died.
#[derive(Serialize, Deserialize)]
struct Header {
    lease: u32,
    user: Option<Entry>,
    /// A guided turn's state to keep if it dies (`GuidedState::before_answer`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    guided: Option<GuidedState>,
}

/// A new turn's log: the header stored (the user's message, or a guided turn's state to keep
/// if it dies), the watchers told (with `shown`, the user's message of a guided turn, whose
/// header keeps its state instead, and `waiting`, the id the message waited under, if it did).
pub async fn begin_log(
    state: &State,
    id: &str,
    lease: u32,
    user: Option<Entry>,
    guided: Option<GuidedState>,
    (shown, waiting): (Option<Entry>, Option<String>),
) -> AppResult<Rc<TurnLog>> {
    let storage = state.storage();
    let header = Header {
        lease,
        user,
        guided,
    };
    // A header with nothing to keep (a guided first turn's: no conversation is stored until it
    // commits) is not written, so the model call waits on no storage write.
    let keeps = header.user.is_some() || header.guided.is_some();
    if keeps {
        storage.put(HEADER, serde_json::to_string(&header)?).await?;
    }
    // The state's JS handle, owned (the type does not implement `Clone`).
    let watchers = Watchers::new(JsValue::from(state.as_raw()).unchecked_into(), id);
    let log = TurnLog::new(
        lease,
        state.storage(),
        watchers,
        shown.or(header.user),
        waiting,
    );
    // The header, like the batches, only matters while the turn runs (one never written is not
    // erased: a first turn's log then touches no storage at all).
    if keeps {
        log.erase_when_done(HEADER);
    }
    Ok(Rc::new(log))
}

/// What a conversation keeps of its turn of `lease` whose object died: the user's message and
/// the answer as far as it was stored, marked `interrupted`, and a guided turn's state to add
/// it to (nothing when the turn left no header).
pub async fn interrupted_entries(
    storage: &Storage,
    lease: u32,
) -> AppResult<(Vec<Entry>, Option<GuidedState>)> {
    let header: Option<Header> = match storage.get::<String>(HEADER).await? {
        Some(json) => serde_json::from_str(&json).ok(),
        None => None,
    };
    let Some(header) = header.filter(|h| h.lease == lease) else {
        return Ok((Vec::new(), None));
    };
    let text = live::stored_text(storage, lease).await?;
    let answer = partial_answer(&text, Some(EntryStatus::Interrupted));
    let entries = header.user.into_iter().chain([answer]).collect();
    Ok((entries, header.guided))
}
