//! Performing what a research command produced, once the job's record is saved: the share
//! page, events to open streams and the `research-events` queue, calls to the `llm-call` queue,
//! and the job's index entry. Failures are logged: the record is already saved, and the alarm
//! fails calls that never ran.

use stepwise_core::research::{CallTask, Effect, Research, ResearchEvent};
use worker::{Env, console_error};

use super::index;
use super::listeners::Listeners;
use super::messages::CallMessage;
use super::share;
use crate::platform::kv::Kv;
use crate::platform::queues;
use crate::platform::settings::number;

/// The queue carrying provider and synthesis calls.
const CALL_QUEUE: &str = "LLM_CALL";
/// The queue carrying lifecycle events.
const EVENTS_QUEUE: &str = "RESEARCH_EVENTS";

/// Performs the effects of one command on the saved `research`.
pub async fn perform(env: &Env, listeners: &Listeners, research: &Research, effects: &[Effect]) {
    let mut events: Vec<&ResearchEvent> = Vec::new();
    let mut calls = Vec::new();
    let (mut write_share, mut refresh_index) = (false, false);
    for effect in effects {
        match effect {
            Effect::Emit(event) => events.push(event),
            Effect::CallProvider { provider, attempt } => {
                calls.push(call(research, CallTask::Provider, provider, *attempt));
            }
            Effect::RunSynthesis { attempt } => {
                let provider = &research.synthesis_llm;
                calls.push(call(research, CallTask::Synthesis, provider, *attempt));
            }
            Effect::WriteSharePage => write_share = true,
            Effect::Index => refresh_index = true,
            // Answered by the object itself: a share id before the save, a claim in its answer.
            Effect::Publish | Effect::MakeCall { .. } => {}
        }
    }
    let kv = Kv::new(env);
    if write_share && let Ok(kv) = &kv {
        share::write_page(kv, research).await;
    }
    listeners.broadcast(research, &events);
    if refresh_index
        && let Ok(kv) = &kv
        && let Err(error) = index::write(kv, research).await
    {
        console_error!("research {}: index not written: {error}", research.id);
    }
    if let Err(error) = &kv {
        console_error!("research {}: KV unavailable: {error}", research.id);
    }
    if !events.is_empty()
        && let Err(error) = queues::send_all(env, EVENTS_QUEUE, &events, 1).await
    {
        console_error!("research {}: events not queued: {error}", research.id);
    }
    if !calls.is_empty() {
        // `LLM_CALL_COPIES` (1 to 3, default 1) sends every call that many times: a drill of
        // the queue's at-least-once delivery, which claims must absorb.
        let copies = number(env, "LLM_CALL_COPIES").unwrap_or(1usize).clamp(1, 3);
        if let Err(error) = queues::send_all(env, CALL_QUEUE, &calls, copies).await {
            console_error!("research {}: calls not queued: {error}", research.id);
        }
    }
}

fn call(research: &Research, task: CallTask, provider: &str, attempt: u32) -> CallMessage {
    CallMessage {
        research_id: research.id.clone(),
        task,
        provider: provider.to_owned(),
        attempt,
    }
}
