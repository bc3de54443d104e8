//! One accepted chat turn at the edge: call the model (or answer at once), forward its display
//! text as it arrives, let the core finish the turn, commit it on the conversation's object, and
//! send `complete`. A turn that fails is given up on the object: nothing of it is kept; one its
//! owner stops keeps the answer so far, marked `stopped`. What is
//! stored is what the server produced or validated: the state the core computed, the user's
//! message and the model's reply, never a history a client carried.

use stepwise_core::conversation::{EntryStatus, GuidedState};
use stepwise_core::llm::{ModelCall, ProviderConfig};
use stepwise_core::markers::MarkerParser;
use stepwise_core::offline;
use stepwise_core::protocol::{ChatMessage, ChatRequest, ChatResponse, Role};
use stepwise_core::turn::{self, TurnPlan, TurnStart};
use stepwise_core::workflow::WorkflowSpec;
use worker::{Env, console_error, console_log};

use super::conversation::Conversation;
use crate::platform::output::{Output, display_text};
use crate::platform::settings::Settings;
use crate::provider::Gateway;

/// The status note sent when a turn's snapshot could not be stored.
const NOT_SAVED: &str = "not saved: this turn could not be stored; refreshing may lose it";

/// A turn the core accepted, with everything needed to run it.
pub struct Turn {
    /// The workflow.
    pub spec: WorkflowSpec,
    /// The provider to call.
    pub provider: ProviderConfig,
    /// The request as it came.
    pub request: ChatRequest,
    /// Its conversation.
    pub conversation: Conversation,
    /// The Worker's settings.
    pub settings: Settings,
    /// The Worker's bindings.
    pub env: Env,
}

/// How a turn's model call ended.
enum Called {
    /// The whole answer, read by the core.
    Answered(Box<ChatResponse>),
    /// Its owner stopped it (a live turn): what was shown so far is kept.
    Stopped,
    /// The provider failed (the `error` event is sent) or the client went away: nothing kept.
    Lost,
}

impl Turn {
    /// Runs the turn, emitting its events; a provider failure ends it with an `error` event and
    /// nothing extracted is applied or persisted; a Stop keeps the answer so far, marked
    /// `stopped`. Returns whether the turn was stored.
    pub async fn run(self, start: TurnStart, out: &mut Output) -> bool {
        let (mut response, reply) = match start {
            // An inline edit that would start a conversation starts none: it stores nothing,
            // and the client keeps its fields until a turn of the model creates one.
            TurnStart::Respond(mut response) if self.conversation.is_new() => {
                response.conversation_id = None;
                out.complete(response.into()).await;
                return false;
            }
            TurnStart::Respond(response) => (response, None),
            TurnStart::CallModel(plan) => match self.call_model(&plan, out).await {
                Called::Answered(response) => {
                    let reply = response.message.clone();
                    (*response, Some(reply))
                }
                Called::Stopped => return self.keep_stopped(&plan, out).await,
                Called::Lost => {
                    self.conversation.abort(&self.env).await;
                    return false;
                }
            },
        };
        response.conversation_id = Some(self.conversation.id.clone());
        response.conversation_token = self.conversation.token.clone();
        let stored = self.persist(&response, reply).await;
        if stored {
            response.turns = Some(self.conversation.turn);
        } else {
            out.status(NOT_SAVED).await;
        }
        out.complete(response.into()).await;
        stored
    }

    /// What the turn keeps if it is cut short (stopped, or its host dies); `None` when it calls
    /// no model.
    pub fn kept_if_cut_short(&self, start: &TurnStart) -> Option<GuidedState> {
        match start {
            TurnStart::CallModel(plan) => Some(self.kept(plan)),
            TurnStart::Respond(_) => None,
        }
    }

    /// The core's [`GuidedState::before_answer`] of `plan`: the user's action applied, the
    /// history with the user's message.
    fn kept(&self, plan: &TurnPlan) -> GuidedState {
        let before = match self.conversation.is_new() {
            true => &[][..],
            false => &self.request.conversation_history[..],
        };
        GuidedState::before_answer(&self.spec.id, &plan.state, before, &self.request.message)
    }

    /// Streams the model's answer through the marker parser and lets the core finish the turn.
    /// A client that goes away from a turn streamed in its own request drops the upstream call,
    /// which closes its connection (nothing more is read, nothing of the turn is saved); a live
    /// turn does not depend on its clients, and ends early only at its owner's Stop.
    async fn call_model(&self, plan: &TurnPlan, out: &mut Output) -> Called {
        out.status("Thinking...").await;
        let call = ModelCall::text(
            &plan.system_prompt,
            &plan.messages,
            self.settings.max_tokens,
        );
        let gateway = Gateway::new(&self.env, &self.settings);
        let offline = || offline::reply(&self.spec, plan).into();
        let streamed = async {
            let opening = gateway.open(&self.provider, &call, &offline, gateway.limits());
            let Some(opened) = out.unless_stopped(opening).await else {
                return Ok(None);
            };
            let mut stream = opened?;
            let mut parser = MarkerParser::new();
            loop {
                let Some(piece) = out.unless_stopped(stream.next_text()).await else {
                    return Ok(None);
                };
                let Some(text) = piece? else {
                    break;
                };
                let shown = display_text(parser.feed(&text));
                if !out.delta(&text, shown).await {
                    return Ok(None);
                }
            }
            Ok(Some(parser))
        };
        let mut parser = match streamed.await {
            // A Stop during the last delta's send was accepted: it wins.
            Ok(_) if out.is_stopped() => return Called::Stopped,
            Ok(Some(parser)) => {
                out.answered();
                parser
            }
            Ok(None) => {
                console_log!(
                    "turn of {}: the client went away; stopped",
                    self.conversation.id
                );
                return Called::Lost;
            }
            Err(error) => {
                out.failed(Gateway::public(&self.provider.name, error))
                    .await;
                return Called::Lost;
            }
        };
        let shown = display_text(parser.end());
        out.delta("", shown).await;
        let outcome = turn::finish(&self.spec, plan, parser.finish());
        for note in &outcome.notes {
            console_log!("turn note {}: {}", note.code, note.message);
        }
        Called::Answered(Box::new(outcome.response))
    }

    /// A stopped turn: commits the user's message and what was shown of the answer, marked
    /// `stopped`, as the turn (nothing of the answer's markers is applied), and ends every
    /// client's stream with `stopped`.
    async fn keep_stopped(&self, plan: &TurnPlan, out: &mut Output) -> bool {
        let text = out.live().map(|log| log.shown_text()).unwrap_or_default();
        let state = self
            .kept(plan)
            .with_partial_answer(&text, EntryStatus::Stopped);
        let stored = match self.conversation.commit(&self.env, state).await {
            Ok(()) => true,
            Err(error) => {
                let id = &self.conversation.id;
                console_error!("conversation {id}: stopped turn: {error}");
                self.conversation.abort(&self.env).await;
                false
            }
        };
        out.stopped(text).await;
        stored
    }

    /// Commits the turn with the workflow's new state; false (and logged) when it could not.
    async fn persist(&self, response: &ChatResponse, reply: Option<String>) -> bool {
        // Stored history is what the server produced: a continuing turn's request carries the
        // stored history (`with_stored_state`); a new conversation's history starts with this
        // turn, whatever earlier messages its request brought for the model to read.
        let mut history = if self.conversation.is_new() {
            Vec::new()
        } else {
            self.request.conversation_history.clone()
        };
        if let Some(reply) = reply {
            history.push(ChatMessage::new(Role::User, self.request.message.clone()));
            history.push(ChatMessage::new(Role::Assistant, reply));
        }
        let state = GuidedState {
            workflow: self.spec.id.clone(),
            current_step: response.next_step.clone(),
            current_config: response.updated_config.clone(),
            conversation_history: history,
            skipped: response.skipped.clone(),
        };
        let saved = self.conversation.commit(&self.env, state).await;
        if let Err(error) = &saved {
            let id = &self.conversation.id;
            console_error!("conversation {id} was not stored: {error}");
            // Release the turn so the next one is not refused until the lease runs out.
            self.conversation.abort(&self.env).await;
        }
        saved.is_ok()
    }
}
