//! The research job as a protocol: every change to a job is a [`Command`] given to [`handle`],
//! which applies the lifecycle's rules and returns the effects to perform. The job's driver (a
//! Durable Object at the edge, the tests here) only loads the record, hands the command over,
//! saves the record and performs the effects.

use serde::{Deserialize, Serialize};

use super::{
    CallTask, ConfirmAction, Effect, ProviderOutcome, Research, ResearchError, ResearchEvent,
    ResearchStatus, ShareInfo, synthesis_prompt,
};

/// A change asked of a job, by the HTTP handlers, the queue consumer or the job's alarm.
/// Externally tagged (`{"start": {...}}`): an internally tagged enum would buffer every
/// command, records included, through serde's generic `Content` tree (bundle size).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Command {
    /// Store a new draft (built and validated by [`Research::draft`]).
    Create {
        /// The draft.
        research: Box<Research>,
    },
    /// Replace the whole record (an admin's restore or migration), whatever the job's state.
    Import {
        /// The record.
        research: Box<Research>,
    },
    /// Replace a draft's fields (title, prompt, providers, external reports); the id and the
    /// creation time stay. Refused once the job has started.
    EditDraft {
        /// The edited draft (built and validated by [`Research::draft`]).
        draft: Box<Research>,
    },
    /// Start the draft (phase 1); `configured` are the provider names the server knows.
    Start {
        /// Configured provider names.
        configured: Vec<String>,
    },
    /// The user's answer to a partial failure (phase 5).
    Confirm {
        /// Proceed, retry or cancel.
        action: ConfirmAction,
    },
    /// Retry from `failed` (phase 6).
    Retry,
    /// A queue consumer asks to make a queued call; only the first delivery of an open call
    /// gets [`Effect::MakeCall`], later ones get no effect and drop the message.
    Claim {
        /// Provider call or synthesis.
        task: CallTask,
        /// The provider.
        provider: String,
        /// The attempt the message was queued for.
        attempt: u32,
    },
    /// A provider call ended (phase 2), then completion is checked (phase 3).
    CallFinished {
        /// The provider.
        provider: String,
        /// The attempt that ended.
        attempt: u32,
        /// Its answer or failure.
        outcome: ProviderOutcome,
    },
    /// The synthesis call ended (phase 4).
    SynthesisFinished {
        /// The attempt that ended.
        attempt: u32,
        /// The synthesis or its failure.
        outcome: ProviderOutcome,
    },
    /// The job's alarm rang: calls open for `timeout_ms` or longer fail with code `timeout`.
    Timeout {
        /// How long a call may stay open, in ms.
        timeout_ms: u64,
    },
    /// The driver's answer to [`Effect::Publish`]: a fresh share id and its public URL. A job
    /// published before keeps its first share id.
    Publish {
        /// A new random share id.
        share_id: String,
        /// The public base URL of share links (no trailing slash).
        base_url: String,
    },
}

impl Command {
    /// The command's name, for logs.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Create { .. } => "create",
            Command::Import { .. } => "import",
            Command::EditDraft { .. } => "edit_draft",
            Command::Start { .. } => "start",
            Command::Confirm { .. } => "confirm",
            Command::Retry => "retry",
            Command::Claim { .. } => "claim",
            Command::CallFinished { .. } => "call_finished",
            Command::SynthesisFinished { .. } => "synthesis_finished",
            Command::Timeout { .. } => "timeout",
            Command::Publish { .. } => "publish",
        }
    }
}

/// Applies a command to a job's record (`None` before the job exists) at time `now` (ms since
/// the epoch). A refused command returns an error and changes nothing; an accepted one returns
/// the effects to perform, with at least one whenever it changed the record, so a driver need
/// save only when the list is not empty. Stale or repeated deliveries (an old attempt, a
/// second result for one attempt, a claimed call) change nothing and return no effects.
///
/// ```
/// use stepwise_core::research::{handle, Command, Effect, Research, ResearchStatus};
/// let draft = Research::draft("r1".into(), "T".into(), "Why?".into(),
///     vec!["a".into()], "a".into(), vec![], 0).unwrap();
/// let mut record = None;
/// handle(&mut record, Command::Create { research: Box::new(draft) }, 0).unwrap();
/// let effects = handle(&mut record, Command::Start { configured: vec!["a".into()] }, 5).unwrap();
/// assert_eq!(record.as_ref().unwrap().status, ResearchStatus::Processing);
/// assert!(effects.contains(&Effect::CallProvider { provider: "a".into(), attempt: 1 }));
/// ```
pub fn handle(
    record: &mut Option<Research>,
    command: Command,
    now: u64,
) -> Result<Vec<Effect>, ResearchError> {
    let before = record.as_ref().map(|job| job.status);
    let mut effects = match (record.as_mut(), command) {
        (_, Command::Import { mut research }) => {
            // A restored record starts with no claimed synthesis: no consumer holds its call.
            research.synthesis_claimed = 0;
            *record = Some(*research);
            vec![Effect::Index]
        }
        (None, Command::Create { research }) => {
            *record = Some(*research);
            vec![Effect::Index]
        }
        (Some(_), Command::Create { .. }) => return Err(ResearchError::Exists),
        (None, _) => return Err(ResearchError::NotFound),
        (Some(job), Command::EditDraft { draft }) => {
            job.edit_draft(*draft)?;
            vec![Effect::Index]
        }
        (Some(job), Command::Start { configured }) => job.start(&configured, now)?,
        (Some(job), Command::Confirm { action }) => job.confirm(action, now)?,
        (Some(job), Command::Retry) => job.retry(now)?,
        (
            Some(job),
            Command::Claim {
                task,
                provider,
                attempt,
            },
        ) => job.claim(task, provider, attempt, now),
        (
            Some(job),
            Command::CallFinished {
                provider,
                attempt,
                outcome,
            },
        ) => job.call_finished(&provider, attempt, outcome, now),
        (Some(job), Command::SynthesisFinished { attempt, outcome }) => {
            job.synthesis_finished(attempt, outcome, now)
        }
        (Some(job), Command::Timeout { timeout_ms }) => job.fail_overdue(now, timeout_ms),
        (Some(job), Command::Publish { share_id, base_url }) => {
            job.publish(share_id, &base_url, now)
        }
    };
    let after = record.as_ref().map(|job| job.status);
    if after != before && !effects.contains(&Effect::Index) {
        effects.push(Effect::Index);
    }
    Ok(effects)
}

impl Research {
    /// Lets the first delivery of an open call through, with the prompt to send.
    fn claim(&mut self, task: CallTask, provider: String, attempt: u32, now: u64) -> Vec<Effect> {
        let (mut effects, prompt) = match task {
            CallTask::Provider => {
                let effects = self.call_started(&provider, attempt, now);
                if effects.is_empty() {
                    return effects;
                }
                (effects, self.prompt.clone())
            }
            CallTask::Synthesis => {
                let open = self.status == ResearchStatus::Synthesizing
                    && self.synthesis_attempt == attempt
                    && self.synthesis_claimed < attempt
                    && provider == self.synthesis_llm;
                if !open {
                    return Vec::new();
                }
                self.synthesis_claimed = attempt;
                (Vec::new(), synthesis_prompt(self))
            }
        };
        effects.push(Effect::MakeCall {
            task,
            provider,
            attempt,
            prompt,
        });
        effects
    }

    /// Replaces a draft's fields, keeping its id and creation time.
    fn edit_draft(&mut self, draft: Research) -> Result<(), ResearchError> {
        self.expect(ResearchStatus::Draft, "edit")?;
        *self = Research {
            id: std::mem::take(&mut self.id),
            created_at: self.created_at,
            ..draft
        };
        Ok(())
    }

    /// Names the completed job's share page (keeping a share id it already had) and asks for
    /// the page to be written.
    fn publish(&mut self, share_id: String, base_url: &str, now: u64) -> Vec<Effect> {
        if self.status != ResearchStatus::Completed {
            return Vec::new();
        }
        let share_id = match &self.share_info {
            Some(share) => share.share_id.clone(),
            None => share_id,
        };
        let url = format!("{}/share/{share_id}", base_url.trim_end_matches('/'));
        self.share_info = Some(ShareInfo {
            share_id: share_id.clone(),
            url: url.clone(),
        });
        vec![
            Effect::WriteSharePage,
            Effect::Emit(ResearchEvent::Published {
                research_id: self.id.clone(),
                share_id,
                url,
                at: now,
            }),
        ]
    }
}
