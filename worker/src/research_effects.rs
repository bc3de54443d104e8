//! Performing a research transition's effects, for the job's Durable Object. Before the record
//! is saved, and without any I/O: sorting the effects, and naming the share page of a completed
//! job. After the save: the share page in KV, events to open streams and the `research-events`
//! queue, provider and synthesis calls to the `llm-call` queue, and the job's entry in the KV
//! index behind `GET /api/research`.

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
    /// The share page to write, when the job just completed.
    publish: bool,
}

/// The job's entry in the KV index (stored as the key's metadata, so a list needs no reads).
#[derive(Debug, Serialize)]
struct IndexEntry<'a> {
    id: &'a str,
    title: &'a str,
    status: ResearchStatus,
    created_at: u64,
    /// How many providers were selected (names are left out: KV metadata holds 1024 bytes).
    providers: usize,
}

/// The effect performer of one job's object.
pub struct Effects<'a> {
    /// The Worker's bindings.
    pub env: &'a Env,
    /// The job's open event streams.
    pub listeners: &'a Listeners,
}

impl Effects<'_> {
    /// Sorts the effects for [`Self::dispatch`]; a completed job gets its share id and URL
    /// here, so the record saved next names them. No I/O.
    pub fn prepare(
        &self,
        research: &mut Research,
        effects: Vec<Effect>,
        origin: &str,
    ) -> AfterSave {
        let mut after = AfterSave {
            events: Vec::new(),
            calls: Vec::new(),
            publish: false,
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
                Effect::Publish => match self.name_share(research, origin) {
                    Ok(event) => {
                        after.events.push(event);
                        after.publish = true;
                    }
                    Err(error) => console_error!("research {}: no share id: {error}", research.id),
                },
            }
        }
        after
    }

    /// Sends what the transition produced: events to streams and the events queue, calls to the
    /// call queue, and a fresh index entry when the status changed. Failures are logged: the
    /// record is already saved, and the alarm fails calls that never ran.
    pub async fn dispatch(&self, research: &Research, after: AfterSave) {
        if after.publish {
            self.write_share_page(research).await;
        }
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
            providers: research.selected_llms.len(),
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

    /// Records where the read-only report will be served (a new share id, or the one it had).
    fn name_share(&self, research: &mut Research, origin: &str) -> Result<ResearchEvent, String> {
        let share_id = match &research.share_info {
            Some(share) => share.share_id.clone(),
            None => ids::random_id().map_err(|e| e.message)?,
        };
        let base = crate::config::var(self.env, "PUBLIC_URL").unwrap_or_else(|| origin.to_owned());
        let url = format!("{}/share/{share_id}", base.trim_end_matches('/'));
        research.set_share(ShareInfo {
            share_id: share_id.clone(),
            url: url.clone(),
        });
        Ok(ResearchEvent::Published {
            research_id: research.id.clone(),
            share_id,
            url,
            at: js_sys::Date::now() as u64,
        })
    }

    /// Writes the report page to KV (twice at most: a failure is logged, the job stays completed).
    async fn write_share_page(&self, research: &Research) {
        let Some(share) = &research.share_info else {
            return;
        };
        let key = format!("{SHARE_PREFIX}{}", share.share_id);
        let page = share_html(research);
        let mut last_error = None;
        for _ in 0..2 {
            let written = async {
                let kv = self.env.kv(KV_BINDING)?;
                kv.put(&key, page.as_str())?.execute().await?;
                Ok::<_, worker::Error>(())
            };
            match written.await {
                Ok(()) => return,
                Err(error) => last_error = Some(error),
            }
        }
        if let Some(error) = last_error {
            console_error!("research {}: share page not written: {error}", research.id);
        }
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
