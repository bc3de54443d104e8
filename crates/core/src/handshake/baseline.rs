//! The baseline every assistant turn starts from (context-handshake.md §4.1.5), in the spec's
//! order: (1) the latest user input and (2) the chat history, which go to the model as the
//! conversation's messages; then, rendered by the prompt sheet into the system prompt, (3) the
//! style fragment chosen by `writing_style`, (4) the data abstract, the user's guidance and the
//! role description with its research-role rationale, (5) the synthesized goal, and (6) the
//! phase-3 outputs when a job of the stream has them (cut to their policy limits); then any
//! supplied attachments and the warning of a turn run without what it asked for. Everything the
//! owner wrote is redacted ([`super::redact()`]) on its way into the prompt.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::artifacts::Literature;
use super::redact::redact;
use super::request::{ContextRequest, Supplier};
use super::sheet::PromptSheet;
use crate::research::{LlmStatus, Research};
use crate::streams::SavedStream;
use crate::workflow::FieldValue;

/// Longest attachment body in the prompt, in characters (the rest is cut with a note).
pub const MAX_ATTACHMENT_PROMPT_CHARS: usize = 8_000;
/// Longest phase-3 summary in the baseline, in characters (the policy's limit for the slot).
pub const MAX_BASELINE_SUMMARY_CHARS: usize = 6_000;
/// Longest list of points of interest in the baseline, in characters.
pub const MAX_BASELINE_POINTS_CHARS: usize = 4_000;
/// What ends a text cut to its limit.
const CUT_NOTE: &str = "\n[… cut]";

/// What the baseline is built from: the owner's stream in view, its literature, the job whose
/// phase-3 outputs apply, and the chosen writing style.
#[derive(Debug, Clone, Copy, Default)]
pub struct Baseline<'a> {
    /// The stream in view.
    pub stream: Option<&'a SavedStream>,
    /// Its literature.
    pub literature: Option<&'a Literature>,
    /// The job of the stream (or in view) with phase-3 outputs.
    pub job: Option<&'a Research>,
    /// The chosen writing style (`concise`, `detailed`...), the sheet's default when `None`.
    pub writing_style: Option<&'a str>,
    /// The user's supplies of the conversation's earlier turns, as prompt text
    /// (made by `carried.rs`): rendered with the attachments, after the turn's own.
    pub earlier: &'a str,
}

/// The inclusions of the baseline, in the order they reach the model.
pub const BASELINE_ORDER: [&str; 6] = [
    "latest_user_input",
    "chat_history",
    "style",
    "data_abstract, user_guidance, system_role_description, research_role_rationale",
    "synthesized_goal",
    "summary, points_of_interest",
];

impl Baseline<'_> {
    /// The current goal as one sentence from the stream's purpose and business goals; empty
    /// without a stream.
    ///
    /// ```
    /// use stepwise_core::handshake::Baseline;
    /// assert_eq!(Baseline::default().synthesized_goal(), "");
    /// ```
    pub fn synthesized_goal(&self) -> String {
        let Some(stream) = self.stream else {
            return String::new();
        };
        let purpose = text_of(stream.config.get("purpose"));
        let goals = text_of(stream.config.get("business_goals"));
        let purpose = purpose.trim().trim_end_matches('.');
        match (purpose.is_empty(), goals.is_empty()) {
            (true, true) => String::new(),
            (false, true) => format!("{purpose}."),
            (true, false) => format!("Serve these business goals: {goals}."),
            (false, false) => format!("{purpose}, in service of: {goals}."),
        }
    }

    /// A short abstract of what is loaded.
    pub fn data_abstract(&self) -> String {
        let mut out = String::new();
        if let Some(stream) = self.stream {
            let count = |field: &str| match stream.config.get(field) {
                Some(FieldValue::List(items)) => items.len(),
                Some(FieldValue::Text(t)) if !t.trim().is_empty() => 1,
                _ => 0,
            };
            let _ = writeln!(
                out,
                "Stream \"{}\" ({}): {} focus areas, {} competitors, {} keywords.",
                stream.name,
                text_of(stream.config.get("stream_type")),
                count("focus_areas"),
                count("competitors"),
                count("keywords")
            );
        }
        if let Some(literature) = self.literature {
            let _ = writeln!(
                out,
                "Literature: the search \"{}\" ({} matches, {} summaries, {} abstracts fetched).",
                literature.query,
                literature.count,
                literature.articles.len(),
                literature.abstracts.len()
            );
        }
        if let Some(job) = self.job {
            let reports = job
                .llm_results
                .iter()
                .filter(|r| r.status == LlmStatus::Completed)
                .count();
            let _ = writeln!(
                out,
                "Research job \"{}\" ({}): {reports} provider reports, {} points of interest.",
                job.title,
                job.status.as_str(),
                job.points_of_interest.len()
            );
        }
        out.trim_end().to_owned()
    }

    /// The user's guidance: the stream's purpose, goals and chat instructions.
    pub fn user_guidance(&self) -> String {
        let Some(stream) = self.stream else {
            return String::new();
        };
        let mut out = String::new();
        for (label, field) in [("Purpose", "purpose"), ("Business goals", "business_goals")] {
            let value = text_of(stream.config.get(field));
            if !value.is_empty() {
                let _ = writeln!(out, "{label}: {value}");
            }
        }
        if !stream.chat_instructions.trim().is_empty() {
            let _ = writeln!(out, "Instructions: {}", stream.chat_instructions.trim());
        }
        out.trim_end().to_owned()
    }

    /// The context bundle: the sheet rendered with the baseline, the supplied attachments of
    /// `request` (linked to its user message) and a `warning`.
    pub fn render(
        &self,
        sheet: &PromptSheet,
        page: &str,
        mode: &str,
        request: Option<&ContextRequest>,
        warning: Option<&str>,
    ) -> String {
        let mut values: BTreeMap<&str, String> = BTreeMap::new();
        values.insert("style", sheet.style(self.writing_style).to_owned());
        // What the owner wrote reaches the model redacted, like any attachment.
        values.insert("data_abstract", redact(&self.data_abstract()));
        values.insert("user_guidance", redact(&self.user_guidance()));
        values.insert(
            "system_role_description",
            sheet.text("system_role_description").to_owned(),
        );
        values.insert(
            "research_role_rationale",
            sheet.text("research_role_rationale").to_owned(),
        );
        values.insert("synthesized_goal", redact(&self.synthesized_goal()));
        if let Some(job) = self.job {
            let summary = job.synthesized_result.as_deref().unwrap_or_default();
            values.insert(
                "summary",
                clip(&redact(summary), MAX_BASELINE_SUMMARY_CHARS),
            );
            let points: Vec<String> = job
                .points_of_interest
                .iter()
                .map(|p| format!("- {p}"))
                .collect();
            let points = redact(&points.join("\n"));
            values.insert(
                "points_of_interest",
                clip(&points, MAX_BASELINE_POINTS_CHARS),
            );
        }
        let own = request.map(attachments).unwrap_or_default();
        let all = [own.as_str(), self.earlier.trim()]
            .into_iter()
            .filter(|part| !part.is_empty())
            .collect::<Vec<_>>()
            .join("\n");
        values.insert("attachments", all);
        values.insert("warning", warning.unwrap_or("").to_owned());
        values.insert("page", page.to_owned());
        values.insert("mode", mode.to_owned());
        sheet.render(&values)
    }
}

/// The attachments of a request as prompt text: one block per supplied slot, with its phase,
/// description, source and provenance, its body cut to [`MAX_ATTACHMENT_PROMPT_CHARS`].
pub fn attachments(request: &ContextRequest) -> String {
    let mut out = String::new();
    let mut any = false;
    for (slot, supply) in request.attachments() {
        if !any {
            let _ = writeln!(out, "For the user message {}:", request.user_message_id);
            any = true;
        }
        let source = supply.key_path.as_deref().unwrap_or("typed by the user");
        let by = match supply.by {
            Supplier::System => "supplied automatically",
            Supplier::User => "supplied by the user",
        };
        let _ = writeln!(
            out,
            "### [Phase {}] {} ({source}, {by})",
            slot.phase, slot.description
        );
        // The system's supplies are redacted when sliced; what the user typed is, here.
        let text = redact(&supply.text);
        let body: String = text.chars().take(MAX_ATTACHMENT_PROMPT_CHARS).collect();
        out.push_str(body.trim_end());
        if supply.truncated || body.len() < text.len() {
            out.push_str(CUT_NOTE);
        }
        out.push('\n');
    }
    out.trim_end().to_owned()
}

/// `text` cut to `limit` characters, with a note when cut.
fn clip(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        Some((end, _)) => format!("{}{CUT_NOTE}", text[..end].trim_end()),
        None => text.to_owned(),
    }
}

fn text_of(value: Option<&FieldValue>) -> String {
    match value {
        Some(FieldValue::Text(text)) => text.trim().to_owned(),
        Some(FieldValue::List(items)) => items.join(", "),
        None => String::new(),
    }
}
