//! One accepted chat turn at the edge: call the model (or answer at once), forward its display
//! text as it arrives, let the core finish the turn, store the snapshot, and send `complete`.

use stepwise_core::llm::{ModelCall, ProviderConfig};
use stepwise_core::markers::{Event, MarkerParser};
use stepwise_core::offline;
use stepwise_core::protocol::{ChatMessage, ChatRequest, ChatResponse, Role};
use stepwise_core::turn::{self, TurnPlan, TurnStart};
use stepwise_core::workflow::WorkflowSpec;
use worker::{Env, console_error, console_log};

use super::conversation::{Conversation, Snapshot};
use super::output::Output;
use crate::platform::kv::Kv;
use crate::platform::owner::Owner;
use crate::platform::settings::Settings;
use crate::provider::Gateway;

/// The status note sent when a turn's snapshot could not be stored.
const NOT_SAVED: &str = "not saved: this turn could not be stored; refreshing may lose it";

/// A turn the core accepted, with everything needed to run it.
pub struct Turn {
    /// Whose turn it is.
    pub owner: Owner,
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

impl Turn {
    /// Runs the turn, emitting its events; a provider failure ends it with an `error` event and
    /// nothing extracted is applied or persisted. Returns whether the turn was stored.
    pub async fn run(self, start: TurnStart, out: &mut Output) -> bool {
        let (mut response, reply) = match start {
            TurnStart::Respond(response) => (response, None),
            TurnStart::CallModel(plan) => match self.call_model(&plan, out).await {
                Some(response) => {
                    let reply = response.message.clone();
                    (response, Some(reply))
                }
                None => return false,
            },
        };
        response.conversation_id = Some(self.conversation.id.clone());
        response.conversation_token = self.conversation.token.clone();
        let stored = self.persist(&response, reply).await;
        if !stored {
            out.status(NOT_SAVED).await;
        }
        out.complete(response).await;
        stored
    }

    /// Streams the model's answer through the marker parser and lets the core finish the turn;
    /// `None` when the provider failed (the `error` event is already sent) or the client went
    /// away (the upstream call is then dropped, which closes its connection: nothing more is
    /// read, and nothing of the turn is saved).
    async fn call_model(&self, plan: &TurnPlan, out: &mut Output) -> Option<ChatResponse> {
        out.status("Thinking...").await;
        let call = ModelCall::text(
            &plan.system_prompt,
            &plan.messages,
            self.settings.max_tokens,
        );
        let gateway = Gateway::new(&self.env, &self.settings);
        let offline = || offline::reply(&self.spec, plan);
        let streamed = async {
            let mut stream = gateway
                .open(&self.provider, &call, &offline, gateway.limits())
                .await?;
            let mut parser = MarkerParser::new();
            while let Some(text) = stream.next_text().await? {
                let shown = display_text(parser.feed(&text));
                if !out.delta(&text, shown).await {
                    return Ok(None);
                }
            }
            Ok(Some(parser))
        };
        let mut parser = match streamed.await {
            Ok(Some(parser)) => parser,
            Ok(None) => {
                console_log!(
                    "turn of {}: the client went away; stopped",
                    self.conversation.id
                );
                return None;
            }
            Err(error) => {
                out.failed(Gateway::public(&self.provider.name, error))
                    .await;
                return None;
            }
        };
        let shown = display_text(parser.end());
        out.delta("", shown).await;
        let outcome = turn::finish(&self.spec, plan, parser.finish());
        for note in &outcome.notes {
            console_log!("turn note {}: {}", note.code, note.message);
        }
        Some(outcome.response)
    }

    /// Stores the conversation's snapshot; false (and logged) when KV refused it.
    async fn persist(&self, response: &ChatResponse, reply: Option<String>) -> bool {
        let mut history = self.request.conversation_history.clone();
        if let Some(reply) = reply {
            history.push(ChatMessage {
                role: Role::User,
                content: self.request.message.clone(),
            });
            history.push(ChatMessage {
                role: Role::Assistant,
                content: reply,
            });
        }
        let snapshot = Snapshot {
            owner: self.owner.id.clone(),
            token_hash: self.conversation.token_hash.clone(),
            workflow: self.spec.id.clone(),
            current_step: response.next_step.clone(),
            current_config: response.updated_config.clone(),
            conversation_history: history,
            skipped: response.skipped.clone(),
            turns: self.conversation.turns() + 1,
        };
        let saved = match Kv::new(&self.env) {
            Ok(kv) => self.conversation.save(&kv, &snapshot).await,
            Err(error) => Err(error),
        };
        if let Err(error) = &saved {
            let id = &self.conversation.id;
            console_error!("conversation {id} was not stored: {error}");
        }
        saved.is_ok()
    }
}

fn display_text(events: std::vec::Drain<'_, Event>) -> String {
    events
        .filter_map(|e| match e {
            Event::Text { text } => Some(text),
            _ => None,
        })
        .collect()
}
