//! Texts of a research job: the title (asked of the synthesis model, with a truncation
//! fallback) and the synthesis prompt with source attribution.

use std::fmt::Write;

use super::{LlmStatus, Research};

/// Longest fallback title, in characters.
const TITLE_CHARS: usize = 60;

/// A title from the prompt when no model wrote one: its first line, cut at a word boundary.
///
/// ```
/// use stepwise_core::research::fallback_title;
/// assert_eq!(fallback_title("Compare EGFR inhibitors\nwith details"), "Compare EGFR inhibitors");
/// assert_eq!(fallback_title(&"word ".repeat(30)).chars().count(), 55);
/// ```
pub fn fallback_title(prompt: &str) -> String {
    let line = prompt.trim().lines().next().unwrap_or("").trim();
    if line.chars().count() <= TITLE_CHARS {
        return if line.is_empty() {
            "Untitled research".to_owned()
        } else {
            line.to_owned()
        };
    }
    let cut: String = line.chars().take(TITLE_CHARS - 1).collect();
    let at_word = cut
        .rfind(' ')
        .filter(|&i| i > TITLE_CHARS / 2)
        .map_or(cut.as_str(), |i| &cut[..i]);
    format!("{}…", at_word.trim_end())
}

/// The system prompt that asks a model for a research job's title.
pub const TITLE_SYSTEM_PROMPT: &str = "You name research jobs. Reply with one short title (at most 8 words) for the user's research question: no quotes, no trailing period, nothing else.";

/// The model's title answer made safe to show: its first non-empty line without quotes, markdown
/// emphasis, a `Title:` label or a trailing period, cut like the fallback. `None` when nothing
/// usable is left (the caller then uses [`fallback_title`]).
///
/// ```
/// use stepwise_core::research::clean_title;
/// assert_eq!(clean_title("\n\"**Title: EGFR inhibitors compared.**\"\nmore").as_deref(), Some("EGFR inhibitors compared"));
/// assert_eq!(clean_title("  \n \"\" "), None);
/// ```
pub fn clean_title(answer: &str) -> Option<String> {
    let line = answer.lines().map(str::trim).find(|l| !l.is_empty())?;
    let mut title = line.trim_matches(|c: char| {
        matches!(c, '"' | '\'' | '*' | '_' | '#' | '`' | '“' | '”') || c.is_whitespace()
    });
    for label in ["Title:", "title:", "TITLE:"] {
        if let Some(rest) = title.strip_prefix(label) {
            title = rest
                .trim_matches(|c: char| matches!(c, '"' | '\'' | '*' | '_') || c.is_whitespace());
        }
    }
    let title = title.trim_end_matches('.').trim();
    let has_text = title.chars().any(char::is_alphanumeric);
    has_text.then(|| fallback_title(title))
}

/// The synthesis prompt: the question, then each source labelled by provider or external
/// report, and instructions to attribute claims to their sources.
pub fn synthesis_prompt(research: &Research) -> String {
    let mut out = String::with_capacity(4096);
    out.push_str(
        "You are writing a synthesis of several research reports that answer the same question.\n",
    );
    out.push_str("Combine them into one coherent report. Attribute every claim to its source in brackets, e.g. [Source 2: openai].\n");
    out.push_str(
        "Point out where sources agree and where they disagree. Do not invent sources.\n\n",
    );
    let _ = writeln!(out, "Question:\n{}\n", research.prompt.trim());
    let mut number = 0;
    for result in research
        .llm_results
        .iter()
        .filter(|r| r.status == LlmStatus::Completed)
    {
        number += 1;
        let _ = writeln!(
            out,
            "=== Source {number}: {} (model report) ===\n{}\n",
            result.provider,
            result.result.as_deref().unwrap_or("").trim()
        );
    }
    for report in &research.external_reports {
        number += 1;
        let _ = writeln!(
            out,
            "=== Source {number}: external report \"{}\" ===\n{}\n",
            report.title,
            report.content.trim()
        );
    }
    out
}
