//! Performing a research transition's effects, for the job's Durable Object: publishing the
//! share page (before the record is saved, so the saved record names it), then, after the save,
//! events to open streams and the `research-events` queue, provider and synthesis calls to the
//! `llm-call` queue, and the job's entry in the KV index behind `GET /api/research`.

use serde::Serialize;
use stepwise_core::research::{
    Effect, Research, ResearchEvent, ResearchStatus, ShareInfo, share_html,
};
use worker::{Env, console_error, js_sys};

use crate::config::number;
use crate::ids;
use crate::research_calls::{CallMessage, CallTask};
use crate::research_listeners::Listeners;
use crate::store::KV_BINDING;

/// The queue carrying provider and synthesis calls.
const CALL_QUEUE: &str = "LLM_CALL";
/// The queue carrying lifecycle events.
const EVENTS_QUEUE: &str = "RESEARCH_EVENTS";
/// KV key prefix of the job index; keys sort newest first.
pub const INDEX_PREFIX: &str = "research:";
/// KV key prefix of published share pages.
pub const SHARE_PREFIX: &str = "share:";

/// What remains to do once the record is saved.
pub struct AfterSave {
    events: Vec<ResearchEvent>,
    calls: Vec<CallMessage>,
}

/// The job's entry in the KV index (stored as the key's metadata, so a list needs no reads).
#[derive(Debug, Serialize)]
struct IndexEntry<'a> {
    id: &'a str,
    title: &'a str,
    status: ResearchStatus,
    created_at: u64,
    selected_llms: &'a [String],
}

/// The effect performer of one job's object.
pub struct Effects<'a> {
    /// The Worker's bindings.
    pub env: &'a Env,
    /// The job's open event streams.
    pub listeners: &'a Listeners,
}

impl Effects<'_> {
    /// Publishes the share page if the job completed, and sorts the rest for [`Self::dispatch`].
    pub async fn prepare(
        &self,
        research: &mut Research,
        effects: Vec<Effect>,
        origin: &str,
    ) -> AfterSave {
        let mut after = AfterSave {
            events: Vec::new(),
            calls: Vec::new(),
        };
        for effect in effects {
            match effect {
                Effect::Emit(event) => after.events.push(event),
                Effect::CallProvider { provider, attempt } => after.calls.push(CallMessage {
                    research_id: research.id.clone(),
                    task: CallTask::Provider,
                    provider,
                    attempt,
                }),
                Effect::RunSynthesis { attempt } => after.calls.push(CallMessage {
                    research_id: research.id.clone(),
                    task: CallTask::Synthesis,
                    provider: research.synthesis_llm.clone(),
                    attempt,
                }),
                Effect::Publish => match self.publish(research, origin).await {
                    Ok(event) => after.events.push(event),
                    Err(error) => console_error!("research {}: {error}", research.id),
                },
            }
        }
        after
    }

    /// Sends what the transition produced: events to streams and the events queue, calls to the
    /// call queue, and a fresh index entry when the status changed. Failures are logged: the
    /// record is already saved, and the alarm fails calls that never ran.
    pub async fn dispatch(&self, research: &Research, after: AfterSave) {
        self.listeners.broadcast(research, &after.events);
        if after
            .events
            .iter()
            .any(|e| matches!(e, ResearchEvent::StatusChanged { .. }))
        {
            self.index(research).await;
        }
        if !after.events.is_empty() {
            let messages: Vec<String> = after.events.iter().map(to_json).collect();
            if let Err(error) = send_all(self.env, EVENTS_QUEUE, messages).await {
                console_error!("research {}: events not queued: {error}", research.id);
            }
        }
        if !after.calls.is_empty() {
            // `LLM_CALL_COPIES` (1 to 3, default 1) sends every call that many times: a drill
            // of the queue's at-least-once delivery, which claims must absorb.
            let copies = number(self.env, "LLM_CALL_COPIES")
                .unwrap_or(1usize)
                .clamp(1, 3);
            let messages: Vec<String> = after
                .calls
                .iter()
                .flat_map(|call| std::iter::repeat_n(to_json(call), copies))
                .collect();
            if let Err(error) = send_all(self.env, CALL_QUEUE, messages).await {
                console_error!("research {}: calls not queued: {error}", research.id);
            }
        }
    }

    /// Writes the job's index entry (keyed so that a prefix list is newest first).
    pub async fn index(&self, research: &Research) {
        let entry = IndexEntry {
            id: &research.id,
            title: &research.title,
            status: research.status,
            created_at: research.created_at,
            selected_llms: &research.selected_llms,
        };
        let written = async {
            self.env
                .kv(KV_BINDING)?
                .put(&index_key(research), "")?
                .metadata(entry)?
                .execute()
                .await?;
            Ok::<_, worker::Error>(())
        };
        if let Err(error) = written.await {
            console_error!("research {}: index not written: {error}", research.id);
        }
    }

    /// Stores the read-only report page in KV and records where it is served.
    async fn publish(
        &self,
        research: &mut Research,
        origin: &str,
    ) -> worker::Result<ResearchEvent> {
        let share_id = match &research.share_info {
            Some(share) => share.share_id.clone(),
            None => ids::random_id().map_err(|e| worker::Error::RustError(e.message))?,
        };
        let base = crate::config::var(self.env, "PUBLIC_URL").unwrap_or_else(|| origin.to_owned());
        let url = format!("{}/share/{share_id}", base.trim_end_matches('/'));
        research.set_share(ShareInfo {
            share_id: share_id.clone(),
            url: url.clone(),
        });
        let page = share_html(research);
        self.env
            .kv(KV_BINDING)?
            .put(&format!("{SHARE_PREFIX}{share_id}"), page)?
            .execute()
            .await?;
        Ok(ResearchEvent::Published {
            research_id: research.id.clone(),
            share_id,
            url,
            at: js_sys::Date::now() as u64,
        })
    }
}

/// `research:<inverted creation time>:<id>`: KV lists keys in byte order, so newest come first.
fn index_key(research: &Research) -> String {
    const LATEST: u64 = 9_999_999_999_999;
    format!(
        "{INDEX_PREFIX}{:013}:{}",
        LATEST.saturating_sub(research.created_at),
        research.id
    )
}

fn to_json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// Sends JSON texts to a queue, in batches of at most 100 (the platform's batch limit).
async fn send_all(env: &Env, binding: &str, messages: Vec<String>) -> worker::Result<()> {
    let queue = env.queue(binding)?;
    for batch in messages.chunks(100) {
        queue.send_batch(batch.to_vec()).await?;
    }
    Ok(())
}
