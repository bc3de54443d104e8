//! The `llm-call` queue consumer: one message is one provider (or synthesis) call of one job.
//! The consumer claims the call from the job's Durable Object, calls the provider, and reports
//! the outcome. Claims make duplicate deliveries harmless: only the first delivery of a
//! (job, provider, attempt) gets to call the provider; later ones are acknowledged and dropped.

use serde::{Deserialize, Serialize};
use std::time::Duration;
use stepwise_core::llm::{ModelCall, ProviderKind, StreamItem};
use stepwise_core::offline;
use stepwise_core::protocol::{ChatMessage, Role};
use stepwise_core::research::ProviderOutcome;

use worker::{Delay, Env, console_log};

use crate::config::{Config, api_key};
use crate::error::AppResult;
use crate::provider::ModelStream;
use crate::research_job::{self, Command};

/// The system prompt of a research call.
const RESEARCH_SYSTEM_PROMPT: &str =
    "You are a careful research assistant. Answer with a structured, sourced report.";
/// Output budget of a research or synthesis answer, in tokens (at least; `LLM_MAX_TOKENS` may raise it).
const RESEARCH_MAX_TOKENS: u32 = 2048;

/// Tries at recording a provider's answer with the job.
const FINISH_ATTEMPTS: u32 = 3;

/// What a call is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallTask {
    /// One selected provider answering the research prompt.
    Provider,
    /// The synthesis provider combining the reports.
    Synthesis,
}

/// A message of the `llm-call` queue, sent as JSON text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallMessage {
    /// The job.
    pub research_id: String,
    /// Provider call or synthesis.
    pub task: CallTask,
    /// The provider to call.
    pub provider: String,
    /// The attempt: with the job and provider, the idempotency key.
    pub attempt: u32,
}

/// The job's answer to a claim: whether this delivery may make the call, and the prompt to send.
#[derive(Debug, Serialize, Deserialize)]
pub struct Claim {
    /// False for a duplicate delivery or a call the job no longer waits for.
    pub open: bool,
    /// The research prompt, or the synthesis prompt with its sources.
    #[serde(default)]
    pub prompt: String,
}

/// Handles one call message. An error means the job could not be reached: the queue retries.
pub async fn handle_call(env: &Env, call: &CallMessage) -> AppResult<()> {
    let claim: Claim = research_job::send(
        env,
        &call.research_id,
        &Command::Claim {
            task: call.task,
            provider: call.provider.clone(),
            attempt: call.attempt,
        },
    )
    .await?
    .json()
    .await?;
    if !claim.open {
        console_log!(
            "research {}: {:?} call {} attempt {} already claimed; delivery dropped",
            call.research_id,
            call.task,
            call.provider,
            call.attempt
        );
        return Ok(());
    }
    let config = Config::from_env(env)?;
    let outcome = complete(
        env,
        &config,
        &call.provider,
        RESEARCH_SYSTEM_PROMPT,
        &claim.prompt,
        config.max_tokens.max(RESEARCH_MAX_TOKENS),
        config.timeout_ms,
    )
    .await;
    let finished = match call.task {
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
    let mut attempt = 0;
    loop {
        attempt += 1;
        match research_job::send(env, &call.research_id, &finished).await {
            Ok(_) => return Ok(()),
            Err(error) if attempt >= FINISH_ATTEMPTS => return Err(error),
            Err(_) => Delay::from(Duration::from_millis(200 * attempt as u64)).await,
        }
    }
}

/// Asks a configured provider one question and collects its whole answer. Failures become a
/// [`ProviderOutcome::Failed`] with a normalized code; keys are scrubbed from messages.
pub async fn complete(
    env: &Env,
    config: &Config,
    name: &str,
    system: &str,
    prompt: &str,
    max_tokens: u32,
    timeout_ms: u32,
) -> ProviderOutcome {
    let failed = |code: &str, message: String| ProviderOutcome::Failed {
        code: code.into(),
        message,
    };
    let Some(provider) = config.providers.get(name) else {
        return failed(
            "upstream_error",
            format!("provider `{name}` is not configured"),
        );
    };
    let mut stream = if provider.kind == ProviderKind::Offline {
        ModelStream::offline(offline::research_answer(name, prompt))
    } else {
        let messages = [ChatMessage {
            role: Role::User,
            content: prompt.to_owned(),
        }];
        let call = ModelCall {
            system,
            messages: &messages,
            max_tokens,
        };
        match ModelStream::open(provider, api_key(env, provider), &call, timeout_ms).await {
            Ok(stream) => stream,
            Err(error) => return failed(error.code.as_str(), error.message),
        }
    };
    let mut text = String::new();
    while let Some(items) = stream.next().await {
        for item in items {
            match item {
                StreamItem::Text { text: delta } => text.push_str(&delta),
                StreamItem::Finished { .. } => {}
                StreamItem::Failed(error) => return failed(error.code.as_str(), error.message),
            }
        }
    }
    ProviderOutcome::Completed { text }
}
