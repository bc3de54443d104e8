//! One assistant turn at the edge, driving the core's agent loop: call the model with the
//! page's tools (streaming its display text, or its own text to clients that parse markers),
//! run the tools it calls with progress events, call it again with their results, until it
//! answers; then let the core build the answer (payloads checked against their schemas,
//! actions against the page), commit the messages on the conversation, and send `complete`.
//! A turn that fails or whose client goes away is given up: nothing of it is kept.

use std::time::Duration;

use stepwise_core::agent::{Agent, AgentLimits, AssistantResponse, Step, ToolOutcome, finish};
use stepwise_core::conversation::Entry;
use stepwise_core::llm::{ModelCall, ProviderConfig, ProviderKind, Round};
use stepwise_core::markers::MarkerParser;
use stepwise_core::offline::assistant_reply;
use stepwise_core::protocol::{ChatMessage, Role};
use stepwise_core::registry::{ChatContext, Resolution, system_prompt};
use stepwise_core::spend::{Charge, estimate_tokens};
use stepwise_core::streams::SavedStream;
use worker::{Env, console_log};

use super::actions;
use super::registry::registry;
use super::session::Session;
use super::tools::{self, ToolContext};
use crate::platform::deadline::{now_ms, within};
use crate::platform::error::AppError;
use crate::platform::output::{Output, display_text};
use crate::platform::owner::Owner;
use crate::platform::settings::Settings;
use crate::platform::spend;
use crate::provider::Gateway;

/// What the user asked: a message, or a server action with its target.
pub enum Ask {
    /// A message for the model.
    Message(String),
    /// A server action (`POST /api/assistant/actions`), its label and target.
    Action {
        /// The action's name.
        action: String,
        /// Its button's label.
        label: String,
        /// What it acts on.
        target: Option<String>,
    },
}

/// An accepted assistant turn, with everything needed to run it.
pub struct AssistantTurn {
    /// The Worker's bindings.
    pub env: Env,
    /// Its settings.
    pub settings: Settings,
    /// Whose turn it is.
    pub owner: Owner,
    /// The provider to call.
    pub provider: ProviderConfig,
    /// The turn's hold on its conversation.
    pub session: Session,
    /// What was asked.
    pub ask: Ask,
    /// What is on the screen.
    pub context: ChatContext,
    /// The stream in view, the caller's.
    pub stream: Option<SavedStream>,
    /// The loop's bounds.
    pub limits: AgentLimits,
    /// Longest a tool may run.
    pub tool_timeout: Duration,
    /// When the turn must be over (ms since the epoch).
    pub deadline_at: u64,
}

/// Why a turn stopped early.
enum Stop {
    /// It failed; the `error` event says why.
    Failed(AppError),
    /// The client went away.
    Gone,
}

impl AssistantTurn {
    /// Runs the turn, emitting its events; returns whether it was stored.
    pub async fn run(self, out: &mut Output) -> bool {
        let context = &self.context;
        let resolution = registry().resolve(
            &context.current_page,
            context.active_tab.as_deref(),
            context.active_subtab.as_deref(),
        );
        let answered = match &self.ask {
            Ask::Message(message) => self.converse(&resolution, message, out).await,
            Ask::Action { action, target, .. } => {
                out.status(&format!("Running {action}...")).await;
                actions::run(&self, action, target.as_deref())
                    .await
                    .map_err(Stop::Failed)
            }
        };
        let mut response = match answered {
            Ok(response) => response,
            Err(stop) => {
                if let Stop::Failed(error) = stop {
                    out.error(error).await;
                } else {
                    console_log!(
                        "assistant turn of {}: the client went away",
                        self.session.id
                    );
                }
                self.session.abort(&self.env).await;
                return false;
            }
        };
        if let Ask::Action { .. } = self.ask {
            out.delta(&response.message, response.message.clone()).await;
        }
        response.conversation_id = Some(self.session.id.clone());
        let stored = match self
            .session
            .commit(&self.env, self.entries(&response))
            .await
        {
            Ok(()) => true,
            Err(error) => {
                worker::console_error!("conversation {} was not stored: {error}", self.session.id);
                // Release the turn so the next one is not refused until the lease runs out.
                self.session.abort(&self.env).await;
                out.status("not saved: this turn could not be stored").await;
                false
            }
        };
        out.complete(response.into()).await;
        stored
    }

    /// The agent loop over a message.
    async fn converse(
        &self,
        resolution: &Resolution<'_>,
        message: &str,
        out: &mut Output,
    ) -> Result<AssistantResponse, Stop> {
        let brief = self.stream.as_ref().map(SavedStream::brief);
        let system = system_prompt(resolution, &self.context, brief.as_ref());
        let mut messages = self.session.history(self.settings.history_budget);
        messages.push(ChatMessage {
            role: Role::User,
            content: message.to_owned(),
        });
        let mut agent = Agent::new(resolution, self.limits);
        let specs = agent.tool_specs();
        let mut parser = MarkerParser::with_registry(resolution.marker_registry());
        let gateway = Gateway::new(&self.env, &self.settings);
        let tools = ToolContext {
            env: &self.env,
            settings: &self.settings,
            owner: &self.owner,
        };
        out.status("Thinking...").await;
        let mut step = agent.start();
        loop {
            step = match step {
                Step::CallModel { answer_now } => {
                    let rounds = agent.rounds();
                    self.charge(&system, &messages, rounds)
                        .await
                        .map_err(Stop::Failed)?;
                    let call = ModelCall {
                        system: &system,
                        messages: &messages,
                        max_tokens: self.settings.max_tokens,
                        tools: &specs,
                        rounds,
                        answer_now,
                    };
                    let offline =
                        || assistant_reply(message, &self.context, resolution, rounds, answer_now);
                    let mut limits = gateway.limits();
                    let left = self.deadline_at.saturating_sub(now_ms()).max(1);
                    limits.deadline_ms =
                        limits.deadline_ms.min(left.min(u64::from(u32::MAX)) as u32);
                    let provider_failed =
                        |e| Stop::Failed(Gateway::public(&self.provider.name, e).into());
                    let mut stream = gateway
                        .open(&self.provider, &call, &offline, limits)
                        .await
                        .map_err(provider_failed)?;
                    let mut text = String::new();
                    while let Some(piece) = stream.next_text().await.map_err(provider_failed)? {
                        text.push_str(&piece);
                        if !out.delta(&piece, display_text(parser.feed(&piece))).await {
                            return Err(Stop::Gone);
                        }
                    }
                    if !text.is_empty() && !text.ends_with('\n') {
                        // Each round's text ends its line: a marker never spans two rounds.
                        out.delta("\n", display_text(parser.feed("\n"))).await;
                    }
                    let calls = stream.take_tool_calls();
                    agent.model_answered(&text, calls)
                }
                Step::RunTools(runs) => {
                    let mut next = Step::Done;
                    for run in runs {
                        if !out.tool_start(&run.tool, &run.input).await {
                            return Err(Stop::Gone);
                        }
                        let left = self.deadline_at.saturating_sub(now_ms());
                        let limit = self.tool_timeout.min(Duration::from_millis(left));
                        let running = tools::run(&tools, &run.tool, &run.input, out);
                        let outcome = within(limit, running)
                            .await
                            .unwrap_or(ToolOutcome::TimedOut);
                        out.tool_complete(&run.tool, run.index).await;
                        if let Some(step) = agent.tool_finished(run.index, outcome) {
                            next = step;
                        }
                    }
                    next
                }
                Step::Done => break,
            };
        }
        out.delta("", display_text(parser.end())).await;
        Ok(finish(resolution, parser.finish(), agent))
    }

    /// Counts one model call against the owner's caps (offline answers cost nothing).
    async fn charge(
        &self,
        system: &str,
        messages: &[ChatMessage],
        rounds: &[Round],
    ) -> Result<(), AppError> {
        if self.provider.kind == ProviderKind::Offline {
            return Ok(());
        }
        let prompt = system.len()
            + messages.iter().map(|m| m.content.len()).sum::<usize>()
            + rounds.iter().map(Round::prompt_bytes).sum::<usize>();
        let charge = Charge {
            calls: 1,
            tokens: estimate_tokens(prompt, self.settings.max_tokens),
        };
        spend::charge(&self.env, &self.owner, charge).await
    }

    /// The turn's messages as the conversation keeps them.
    fn entries(&self, response: &AssistantResponse) -> Vec<Entry> {
        let now = now_ms();
        let page = Some(self.context.current_page.as_str());
        let user = match &self.ask {
            Ask::Message(message) => Entry::user(message, now, page),
            Ask::Action { action, label, .. } => {
                let mut entry = Entry::user(label, now, page);
                entry.action = Some(action.clone());
                entry
            }
        };
        let mut answer = Entry::user(&response.message, now, None);
        answer.role = Role::Assistant;
        answer.tool_history = response.tool_history.clone();
        answer.payloads = response.payloads.clone();
        answer.suggested_values = response.suggested_values.clone();
        answer.suggested_actions = response.suggested_actions.clone();
        vec![user, answer]
    }
}
