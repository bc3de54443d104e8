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

/// Most characters of all sources together in a synthesis prompt; longer sources are cut to
/// fair shares (a short source keeps all of its text, the rest is split among the long ones).
pub const MAX_SYNTHESIS_SOURCE_CHARS: usize = 200_000;

/// The synthesis prompt: the question, then each source labelled by provider or external
/// report (cut to fit [`MAX_SYNTHESIS_SOURCE_CHARS`]), and instructions to attribute claims to
/// their sources.
pub fn synthesis_prompt(research: &Research) -> String {
    let mut sources: Vec<(String, &str)> = Vec::new();
    for result in research
        .llm_results
        .iter()
        .filter(|r| r.status == LlmStatus::Completed)
    {
        let label = format!("{} (model report)", result.provider);
        sources.push((label, result.result.as_deref().unwrap_or("").trim()));
    }
    for report in &research.external_reports {
        let label = format!("external report \"{}\"", report.title);
        sources.push((label, report.content.trim()));
    }
    let lengths: Vec<usize> = sources
        .iter()
        .map(|(_, text)| text.chars().count())
        .collect();
    let shares = fair_shares(&lengths, MAX_SYNTHESIS_SOURCE_CHARS);
    let mut out = String::with_capacity(4096);
    out.push_str(
        "You are writing a synthesis of several research reports that answer the same question.\n",
    );
    out.push_str("Combine them into one coherent report. Attribute every claim to its source in brackets, e.g. [Source 2: openai].\n");
    out.push_str("Point out where sources agree and where they disagree. Do not invent sources.\n");
    out.push_str(super::POINTS_INSTRUCTION);
    out.push('\n');
    let _ = writeln!(out, "Question:\n{}\n", research.prompt.trim());
    for (number, ((label, text), (&share, &length))) in
        sources.iter().zip(shares.iter().zip(&lengths)).enumerate()
    {
        let _ = writeln!(out, "=== Source {}: {label} ===", number + 1);
        if share < length {
            out.extend(text.chars().take(share));
            out.push_str("\n[… cut to fit the synthesis]\n\n");
        } else {
            let _ = writeln!(out, "{text}\n");
        }
    }
    out
}

/// Characters each source may keep within `budget`: every source gets at most an equal share of
/// what the shorter ones left.
fn fair_shares(lengths: &[usize], budget: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..lengths.len()).collect();
    order.sort_unstable_by_key(|&i| lengths[i]);
    let mut shares = vec![0; lengths.len()];
    let mut left = budget;
    for (done, &i) in order.iter().enumerate() {
        let share = lengths[i].min(left / (lengths.len() - done));
        shares[i] = share;
        left -= share;
    }
    shares
}

#[cfg(test)]
mod tests {
    use super::fair_shares;

    #[test]
    fn short_sources_keep_their_text_and_long_ones_split_the_rest() {
        assert_eq!(fair_shares(&[10, 20], 100), vec![10, 20]);
        assert_eq!(fair_shares(&[10, 500, 500], 100), vec![10, 45, 45]);
        assert_eq!(fair_shares(&[300, 10], 100), vec![90, 10]);
        assert_eq!(fair_shares(&[], 100), Vec::<usize>::new());
    }
}
