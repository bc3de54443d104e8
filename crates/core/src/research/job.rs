//! The research job's transitions (research-lifecycle.md phases 1-6), reached through
//! [`handle`](super::handle). Each returns the effects to perform; refused requests return an
//! error and change nothing; stale or repeated deliveries (an old attempt, a second result for
//! the same attempt) change nothing and return no effects.

use super::types::*;
use crate::llm::{ErrorCode, ProviderError};

/// Longest prompt, in characters.
pub const MAX_PROMPT_CHARS: usize = 20_000;
/// Most providers one job may ask.
pub const MAX_PROVIDERS: usize = 16;
/// Most external reports.
pub const MAX_EXTERNAL_REPORTS: usize = 10;
/// Longest external report, in characters.
pub const MAX_EXTERNAL_REPORT_CHARS: usize = 100_000;
/// Most characters of all external reports together.
pub const MAX_EXTERNAL_TOTAL_CHARS: usize = 200_000;
/// Longest title, in characters.
pub const MAX_TITLE_CHARS: usize = 120;

impl Research {
    /// A new draft (phase 1) of `owner`, validated.
    ///
    /// ```
    /// use stepwise_core::research::{DraftFields, Research, ResearchStatus};
    /// let fields = DraftFields { title: "T".into(), prompt: "Why?".into(),
    ///     selected_llms: vec!["a".into()], synthesis_llm: "a".into(), external_reports: vec![], stream_id: None };
    /// let job = Research::draft("r1".into(), "owner-1".into(), fields, 0).unwrap();
    /// assert_eq!((job.status, job.owner.as_str()), (ResearchStatus::Draft, "owner-1"));
    /// ```
    pub fn draft(
        id: String,
        owner: String,
        fields: DraftFields,
        now: u64,
    ) -> Result<Research, ResearchError> {
        validate(&fields)?;
        Ok(Research {
            id,
            owner,
            title: fields.title,
            prompt: fields.prompt,
            selected_llms: fields.selected_llms,
            synthesis_llm: fields.synthesis_llm,
            external_reports: fields.external_reports,
            status: ResearchStatus::Draft,
            created_at: now,
            started_at: None,
            finished_at: None,
            llm_results: Vec::new(),
            partial_failure: None,
            retry_count: 0,
            synthesized_result: None,
            points_of_interest: Vec::new(),
            stream_id: fields.stream_id,
            synthesis_error: None,
            synthesis_attempt: 0,
            synthesis_dispatched_at: None,
            synthesis_claimed: 0,
            error: None,
            share_info: None,
        })
    }

    /// Starts a draft (phase 1): every selected provider, and the synthesis provider, must be
    /// configured. Sends one call per provider.
    pub(super) fn start(
        &mut self,
        configured: &[String],
        now: u64,
    ) -> Result<Vec<Effect>, ResearchError> {
        self.expect(ResearchStatus::Draft, "start")?;
        if self.selected_llms.is_empty() {
            return Err(ResearchError::NoProvidersSelected);
        }
        let missing = self
            .selected_llms
            .iter()
            .chain([&self.synthesis_llm])
            .find(|p| !configured.contains(p));
        if let Some(provider) = missing {
            return Err(ResearchError::ProviderNotConfigured(provider.clone()));
        }
        let mut effects = Vec::new();
        self.started_at = Some(now);
        self.set_status(ResearchStatus::Processing, now, &mut effects);
        self.llm_results = self
            .selected_llms
            .iter()
            .map(|provider| LlmResult {
                provider: provider.clone(),
                status: LlmStatus::Pending,
                attempt: 0,
                dispatched_at: now,
                result: None,
                error: None,
                finished_at: None,
            })
            .collect();
        for index in 0..self.llm_results.len() {
            self.dispatch(index, now, &mut effects);
        }
        Ok(effects)
    }

    /// A provider call began (the queue consumer picked it up).
    pub(super) fn call_started(&mut self, provider: &str, attempt: u32, now: u64) -> Vec<Effect> {
        let mut effects = Vec::new();
        if let Some(result) = find_call(&mut self.llm_results, provider, attempt)
            .filter(|r| r.status == LlmStatus::Pending)
        {
            result.status = LlmStatus::Processing;
            let event = provider_event(&self.id, result, now);
            effects.push(Effect::Emit(event));
            // "retrying → processing": the retried calls are under way.
            if self.status == ResearchStatus::Retrying {
                self.set_status(ResearchStatus::Processing, now, &mut effects);
            }
        }
        effects
    }

    /// A provider call ended (phase 2), then completion is checked (phase 3).
    pub(super) fn call_finished(
        &mut self,
        provider: &str,
        attempt: u32,
        outcome: ProviderOutcome,
        now: u64,
    ) -> Vec<Effect> {
        let mut effects = Vec::new();
        let open = matches!(
            self.status,
            ResearchStatus::Processing | ResearchStatus::Retrying
        );
        let Some(result) = find_call(&mut self.llm_results, provider, attempt)
            .filter(|r| matches!(r.status, LlmStatus::Pending | LlmStatus::Processing))
        else {
            return effects;
        };
        match outcome {
            ProviderOutcome::Completed { text } => {
                result.status = LlmStatus::Completed;
                result.result = Some(text);
            }
            ProviderOutcome::Failed { code, message } => {
                result.status = LlmStatus::Failed;
                result.error = Some(ProviderError::new(code, message));
            }
        }
        result.finished_at = Some(now);
        let event = provider_event(&self.id, result, now);
        effects.push(Effect::Emit(event));
        if open {
            self.check_completion(now, &mut effects);
        }
        effects
    }

    /// The synthesis call ended (phase 4).
    pub(super) fn synthesis_finished(
        &mut self,
        attempt: u32,
        outcome: ProviderOutcome,
        now: u64,
    ) -> Vec<Effect> {
        let mut effects = Vec::new();
        if self.status != ResearchStatus::Synthesizing || attempt != self.synthesis_attempt {
            return effects;
        }
        self.synthesis_dispatched_at = None;
        match outcome {
            ProviderOutcome::Completed { text } => {
                let parts = super::split_synthesis(&text);
                self.synthesized_result = Some(parts.summary);
                self.points_of_interest = parts.points_of_interest;
                self.synthesis_error = None;
                self.complete(now, &mut effects);
            }
            ProviderOutcome::Failed { message, .. } => {
                self.fail(format!("Synthesis failed: {message}"), now, &mut effects);
                self.synthesis_error = Some(message);
            }
        }
        effects
    }

    /// The user's answer to a partial failure (phase 5).
    pub(super) fn confirm(
        &mut self,
        action: ConfirmAction,
        now: u64,
    ) -> Result<Vec<Effect>, ResearchError> {
        self.expect(ResearchStatus::AwaitingConfirmation, "confirm")?;
        let mut effects = Vec::new();
        match action {
            ConfirmAction::Proceed => self.synthesize_or_complete(now, &mut effects),
            ConfirmAction::Retry => self.retry_failed_providers(now, &mut effects),
            ConfirmAction::Cancel => self.fail("Cancelled by user".into(), now, &mut effects),
        }
        Ok(effects)
    }

    /// `POST /research/:id/retry` from `failed` (phase 6): failed providers are called again (as
    /// in phase 5); else a failed synthesis runs again; else the job is completed (idempotent).
    /// A synthesis retry counts against the same limit as provider retries.
    pub(super) fn retry(&mut self, now: u64) -> Result<Vec<Effect>, ResearchError> {
        self.expect(ResearchStatus::Failed, "retry")?;
        let mut effects = Vec::new();
        if self
            .llm_results
            .iter()
            .any(|r| r.status == LlmStatus::Failed)
        {
            self.retry_failed_providers(now, &mut effects);
        } else if self.synthesis_error.is_some() {
            if self.retry_count >= MAX_RETRIES {
                self.fail("Max retries exceeded".into(), now, &mut effects);
                return Ok(effects);
            }
            self.retry_count += 1;
            self.error = None;
            self.finished_at = None;
            self.run_synthesis(now, &mut effects);
        } else {
            self.error = None;
            self.complete(now, &mut effects);
        }
        Ok(effects)
    }

    /// Fails every call (provider or synthesis) sent at least `timeout` ms ago and still open,
    /// with code `timeout`. Called from the job's alarm.
    pub(super) fn fail_overdue(&mut self, now: u64, timeout: u64) -> Vec<Effect> {
        let mut effects = Vec::new();
        let overdue: Vec<(String, u32)> = self
            .llm_results
            .iter()
            .filter(|r| {
                matches!(r.status, LlmStatus::Pending | LlmStatus::Processing)
                    && r.dispatched_at + timeout <= now
            })
            .map(|r| (r.provider.clone(), r.attempt))
            .collect();
        let message = format!("no answer within {} s", timeout / 1000);
        for (provider, attempt) in overdue {
            let outcome = ProviderOutcome::failed(ErrorCode::Timeout, message.clone());
            effects.extend(self.call_finished(&provider, attempt, outcome, now));
        }
        if self
            .synthesis_dispatched_at
            .is_some_and(|at| at + timeout <= now)
        {
            let outcome = ProviderOutcome::failed(ErrorCode::Timeout, message);
            effects.extend(self.synthesis_finished(self.synthesis_attempt, outcome, now));
        }
        effects
    }

    /// When the alarm should next fire: the earliest deadline of an open call, the expiry of a
    /// share or a draft, or the end of a finished job's retention.
    pub fn next_deadline(&self, lifetimes: &Lifetimes) -> Option<u64> {
        let timeout = lifetimes.call_timeout_ms;
        let calls = self
            .llm_results
            .iter()
            .filter(|r| matches!(r.status, LlmStatus::Pending | LlmStatus::Processing))
            .map(|r| r.dispatched_at + timeout);
        calls
            .chain(self.synthesis_dispatched_at.map(|at| at + timeout))
            .chain(self.share_info.as_ref().map(|share| share.expires_at))
            .chain(self.expires_at(lifetimes))
            .min()
    }

    /// When the job itself is deleted: a draft `draft_ttl_ms` after its creation, a completed or
    /// failed job `retention_ms` after it finished; never while it runs.
    pub fn expires_at(&self, lifetimes: &Lifetimes) -> Option<u64> {
        match self.status {
            ResearchStatus::Draft => Some(self.created_at.saturating_add(lifetimes.draft_ttl_ms)),
            ResearchStatus::Completed | ResearchStatus::Failed => {
                let finished = self.finished_at.unwrap_or(self.created_at);
                Some(finished.saturating_add(lifetimes.retention_ms))
            }
            _ => None,
        }
    }

    /// The providers a command will call if accepted, the synthesis provider included when it
    /// may run: what the spending guard counts before the command is sent. A start counts all
    /// of its calls up front; a retry counts the failed providers and the synthesis.
    ///
    /// ```
    /// use stepwise_core::research::{Command, DraftFields, Research};
    /// let fields = DraftFields { title: "T".into(), prompt: "Why?".into(),
    ///     selected_llms: vec!["a".into(), "b".into()], synthesis_llm: "s".into(), external_reports: vec![], stream_id: None };
    /// let job = Research::draft("r1".into(), "me".into(), fields, 0).unwrap();
    /// assert_eq!(job.calls_for(&Command::Start { configured: vec![] }), ["a", "b", "s"]);
    /// assert!(job.calls_for(&Command::Retry).is_empty());
    /// ```
    pub fn calls_for(&self, command: &super::Command) -> Vec<&str> {
        use super::Command;
        let synthesis = std::iter::once(self.synthesis_llm.as_str());
        let failed = || {
            self.llm_results
                .iter()
                .filter(|r| r.status == LlmStatus::Failed)
                .map(|r| r.provider.as_str())
        };
        match (command, self.status) {
            (Command::Start { .. }, ResearchStatus::Draft) => self
                .selected_llms
                .iter()
                .map(String::as_str)
                .chain(synthesis)
                .collect(),
            (
                Command::Confirm {
                    action: ConfirmAction::Proceed,
                },
                ResearchStatus::AwaitingConfirmation,
            ) => synthesis.collect(),
            (
                Command::Confirm {
                    action: ConfirmAction::Retry,
                },
                ResearchStatus::AwaitingConfirmation,
            ) => failed().chain(synthesis).collect(),
            (Command::Retry, ResearchStatus::Failed) if failed().next().is_some() => {
                failed().chain(synthesis).collect()
            }
            (Command::Retry, ResearchStatus::Failed) if self.synthesis_error.is_some() => {
                synthesis.collect()
            }
            _ => Vec::new(),
        }
    }

    /// The spec's "Synthesis not available" condition for the completed card: completed with no
    /// synthesis, at most one successful report and no external report. The job's JSON carries
    /// it as `synthesis_not_available` ([`Research::view`]), so clients never re-derive it.
    pub fn synthesis_not_available(&self) -> bool {
        self.status == ResearchStatus::Completed
            && self.synthesized_result.is_none()
            && self.successful() <= 1
            && self.external_reports.is_empty()
    }

    fn check_completion(&mut self, now: u64, effects: &mut Vec<Effect>) {
        let count = |status: LlmStatus| {
            self.llm_results
                .iter()
                .filter(|r| r.status == status)
                .count()
        };
        let pending = count(LlmStatus::Pending) + count(LlmStatus::Processing);
        let (completed, failed) = (count(LlmStatus::Completed), count(LlmStatus::Failed));
        if pending > 0 {
            return;
        }
        if completed == 0 {
            self.fail("All LLM calls failed".into(), now, effects);
        } else if failed == 0 {
            self.synthesize_or_complete(now, effects);
        } else {
            let failed_providers = self
                .llm_results
                .iter()
                .filter(|r| r.status == LlmStatus::Failed)
                .map(|r| r.provider.clone())
                .collect();
            self.partial_failure = Some(PartialFailure {
                failed_providers,
                detected_at: now,
                retry_count: self.retry_count,
            });
            self.set_status(ResearchStatus::AwaitingConfirmation, now, effects);
        }
    }

    /// The synthesis-skip table (phase 4).
    fn synthesize_or_complete(&mut self, now: u64, effects: &mut Vec<Effect>) {
        match (self.successful(), self.external_reports.len()) {
            (0, 0) => self.fail("No successful LLM results".into(), now, effects),
            (1, 0) => self.complete(now, effects),
            _ => self.run_synthesis(now, effects),
        }
    }

    fn run_synthesis(&mut self, now: u64, effects: &mut Vec<Effect>) {
        self.synthesis_attempt += 1;
        self.synthesis_dispatched_at = Some(now);
        self.set_status(ResearchStatus::Synthesizing, now, effects);
        effects.push(Effect::RunSynthesis {
            attempt: self.synthesis_attempt,
        });
    }

    fn retry_failed_providers(&mut self, now: u64, effects: &mut Vec<Effect>) {
        if self.retry_count >= MAX_RETRIES {
            return self.fail("Max retries exceeded".into(), now, effects);
        }
        self.retry_count += 1;
        if let Some(partial) = &mut self.partial_failure {
            partial.retry_count = self.retry_count;
        }
        self.error = None;
        self.finished_at = None;
        self.set_status(ResearchStatus::Retrying, now, effects);
        let failed: Vec<usize> = (0..self.llm_results.len())
            .filter(|&i| self.llm_results[i].status == LlmStatus::Failed)
            .collect();
        for index in failed {
            self.dispatch(index, now, effects);
        }
    }

    fn dispatch(&mut self, index: usize, now: u64, effects: &mut Vec<Effect>) {
        let result = &mut self.llm_results[index];
        result.attempt += 1;
        result.status = LlmStatus::Pending;
        result.dispatched_at = now;
        result.result = None;
        result.error = None;
        result.finished_at = None;
        effects.push(Effect::CallProvider {
            provider: result.provider.clone(),
            attempt: result.attempt,
        });
        let event = provider_event(&self.id, result, now);
        effects.push(Effect::Emit(event));
    }

    fn complete(&mut self, now: u64, effects: &mut Vec<Effect>) {
        self.finished_at = Some(now);
        self.set_status(ResearchStatus::Completed, now, effects);
    }

    fn fail(&mut self, error: String, now: u64, effects: &mut Vec<Effect>) {
        self.error = Some(error);
        self.finished_at = Some(now);
        self.set_status(ResearchStatus::Failed, now, effects);
    }

    fn set_status(&mut self, status: ResearchStatus, now: u64, effects: &mut Vec<Effect>) {
        self.status = status;
        effects.push(Effect::Emit(ResearchEvent::StatusChanged {
            research_id: self.id.clone(),
            status,
            at: now,
        }));
    }

    pub(super) fn expect(
        &self,
        status: ResearchStatus,
        action: &'static str,
    ) -> Result<(), ResearchError> {
        if self.status == status {
            Ok(())
        } else {
            Err(ResearchError::Conflict {
                action,
                status: self.status,
            })
        }
    }

    fn successful(&self) -> usize {
        self.llm_results
            .iter()
            .filter(|r| r.status == LlmStatus::Completed)
            .count()
    }
}

/// Checks a draft's fields: a prompt, at most 16 distinct providers, bounded external reports
/// and a single-line title.
pub(super) fn validate(fields: &DraftFields) -> Result<(), ResearchError> {
    let invalid = |reason: &str| Err(ResearchError::InvalidDraft(reason.to_owned()));
    if fields.prompt.trim().is_empty() {
        return invalid("the prompt is empty");
    }
    if fields.prompt.chars().count() > MAX_PROMPT_CHARS {
        return invalid("the prompt is longer than 20000 characters");
    }
    if fields.selected_llms.len() > MAX_PROVIDERS {
        return invalid("at most 16 providers can be selected");
    }
    let selected = &fields.selected_llms;
    if selected
        .iter()
        .enumerate()
        .any(|(i, p)| selected[..i].contains(p))
    {
        return invalid("a provider is selected twice");
    }
    if let Some(stream) = &fields.stream_id
        && (stream.len() != 32
            || !stream
                .bytes()
                .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
    {
        return invalid("`stream_id` is not a stream id");
    }
    let reports = &fields.external_reports;
    if reports.len() > MAX_EXTERNAL_REPORTS {
        return invalid("at most 10 external reports are allowed");
    }
    let lengths: Vec<usize> = reports.iter().map(|r| r.content.chars().count()).collect();
    if lengths.iter().any(|&n| n > MAX_EXTERNAL_REPORT_CHARS) {
        return invalid("an external report is longer than 100000 characters");
    }
    if lengths.iter().sum::<usize>() > MAX_EXTERNAL_TOTAL_CHARS {
        return invalid("the external reports are longer than 200000 characters together");
    }
    check_title(&fields.title)
}

/// A title is one line of at most 120 characters.
pub(super) fn check_title(title: &str) -> Result<(), ResearchError> {
    if title.chars().count() > MAX_TITLE_CHARS || title.chars().any(char::is_control) {
        return Err(ResearchError::InvalidDraft(
            "the title must be one line of at most 120 characters".to_owned(),
        ));
    }
    Ok(())
}

/// The result of this provider's current attempt (borrowing only the results).
fn find_call<'a>(
    results: &'a mut [LlmResult],
    provider: &str,
    attempt: u32,
) -> Option<&'a mut LlmResult> {
    results
        .iter_mut()
        .find(|r| r.provider == provider && r.attempt == attempt)
}

fn provider_event(research_id: &str, result: &LlmResult, now: u64) -> ResearchEvent {
    ResearchEvent::ProviderChanged {
        research_id: research_id.to_owned(),
        provider: result.provider.clone(),
        status: result.status,
        attempt: result.attempt,
        at: now,
    }
}
