//! The turn an approval begins: the approved call runs first, exactly once (its approval was
//! stored approved when the turn began, and its result is stored as soon as it returns), with
//! `tool_start`, progress and `tool_complete` events; then the model, given the call and its
//! result as the turn's first round, says what came of it. A research job it started is offered
//! to open.

use std::time::Duration;

use stepwise_core::agent::ToolOutcome;
use stepwise_core::approval::Approval;
use stepwise_core::llm::{Round, ToolCall, ToolReply};
use stepwise_core::markers::{ActionHandler, SuggestedAction};
use stepwise_core::registry::Resolution;

use super::tools::{self, ToolContext};
use super::turn::{Answered, AssistantTurn, Stop};
use crate::handshake::relay::Relay;
use crate::platform::deadline::{now_ms, within};
use crate::platform::error::AppError;
use crate::platform::output::Output;

impl AssistantTurn {
    /// Runs approval `approval_id`'s call, then the model over its result; `label` is the
    /// user's side of the turn ("Approved: …").
    pub(super) async fn run_approved(
        &self,
        resolution: &Resolution<'_>,
        approval_id: &str,
        label: &str,
        relay: &mut Relay,
        out: &mut Output,
    ) -> Result<Answered, Stop> {
        let approval = self.approval(approval_id).map_err(Stop::Failed)?;
        let tool = approval.tool.clone();
        let arguments = approval.arguments_to_run().clone();
        out.status(&format!("Running {tool} (approved)...")).await;
        // The call runs whether or not anyone still watches: it was approved.
        out.tool_start_of(&tool, &arguments, Some(&approval.call_id))
            .await;
        let left = self.deadline_at.saturating_sub(now_ms());
        let limit = self.tool_timeout.min(Duration::from_millis(left));
        let ctx = ToolContext {
            env: &self.env,
            settings: &self.settings,
            owner: &self.owner,
        };
        let outcome = within(limit, tools::run(&ctx, &tool, &arguments, out))
            .await
            .unwrap_or(ToolOutcome::TimedOut);
        out.tool_complete(&tool, 0).await;
        // A job the call started is offered to open.
        let started = match &outcome {
            ToolOutcome::Done {
                payload: Some(data),
                ..
            } => data["research_id"].as_str().map(str::to_owned),
            _ => None,
        };
        let (content, is_error) = match outcome {
            ToolOutcome::Done { text, .. } => (text, false),
            ToolOutcome::Failed(message) => (format!("error: {message}"), true),
            ToolOutcome::TimedOut => ("error: the tool did not finish in time".to_owned(), true),
        };
        self.session
            .ran(&self.env, approval_id, &content, is_error)
            .await;
        let round = Round {
            text: String::new(),
            calls: vec![ToolCall {
                id: approval.call_id.clone(),
                name: tool.clone(),
                arguments: arguments.to_string(),
                malformed: false,
            }],
            replies: vec![ToolReply {
                call_id: approval.call_id.clone(),
                name: tool.clone(),
                content: content.clone(),
                is_error,
            }],
        };
        // The approved call is the first of the turn's tool history (the agent numbers the
        // model's own calls after it).
        let mut response = self
            .converse(resolution, label, relay, out, Some(round))
            .await?;
        if let Some(id) = started {
            response.suggested_actions.push(SuggestedAction {
                label: "Open the research".into(),
                action: "open_research".into(),
                handler: ActionHandler::Client,
                target: Some(id),
            });
        }
        Ok(Answered::Answer(Box::new(response)))
    }

    /// The approval `approval_id` as the conversation held it when the turn began.
    fn approval(&self, approval_id: &str) -> Result<Approval, AppError> {
        self.session
            .before
            .entries
            .iter()
            .filter_map(|e| e.approval.as_ref())
            .find(|a| a.id == approval_id)
            .cloned()
            .ok_or_else(|| AppError::internal(&"an approved turn without its approval"))
    }
}
