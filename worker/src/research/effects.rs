//! Performing what a research command produced, once the job's record is saved: share pages
//! written or withdrawn, events to open streams and the `research-events` queue, calls to the
//! `llm-call` queue, the owner's index entry, and everything of an erased job. Failures are
//! logged: the record is already saved, the alarm fails calls that never ran, and an index write
//! KV refused is reported back so the object retries it later.

use stepwise_core::research::{CallTask, Effect, Lifetimes, Research, ResearchEvent};
use worker::{Env, console_error};

use super::index;
use super::listeners::Listeners;
use super::messages::{CallMessage, LLM_CALL, event_message};
use super::share;
use crate::platform::kv::Kv;
use crate::platform::queues;
use crate::platform::settings::number;

/// The queue carrying provider and synthesis calls.
const CALL_QUEUE: &str = "LLM_CALL";
/// The queue carrying lifecycle events.
const EVENTS_QUEUE: &str = "RESEARCH_EVENTS";

/// What the object must follow up on after the effects ran.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct FollowUp {
    /// The index entry could not be written: retry it later.
    pub index_pending: bool,
}

/// Performs the effects of one command; `research` is the saved record (`None`: the command
/// erased the job).
pub async fn perform(
    env: &Env,
    listeners: &Listeners,
    research: Option<&Research>,
    effects: &[Effect],
    lifetimes: &Lifetimes,
) -> FollowUp {
    let mut follow_up = FollowUp::default();
    let kv = match Kv::new(env) {
        Ok(kv) => kv,
        Err(error) => {
            console_error!("research: KV unavailable: {error}");
            return FollowUp {
                index_pending: effects.contains(&Effect::Index),
            };
        }
    };
    let mut events: Vec<&ResearchEvent> = Vec::new();
    let mut calls = Vec::new();
    for effect in effects {
        match (effect, research) {
            (Effect::Emit(event), _) => events.push(event),
            (Effect::CallProvider { provider, attempt }, Some(job)) => {
                calls.push(call(job, CallTask::Provider, provider, *attempt));
            }
            (Effect::RunSynthesis { attempt }, Some(job)) => {
                let provider = &job.synthesis_llm;
                calls.push(call(job, CallTask::Synthesis, provider, *attempt));
            }
            (Effect::WriteSharePage, Some(job)) => share::write_page(&kv, job).await,
            (Effect::DeleteSharePage { share_id }, _) => share::delete_page(&kv, share_id).await,
            (Effect::Index, Some(job)) => {
                if let Err(error) = index::write(&kv, job, lifetimes).await {
                    console_error!("research {}: index not written: {error}", job.id);
                    follow_up.index_pending = true;
                }
            }
            (Effect::Erase { research: gone }, _) => erase(&kv, listeners, gone).await,
            // A claim's prompt is the object's answer; effects of an erased job have no job.
            _ => {}
        }
    }
    if let Some(job) = research {
        listeners.broadcast(job, &events);
    }
    if !events.is_empty() {
        let messages: Vec<String> = events
            .iter()
            .filter_map(|event| serde_json::to_string(event).ok())
            .map(|json| event_message(&json))
            .collect();
        if let Err(error) = queues::send_all(env, EVENTS_QUEUE, &messages, 1).await {
            console_error!("research: events not queued: {error}");
        }
    }
    if !calls.is_empty() {
        // `LLM_CALL_COPIES` (1 to 3, default 1) sends every call that many times: a drill of
        // the queue's at-least-once delivery, which claims must absorb.
        let copies = number(env, "LLM_CALL_COPIES").unwrap_or(1usize).clamp(1, 3);
        let messages: Vec<String> = calls
            .iter()
            .filter_map(|call| serde_json::to_string(call).ok())
            .collect();
        if let Err(error) = queues::send_all(env, CALL_QUEUE, &messages, copies).await {
            console_error!("research: calls not queued: {error}");
        }
    }
    follow_up
}

/// Removes what an erased job left outside its object: its index entry and its share page; and
/// ends its streams.
async fn erase(kv: &Kv, listeners: &Listeners, gone: &Research) {
    if let Err(error) = index::delete(kv, gone).await {
        console_error!("research {}: index entry not deleted: {error}", gone.id);
    }
    if let Some(shared) = &gone.share_info {
        share::delete_page(kv, &shared.share_id).await;
    }
    listeners.end();
}

fn call(research: &Research, task: CallTask, provider: &str, attempt: u32) -> CallMessage {
    CallMessage {
        kind: LLM_CALL.to_owned(),
        research_id: research.id.clone(),
        task,
        provider: provider.to_owned(),
        attempt,
    }
}
