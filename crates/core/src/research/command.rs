//! The research job as a protocol: every change to a job is a [`Command`] from a [`Caller`],
//! given to [`handle`], which checks who may do it, applies the lifecycle's rules and returns
//! what changed and the effects to perform. The job's driver (a Durable Object at the edge, the
//! tests here) only loads the record, hands the command over, saves the record when it changed
//! and performs the effects.

use serde::{Deserialize, Serialize};

use super::job::{check_title, validate};
use super::{
    CallTask, Caller, ConfirmAction, DraftFields, Effect, Lifetimes, ProviderOutcome, Research,
    ResearchError, ResearchEvent, ResearchStatus, ShareInfo, synthesis_prompt,
};

/// A change asked of a job. Externally tagged (`{"start": {...}}`): an internally tagged enum
/// would buffer every command, records included, through serde's `Content` tree (bundle size).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Command {
    /// Store a new draft (built and validated by [`Research::draft`]); its owner only.
    Create {
        /// The draft.
        research: Box<Research>,
    },
    /// Replace the whole record (an admin's restore or migration), whatever the job's state;
    /// the record is validated first.
    Import {
        /// The record.
        research: Box<Research>,
    },
    /// Replace a draft's fields; the id, owner and creation time stay. Refused once started.
    EditDraft {
        /// The new fields.
        fields: DraftFields,
    },
    /// Set the title the synthesis model wrote, once the draft was accepted.
    SetTitle {
        /// The title (one line, at most 120 characters).
        title: String,
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
    /// Publish the completed job's read-only report (the owner's choice), or extend a published
    /// one's life. `share_id` is a fresh random id, used when the job has no live share.
    Share {
        /// A new random share id.
        share_id: String,
        /// The public base URL of share links.
        base_url: String,
        /// How long the page is served, in ms.
        ttl_ms: u64,
    },
    /// Withdraw the published report.
    Unshare,
    /// Delete the job: record, index entry and share page.
    Delete,
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
    /// The job's alarm rang: overdue calls fail with `timeout`, an expired share is dropped,
    /// and an expired draft or a finished job past its retention is deleted.
    Timeout {
        /// The lifetimes in force.
        lifetimes: Lifetimes,
    },
    /// A command that calls models, paid for before it was sent: `calls` are the calls the
    /// sender read from the job and charged ([`Research::calls_for`]). The job accepts it only
    /// if the command would make exactly those calls now; when the job changed in between (a
    /// draft edited while it was being started) it is refused with
    /// [`ResearchError::Changed`], nothing happens, and the sender returns the charge.
    Paid {
        /// The command.
        command: Box<Command>,
        /// The calls paid for, provider names as `calls_for` gives them.
        calls: Vec<String>,
    },
}

impl Command {
    /// The command's name, for logs.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Create { .. } => "create",
            Command::Import { .. } => "import",
            Command::EditDraft { .. } => "edit_draft",
            Command::SetTitle { .. } => "set_title",
            Command::Start { .. } => "start",
            Command::Confirm { .. } => "confirm",
            Command::Retry => "retry",
            Command::Share { .. } => "share",
            Command::Unshare => "unshare",
            Command::Delete => "delete",
            Command::Claim { .. } => "claim",
            Command::CallFinished { .. } => "call_finished",
            Command::SynthesisFinished { .. } => "synthesis_finished",
            Command::Timeout { .. } => "timeout",
            Command::Paid { command, .. } => command.name(),
        }
    }
}

/// What [`handle`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handled {
    /// Whether the record changed (or was created or deleted): the driver saves it then.
    pub changed: bool,
    /// The effects to perform, after the save.
    pub effects: Vec<Effect>,
}

/// Applies `caller`'s command to a job's record (`None` before the job exists, and after it was
/// deleted) at time `now` (ms since the epoch). A refused command returns an error and changes
/// nothing; a caller who may not act on the job gets [`ResearchError::NotFound`], exactly as
/// for a job that does not exist. Stale or repeated deliveries (an old attempt, a second result
/// for one attempt, a claimed call) change nothing and return no effects.
///
/// ```
/// use stepwise_core::research::{handle, Caller, Command, DraftFields, Effect, Research, ResearchStatus};
/// let fields = DraftFields { title: "T".into(), prompt: "Why?".into(),
///     selected_llms: vec!["a".into()], synthesis_llm: "a".into(), external_reports: vec![], stream_id: None };
/// let draft = Research::draft("r1".into(), "me".into(), fields, 0).unwrap();
/// let me = Caller::Owner("me".into());
/// let mut record = None;
/// handle(&mut record, &me, Command::Create { research: Box::new(draft) }, 0).unwrap();
/// let start = Command::Start { configured: vec!["a".into()] };
/// let someone = Caller::Owner("someone else".into());
/// assert_eq!(handle(&mut record, &someone, start.clone(), 5).unwrap_err().code(), "not_found");
/// let handled = handle(&mut record, &me, start, 5).unwrap();
/// assert_eq!(record.as_ref().unwrap().status, ResearchStatus::Processing);
/// assert!(handled.effects.contains(&Effect::CallProvider { provider: "a".into(), attempt: 1 }));
/// ```
pub fn handle(
    record: &mut Option<Research>,
    caller: &Caller,
    command: Command,
    now: u64,
) -> Result<Handled, ResearchError> {
    if let Command::Paid { command, calls } = command {
        authorize(record.as_ref(), caller, &command)?;
        if let Some(job) = record.as_ref()
            && job.calls_for(&command) != calls
        {
            return Err(ResearchError::Changed);
        }
        return handle(record, caller, *command, now);
    }
    authorize(record.as_ref(), caller, &command)?;
    let before = record.clone();
    let mut erase = false;
    let mut effects = match (record.as_mut(), command) {
        (_, Command::Import { mut research }) => {
            validate_record(&research)?;
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
        (Some(_), Command::Paid { .. }) => unreachable!("a paid command is unwrapped above"),
        (Some(job), Command::EditDraft { fields }) => {
            job.edit_draft(fields)?;
            Vec::new()
        }
        (Some(job), Command::SetTitle { title }) => {
            check_title(&title)?;
            job.title = title;
            // The generated title completes the job's creation: its list entry shows it.
            vec![Effect::Index]
        }
        (Some(job), Command::Start { configured }) => job.start(&configured, now)?,
        (Some(job), Command::Confirm { action }) => job.confirm(action, now)?,
        (Some(job), Command::Retry) => job.retry(now)?,
        (
            Some(job),
            Command::Share {
                share_id,
                base_url,
                ttl_ms,
            },
        ) => job.share(share_id, &base_url, ttl_ms, now)?,
        (Some(job), Command::Unshare) => job
            .share_info
            .take()
            .map(|share| Effect::DeleteSharePage {
                share_id: share.share_id,
            })
            .into_iter()
            .collect(),
        (Some(_), Command::Delete) => {
            erase = true;
            Vec::new()
        }
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
        (Some(job), Command::Timeout { lifetimes }) => {
            let effects = job.fail_overdue(now, lifetimes.call_timeout_ms);
            if job.share_info.as_ref().is_some_and(|s| s.expires_at <= now) {
                job.share_info = None; // the page itself expires in storage
            }
            erase = job.expires_at(&lifetimes).is_some_and(|at| at <= now);
            effects
        }
    };
    if erase && let Some(research) = record.take() {
        effects.push(Effect::Erase {
            research: Box::new(research),
        });
    }
    let finished = |job: &Option<Research>| {
        job.as_ref()
            .is_some_and(|j| matches!(j.status, ResearchStatus::Completed | ResearchStatus::Failed))
    };
    let status = |job: &Option<Research>| job.as_ref().map(|j| j.status);
    if finished(record) && status(record) != status(&before) && !effects.contains(&Effect::Index) {
        effects.push(Effect::Index);
    }
    Ok(Handled {
        changed: *record != before,
        effects,
    })
}

/// The job, for a caller who may read it: its owner, the Worker or an admin; anyone else gets
/// [`ResearchError::NotFound`].
pub fn read<'a>(
    record: &'a Option<Research>,
    caller: &Caller,
) -> Result<&'a Research, ResearchError> {
    match (record, caller) {
        (Some(job), Caller::Owner(owner)) if job.owner == *owner => Ok(job),
        (Some(job), Caller::System | Caller::Admin) => Ok(job),
        _ => Err(ResearchError::NotFound),
    }
}

/// Who may give which command: owners their own jobs' user commands, the Worker the calls'
/// outcomes and the alarm, admins imports.
fn authorize(
    record: Option<&Research>,
    caller: &Caller,
    command: &Command,
) -> Result<(), ResearchError> {
    let allowed = match (command, caller) {
        (Command::Import { .. }, Caller::Admin) => true,
        (Command::Create { research }, Caller::Owner(owner)) => research.owner == *owner,
        (
            Command::Claim { .. }
            | Command::CallFinished { .. }
            | Command::SynthesisFinished { .. }
            | Command::Timeout { .. },
            Caller::System,
        ) => true,
        (
            Command::Import { .. }
            | Command::Create { .. }
            | Command::Claim { .. }
            | Command::CallFinished { .. }
            | Command::SynthesisFinished { .. }
            | Command::Timeout { .. },
            _,
        ) => false,
        (_, Caller::Owner(owner)) => record.is_none_or(|job| job.owner == *owner),
        (_, Caller::System | Caller::Admin) => false,
    };
    if allowed {
        Ok(())
    } else {
        Err(ResearchError::NotFound)
    }
}

/// Checks a record an admin imports: an owner, valid draft fields, and a share URL that is
/// `http:` or `https:` with a share id like the server's.
fn validate_record(research: &Research) -> Result<(), ResearchError> {
    let invalid = |reason: &str| Err(ResearchError::InvalidRecord(reason.to_owned()));
    if research.owner.is_empty() {
        return invalid("the record has no owner");
    }
    let fields = DraftFields {
        title: research.title.clone(),
        prompt: research.prompt.clone(),
        selected_llms: research.selected_llms.clone(),
        synthesis_llm: research.synthesis_llm.clone(),
        external_reports: research.external_reports.clone(),
        stream_id: research.stream_id.clone(),
    };
    validate(&fields).map_err(|e| ResearchError::InvalidRecord(e.to_string()))?;
    if let Some(share) = &research.share_info {
        let web = share.url.starts_with("https://") || share.url.starts_with("http://");
        let id = share.share_id.len() == 32
            && share
                .share_id
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !web || !id || share.url.chars().any(char::is_control) {
            return invalid("share_info needs a 32-hex-digit share id and an http(s) URL");
        }
    }
    Ok(())
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

    /// Replaces a draft's fields, keeping its id, owner and creation time.
    fn edit_draft(&mut self, fields: DraftFields) -> Result<(), ResearchError> {
        self.expect(ResearchStatus::Draft, "edit")?;
        validate(&fields)?;
        self.title = fields.title;
        self.prompt = fields.prompt;
        self.selected_llms = fields.selected_llms;
        self.synthesis_llm = fields.synthesis_llm;
        self.external_reports = fields.external_reports;
        self.stream_id = fields.stream_id;
        Ok(())
    }

    /// Publishes the completed job's report for `ttl_ms` (a live share keeps its id and gets a
    /// new expiry); the page is (re)written, and a first publication is announced.
    fn share(
        &mut self,
        share_id: String,
        base_url: &str,
        ttl_ms: u64,
        now: u64,
    ) -> Result<Vec<Effect>, ResearchError> {
        self.expect(ResearchStatus::Completed, "share")?;
        let expires_at = now.saturating_add(ttl_ms);
        let mut effects = vec![Effect::WriteSharePage];
        match &mut self.share_info {
            Some(share) if share.expires_at > now => share.expires_at = expires_at,
            _ => {
                let url = format!("{}/share/{share_id}", base_url.trim_end_matches('/'));
                effects.push(Effect::Emit(ResearchEvent::Published {
                    research_id: self.id.clone(),
                    share_id: share_id.clone(),
                    url: url.clone(),
                    expires_at,
                    at: now,
                }));
                self.share_info = Some(ShareInfo {
                    share_id,
                    url,
                    published_at: now,
                    expires_at,
                });
            }
        }
        Ok(effects)
    }
}
