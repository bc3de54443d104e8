//! One assistant turn at the edge, driving the core's agent loop: call the model with the
//! page's tools (streaming its display text, or its own text to clients that parse markers),
//! run the tools it calls with progress events, call it again with their results, until it
//! answers; then let the core build the answer (payloads checked against their schemas,
//! actions against the page), commit the messages on the conversation, and send `complete`.
//! A turn that fails or whose client goes away is given up: nothing of it is kept.
//!
//! Context on request: before the model is called, the core's analyzer says what the turn
//! needs beyond its baseline; what the owner's artifacts hold is filled at once, and a need only
//! the user can meet defers the turn (`context_required`). The model may ask too, with a
//! `CONTEXT_REQUEST:` payload: filled automatically, the model is called once more with it;
//! otherwise the turn is deferred the same way. A resumed turn answers whatever it has.

use std::time::Duration;

use futures::future::{Either, select};
use serde_json::Value;
use stepwise_core::agent::{Agent, AgentLimits, AssistantResponse, Step, ToolOutcome, finish};
use stepwise_core::approval::DEFAULT_APPROVAL_TTL_MS;
use stepwise_core::conversation::{Entry, EntryStatus, Waiting};
use stepwise_core::handshake::{
    Baseline, Carried, ContextNeedsAnalyzer, ContextRequest, DEFAULT_SLA_MS, NeedsInput, Origin,
    Policy, PromptSheet, Wanted, build_request, classify, mode_of, wanted_from_marker,
};
use stepwise_core::llm::{ModelCall, ProviderConfig, ProviderError, ProviderKind, Round};
use stepwise_core::markers::MarkerParser;
use stepwise_core::offline::{assistant_reply, context_reply};
use stepwise_core::protocol::ContextRequired;
use stepwise_core::protocol::{ChatMessage, Role};
use stepwise_core::registry::{ChatContext, Resolution, system_prompt};
use stepwise_core::spend::{Charge, estimate_tokens};
use worker::{Env, console_log};

use super::actions::{self, ActionContext};
use super::session::{Extras, Session};
use super::tools::{self, ToolContext};
use crate::handshake::relay::Relay;
use crate::handshake::sources::{self, Loaded};
use crate::handshake::stats;
use crate::platform::deadline::{now_ms, within};
use crate::platform::error::AppError;
use crate::platform::ids;
use crate::platform::output::{Output, display_text};
use crate::platform::owner::Owner;
use crate::platform::settings::{Settings, number};
use crate::platform::spend;
use crate::provider::{Gateway, ModelStream};
use crate::registry::registry;

/// What the user asked: a message, or a server action with its target.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
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
    /// An approved call (decided by `POST …/approvals/:approval_id`): run it once, then let the model answer with its
    /// result.
    Approve {
        /// The approval.
        approval_id: String,
        /// The owner's edited arguments, if they edited them.
        arguments: Option<Value>,
        /// The user's side of the turn: "Approved: …".
        label: String,
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
    /// The caller's sources in view: stream, literature, jobs.
    pub loaded: Loaded,
    /// The context handshake's state for this turn.
    pub handshake: Handshake,
    /// The loop's bounds.
    pub limits: AgentLimits,
    /// Longest a tool may run.
    pub tool_timeout: Duration,
    /// When the turn must be over (ms since the epoch).
    pub deadline_at: u64,
}

/// A turn's context handshake: the prompt sheet, the writing style, what resumes it if it is
/// deferred, and the request whose supplies it answers with.
pub struct Handshake {
    /// The sheet the context bundle renders with.
    pub sheet: PromptSheet,
    /// The writing style (a sheet style), the sheet's default when `None`.
    pub writing_style: Option<String>,
    /// The page context as sent (kept with a deferred turn).
    pub raw_context: Value,
    /// The provider the request named (kept with a deferred turn).
    pub provider: Option<String>,
    /// The request whose supplies the turn answers with (resumed, or filled automatically).
    pub request: Option<ContextRequest>,
    /// A one-line warning the answer opens with (run without what was asked for).
    pub warning: Option<String>,
    /// The user message's id.
    pub user_message_id: String,
    /// The user's supplies of the conversation's earlier requests, carried into this turn.
    pub earlier: Carried,
}

impl Handshake {
    /// A fresh turn's handshake.
    pub fn new(
        sheet: PromptSheet,
        writing_style: Option<String>,
        raw_context: Value,
        provider: Option<String>,
    ) -> Handshake {
        Handshake {
            sheet,
            writing_style,
            raw_context,
            provider,
            request: None,
            warning: None,
            user_message_id: String::new(),
            earlier: Carried::default(),
        }
    }
}

/// How the model's part of a turn ended.
pub(super) enum Answered {
    /// With an answer.
    Answer(Box<AssistantResponse>),
    /// The turn was deferred; the request went to the client.
    Deferred,
}

/// Why a turn stopped early.
pub(super) enum Stop {
    /// It failed; the `error` event says why.
    Failed(AppError),
    /// The client went away.
    Gone,
}

impl AssistantTurn {
    /// Runs the turn, emitting its events; returns whether it was stored (a deferred turn's
    /// message counts as stored).
    pub async fn run(mut self, out: &mut Output) -> bool {
        // Stopped before it ran (a waiting message stopped while its log was being begun):
        // nothing runs, no model call and no action; the message is kept with no answer.
        if out.is_stopped() {
            return self.keep_stopped(out).await;
        }
        if self.handshake.user_message_id.is_empty() {
            self.handshake.user_message_id = ids::random_id().unwrap_or_default();
        }
        let context = self.context.clone();
        let resolution = registry().resolve(
            &context.current_page,
            context.active_tab.as_deref(),
            context.active_subtab.as_deref(),
        );
        // A live turn's log reaches the watchers itself; the relay serves the others.
        let relay_on = !self.session.is_new() && out.live().is_none();
        let mut relay = Relay::new(&self.session.id, relay_on);
        let answered = match &self.ask {
            Ask::Message(message) => {
                let message = message.clone();
                self.answer_message(&resolution, &message, &mut relay, out)
                    .await
            }
            Ask::Action { action, target, .. } => {
                // An action cannot be undone half way: once it runs, Stop no longer applies.
                out.answered();
                out.status(&format!("Running {action}...")).await;
                let ctx = ActionContext {
                    env: &self.env,
                    settings: &self.settings,
                    owner: &self.owner,
                    stream_id: self.loaded.stream.as_ref().map(|s| s.id.as_str()),
                };
                actions::run(&ctx, action, target.as_deref())
                    .await
                    .map(|r| Answered::Answer(Box::new(r)))
                    .map_err(Stop::Failed)
            }
            Ask::Approve {
                approval_id, label, ..
            } => {
                let (approval_id, label) = (approval_id.clone(), label.clone());
                self.run_approved(&resolution, &approval_id, &label, &mut relay, out)
                    .await
            }
        };
        let mut response = match answered {
            // A Stop accepted before the answer was whole (during its last delta too) wins.
            Ok(Answered::Answer(_)) | Err(Stop::Gone) if out.is_stopped() => {
                return self.keep_stopped(out).await;
            }
            Ok(Answered::Answer(response)) => {
                out.answered();
                *response
            }
            Ok(Answered::Deferred) => return true,
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
        relay.flush(&self.env).await;
        if let Some(warning) = &self.handshake.warning {
            response.message = format!("⚠ {warning}\n\n{}", response.message);
        }
        if let Some(approval) = response.approval.as_mut() {
            let ttl = number(&self.env, "APPROVAL_TTL_MS").unwrap_or(DEFAULT_APPROVAL_TTL_MS);
            approval.issue(&ids::random_id().unwrap_or_default(), now_ms(), ttl);
            let args = approval.arguments.clone();
            approval.summary = tools::summary(&self.env, &self.owner, &approval.tool, &args).await;
        }
        response.conversation_id = Some(self.session.id.clone());
        let auto = match (&self.session.resumed, &self.handshake.request) {
            (None, Some(request)) => vec![request.clone()],
            _ => Vec::new(),
        };
        let extras = Extras {
            requests: auto.clone(),
            writing_style: self.handshake.writing_style.clone(),
        };
        let stored = match self
            .session
            .commit(&self.env, self.entries(&response), extras)
            .await
        {
            Ok(index) => {
                response.message_index = Some(index);
                true
            }
            Err(error) => {
                worker::console_error!("conversation {} was not stored: {error}", self.session.id);
                // Release the turn so the next one is not refused until the lease runs out.
                self.session.abort(&self.env).await;
                out.status("not saved: this turn could not be stored").await;
                false
            }
        };
        // An approval is offered once it is stored: a turn not stored has none to decide.
        match (&response.approval, stored) {
            (Some(approval), true) => out.approval_required(approval).await,
            (Some(_), false) => response.approval = None,
            _ => {}
        }
        if stored {
            let ended = self.session.resumed.iter().chain(&auto);
            for request in ended {
                stats::record(&self.env, &self.owner.id, &self.session.id, request).await;
            }
        }
        out.complete(response.into()).await;
        stored
    }

    /// A message's answer: the analyzer first (context filled, or the turn deferred), then the
    /// agent loop, then the model's own `CONTEXT_REQUEST:` if it wrote one.
    async fn answer_message(
        &mut self,
        resolution: &Resolution<'_>,
        message: &str,
        relay: &mut Relay,
        out: &mut Output,
    ) -> Result<Answered, Stop> {
        let fresh = self.session.resumed.is_none();
        if fresh {
            let wanted = self.analyze(message);
            if !wanted.is_empty() {
                if wanted.iter().any(|w| !w.candidates.is_empty()) {
                    sources::load_candidates(&self.env, &self.owner, &mut self.loaded).await;
                }
                let request = self.request(Origin::Analyzer, wanted);
                if !request.ready() {
                    return self.defer(request, message, out).await;
                }
                // Nothing wanted exists: no request at all (none is kept or counted).
                if !request.slots.is_empty() {
                    self.handshake.request = Some(request);
                }
            }
        }
        if let Some(warning) = &self.handshake.warning {
            let line = format!("⚠ {warning}\n\n");
            relay.push(&self.env, &line).await;
            out.delta(&line, line.clone()).await;
        }
        let mut response = self.converse(resolution, message, relay, out, None).await?;
        let Some(asked) = response.take_payloads(CONTEXT_REQUEST) else {
            return Ok(Answered::Answer(Box::new(response)));
        };
        if !fresh {
            response.note(
                "context_request_ignored",
                "the model asked for more context on a turn that had its supply; answered as is",
            );
            return Ok(Answered::Answer(Box::new(response)));
        }
        let wanted = match wanted_from_marker(asked.data.as_str()) {
            Ok(wanted) => wanted,
            Err(why) => {
                response.note(
                    "context_request_ignored",
                    format!("the model's context request was not usable ({why}); answered as is"),
                );
                return Ok(Answered::Answer(Box::new(response)));
            }
        };
        let paths: Vec<&str> = wanted
            .iter()
            .filter_map(|w| w.key_path.as_deref())
            .collect();
        sources::load_paths(&self.env, &self.owner, &mut self.loaded, &paths).await;
        let request = self.request(Origin::Model, wanted);
        if request.slots.is_empty() {
            response.note(
                "context_request_ignored",
                "nothing the model asked for exists in the owner's data; answered as is",
            );
            return Ok(Answered::Answer(Box::new(response)));
        }
        if !request.ready() {
            return self.defer(request, message, out).await;
        }
        out.status("Reading the context the model asked for...")
            .await;
        self.handshake.request = Some(request);
        let mut again = self.converse(resolution, message, relay, out, None).await?;
        if again.take_payloads(CONTEXT_REQUEST).is_some() {
            again.note(
                "context_request_ignored",
                "the model asked for context again after it was supplied; answered as is",
            );
        }
        Ok(Answered::Answer(Box::new(again)))
    }

    /// What the analyzer wants for `message` that the turn does not hold.
    fn analyze(&self, message: &str) -> Vec<Wanted> {
        let baseline = self.baseline();
        let goal = baseline.synthesized_goal();
        let mut held = self.loaded.held();
        held.extend(self.handshake.earlier.held.iter().cloned());
        let input = NeedsInput {
            page: &self.context.current_page,
            message,
            class: classify(message),
            active_phase: self.loaded.active_phase(),
            goal: &goal,
            stream_id: self.loaded.stream.as_ref().map(|s| s.id.as_str()),
            research_id: self.loaded.job().map(|j| j.id.as_str()),
            candidates: &self.loaded.candidates,
            held: &held,
            screen: Some(&self.context),
        };
        ContextNeedsAnalyzer::new(Policy::builtin()).analyze(&input)
    }

    /// A request of the user message from `wanted`, filled from the owner's sources.
    fn request(&self, origin: Origin, wanted: Vec<Wanted>) -> ContextRequest {
        let sla_ms = number(&self.env, "CONTEXT_SLA_MS").unwrap_or(DEFAULT_SLA_MS);
        build_request(
            &ids::random_id().unwrap_or_default(),
            &self.handshake.user_message_id,
            origin,
            wanted,
            &self.loaded.sources(),
            now_ms(),
            sla_ms,
        )
    }

    /// Defers the turn: the user message waits for `request` on the conversation, and the
    /// client gets `context_required`.
    async fn defer(
        &self,
        request: ContextRequest,
        message: &str,
        out: &mut Output,
    ) -> Result<Answered, Stop> {
        let mut entry = Entry::user(message, now_ms(), Some(&self.context.current_page));
        entry.id = Some(self.handshake.user_message_id.clone());
        let waiting = Waiting {
            request_id: request.request_id.clone(),
            message: message.to_owned(),
            context: self.handshake.raw_context.clone(),
            provider: self.handshake.provider.clone(),
        };
        self.session
            .defer(&self.env, entry, request.clone(), waiting)
            .await
            .map_err(Stop::Failed)?;
        stats::record(&self.env, &self.owner.id, &self.session.id, &request).await;
        out.context_required(ContextRequired::of(&self.session.id, &request))
            .await;
        Ok(Answered::Deferred)
    }

    /// The baseline of this turn.
    fn baseline(&self) -> Baseline<'_> {
        Baseline {
            stream: self.loaded.stream.as_ref(),
            literature: self.loaded.literature.as_ref(),
            job: self.loaded.job(),
            writing_style: self.handshake.writing_style.as_deref(),
            earlier: &self.handshake.earlier.text,
        }
    }

    /// The agent loop over a message (from `seed`, an approved call's round, when given).
    pub(super) async fn converse(
        &self,
        resolution: &Resolution<'_>,
        message: &str,
        relay: &mut Relay,
        out: &mut Output,
        seed: Option<Round>,
    ) -> Result<AssistantResponse, Stop> {
        let brief = self.loaded.stream.as_ref().map(|s| s.brief());
        let mut system = system_prompt(resolution, &self.context, brief.as_ref());
        let bundle = self.baseline().render(
            &self.handshake.sheet,
            &self.context.current_page,
            mode_of(classify(message)),
            self.handshake.request.as_ref(),
            self.handshake.warning.as_deref(),
        );
        if !bundle.is_empty() {
            system.push_str("\n\n");
            system.push_str(&bundle);
        }
        let mut messages = self.session.history(self.settings.history_budget);
        messages.push(ChatMessage::new(Role::User, message.to_owned()));
        let providers = &self.settings.providers;
        let mut agent = Agent::new(resolution, self.limits)
            .with_defaults(providers.names(), providers.chat.clone());
        if let Some(round) = seed {
            agent.seed(round);
        }
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
                    let request = self.handshake.request.as_ref();
                    let offline = || match request {
                        Some(request) if rounds.is_empty() => context_reply(message, request),
                        _ => {
                            assistant_reply(message, &self.context, resolution, rounds, answer_now)
                        }
                    };
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
                    while let Some(piece) = next_unless_stopped(&mut stream, out)
                        .await?
                        .map_err(provider_failed)?
                    {
                        text.push_str(&piece);
                        let shown = display_text(parser.feed(&piece));
                        relay.push(&self.env, &shown).await;
                        if !out.delta(&piece, shown).await {
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

    /// The turn's messages as the conversation keeps them (a resumed turn's user message is
    /// stored already).
    fn entries(&self, response: &AssistantResponse) -> Vec<Entry> {
        let mut answer = partial_answer(&response.message, None);
        answer.request_id = self.request_id();
        answer.tool_history = response.tool_history.clone();
        answer.payloads = response.payloads.clone();
        answer.suggested_values = response.suggested_values.clone();
        answer.suggested_actions = response.suggested_actions.clone();
        answer.approval = response.approval.clone();
        self.user_entry().into_iter().chain([answer]).collect()
    }

    fn request_id(&self) -> Option<String> {
        self.handshake
            .request
            .as_ref()
            .map(|r| r.request_id.clone())
    }

    /// The user's message as the conversation keeps it; `None` for a resumed turn (its message
    /// is stored already).
    pub fn user_entry(&self) -> Option<Entry> {
        if self.session.resumed.is_some() {
            return None;
        }
        let page = Some(self.context.current_page.as_str());
        let mut user = match &self.ask {
            Ask::Message(message) => Entry::user(message, now_ms(), page),
            Ask::Action { action, label, .. } => {
                let mut entry = Entry::user(label, now_ms(), page);
                entry.action = Some(action.clone());
                entry
            }
            Ask::Approve { label, .. } => {
                let mut entry = Entry::user(label, now_ms(), page);
                entry.action = Some("approve".into());
                entry
            }
        };
        user.id = Some(self.handshake.user_message_id.clone());
        user.request_id = self.request_id();
        Some(user)
    }

    /// A stopped turn: commits what was generated, marked `stopped`, and ends every client's
    /// stream with the `stopped` event.
    async fn keep_stopped(&self, out: &mut Output) -> bool {
        let text = out.live().map(|log| log.shown_text()).unwrap_or_default();
        let mut answer = partial_answer(&text, Some(EntryStatus::Stopped));
        answer.request_id = self.request_id();
        let entries = self.user_entry().into_iter().chain([answer]).collect();
        // A request the turn filled automatically is recorded, as with a complete answer.
        let requests = match (&self.session.resumed, &self.handshake.request) {
            (None, Some(request)) => vec![request.clone()],
            _ => Vec::new(),
        };
        let extras = Extras {
            requests,
            writing_style: self.handshake.writing_style.clone(),
        };
        let stored = match self.session.commit(&self.env, entries, extras).await {
            Ok(_) => true,
            Err(error) => {
                worker::console_error!("conversation {}: stopped turn: {error}", self.session.id);
                self.session.abort(&self.env).await;
                false
            }
        };
        out.stopped(text).await;
        stored
    }
}

/// An answer of the assistant with `text` (a partial one marked with `status`).
pub fn partial_answer(text: &str, status: Option<EntryStatus>) -> Entry {
    let mut answer = Entry::user(text, now_ms(), None);
    answer.id = ids::random_id().ok();
    answer.role = Role::Assistant;
    answer.status = status;
    answer
}

/// The model's next piece of text, unless the owner stops the turn first (`Err(Stop::Gone)`;
/// dropping the stream then closes the connection to the provider).
async fn next_unless_stopped(
    stream: &mut ModelStream,
    out: &Output,
) -> Result<Result<Option<String>, ProviderError>, Stop> {
    let Some(log) = out.live() else {
        return Ok(stream.next_text().await);
    };
    if log.is_stopped() {
        return Err(Stop::Gone);
    }
    let next = std::pin::pin!(stream.next_text());
    match select(next, log.stop_requested()).await {
        Either::Left((piece, _)) => Ok(piece),
        Either::Right(_) => Err(Stop::Gone),
    }
}

/// The payload type of the model's own context request (never shown as a card).
const CONTEXT_REQUEST: &str = "context_request";
