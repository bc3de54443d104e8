//! The `llm-call` queue consumer: one message is one provider (or synthesis) call of one job.
//! The consumer claims the call from the job's Durable Object, calls the provider through the
//! gateway, and reports the outcome. Claims make duplicate deliveries harmless: only the first
//! delivery of a (job, provider, attempt) gets to call the provider; later ones are dropped.

use std::time::Duration;

use stepwise_core::llm::ModelCall;
use stepwise_core::offline;
use stepwise_core::protocol::{ChatMessage, Role};
use stepwise_core::research::{CallTask, Caller, Command};
use worker::{Delay, Env, console_log};

use super::client::{self, JobRequest};
use super::messages::CallMessage;
use crate::platform::error::{AppError, AppResult};
use crate::platform::settings::Settings;
use crate::provider::Gateway;

/// The system prompt of a research call.
const RESEARCH_SYSTEM_PROMPT: &str =
    "You are a careful research assistant. Answer with a structured, sourced report.";
/// Output budget of a research or synthesis answer, in tokens (at least; `LLM_MAX_TOKENS` may raise it).
pub const RESEARCH_MAX_TOKENS: u32 = 2048;
/// Tries at recording a provider's answer with the job.
const REPORT_ATTEMPTS: u32 = 3;

/// Handles one call message. An error means the job could not be reached: the queue retries.
pub async fn handle(env: &Env, call: &CallMessage) -> AppResult<()> {
    let claim = Command::Claim {
        task: call.task,
        provider: call.provider.clone(),
        attempt: call.attempt,
    };
    let mut answer = client::send(
        env,
        &call.research_id,
        &Caller::System,
        JobRequest::Apply(&claim),
    )
    .await?;
    match answer.status_code() {
        200 => {}
        // 204: claimed by another delivery, or no longer waited for; 404: the job is gone.
        204 | 404 => {
            console_log!(
                "research {}: {:?} call {} attempt {} already claimed; delivery dropped",
                call.research_id,
                call.task,
                call.provider,
                call.attempt
            );
            return Ok(());
        }
        status => return Err(AppError::internal(&format_args!("claim answered {status}"))),
    }
    let settings = Settings::from_env(env)?;
    let gateway = Gateway::new(env, &settings);
    let messages = [ChatMessage::new(Role::User, answer.text().await?)];
    let model_call = ModelCall::text(
        RESEARCH_SYSTEM_PROMPT,
        &messages,
        settings.max_tokens.max(RESEARCH_MAX_TOKENS),
    );
    let prompt = &messages[0].content;
    let offline = || offline::research_answer(&call.provider, prompt).into();
    let outcome = gateway
        .complete(&call.provider, &model_call, &offline, gateway.limits())
        .await;
    let command = match call.task {
        CallTask::Provider => Command::CallFinished {
            provider: call.provider.clone(),
            attempt: call.attempt,
            outcome,
        },
        CallTask::Synthesis => Command::SynthesisFinished {
            attempt: call.attempt,
            outcome,
        },
    };

    // The provider has answered: try hard to record it, since a redelivery of this message
    // would find the call claimed and drop it (the alarm would then fail it as a timeout).
    let mut tries = 0;
    loop {
        tries += 1;
        match client::send(
            env,
            &call.research_id,
            &Caller::System,
            JobRequest::Apply(&command),
        )
        .await
        {
            Ok(_) => return Ok(()),
            Err(error) if tries >= REPORT_ATTEMPTS => return Err(error),
            Err(_) => Delay::from(Duration::from_millis(200 * u64::from(tries))).await,
        }
    }
}
