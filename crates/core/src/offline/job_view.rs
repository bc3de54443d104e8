//! The research job in view, as the Research page's context shows it (its synthesis, points of
//! interest and every provider's report): what the offline assistant answers questions about the
//! job's findings from, and compares reports with, quoting text so that it never starts a
//! marker line.

use std::fmt::Write;

use serde_json::{Value, json};

use super::answer::{OfflineAnswer, calls};
use super::{counted, opening, without_label};
use crate::registry::{ChatContext, Resolution};

/// Wording that asks about the research job in view: what it found, said or concluded.
pub(super) const JOB_WORDS: &[&str] = &[
    "finding",
    "synthes",
    "conclu",
    "takeaway",
    "summar",
    "report",
    "result",
    "key point",
    "points of interest",
    "main point",
    " say",
    " said",
    "tell me about",
];
/// Most pairs of reports compared in one answer (every pair of four providers).
const MAX_COMPARISONS: usize = 6;
/// Lines of a synthesis, or of a report asked for by name, quoted in an answer.
const QUOTED_LINES: usize = 10;
/// Longest line quoted, in characters.
const QUOTED_CHARS: usize = 300;

/// "Compare the reports" with the job's reports on screen: the two providers named, or else every
/// pair of completed reports (not just the first two), or why there is nothing to compare.
pub(super) fn compare_in_view(
    id: &str,
    job: &JobInView<'_>,
    named: &[&str],
    text: &mut String,
) -> OfflineAnswer {
    let completed = job.completed();
    let chosen: Vec<&str> = named
        .iter()
        .copied()
        .filter(|p| completed.contains(p))
        .collect();
    let pairs: Vec<(&str, &str)> = match chosen.as_slice() {
        [a, b, ..] => vec![(a, b)],
        [a] => completed
            .iter()
            .filter(|b| *b != a)
            .map(|b| (*a, *b))
            .take(MAX_COMPARISONS)
            .collect(),
        [] => completed
            .iter()
            .enumerate()
            .flat_map(|(i, a)| completed[i + 1..].iter().map(move |b| (*a, *b)))
            .take(MAX_COMPARISONS)
            .collect(),
    };
    if pairs.is_empty() {
        let _ = writeln!(
            text,
            "\"{}\" has {}, so there is nothing to compare yet.",
            job.title,
            counted(completed.len(), "completed report", "completed reports")
        );
        return OfflineAnswer::from(std::mem::take(text));
    }
    let inputs = pairs
        .into_iter()
        .map(|(a, b)| json!({"research_id": id, "provider_a": a, "provider_b": b}))
        .collect();
    calls("compare_reports", inputs)
}

/// The research job in view as the Research page shows it (`job` in its context): title,
/// status, each provider's report (an excerpt) and the synthesis.
#[derive(Debug, Default)]
pub(super) struct JobInView<'a> {
    title: &'a str,
    status: &'a str,
    reports: Vec<ReportInView<'a>>,
    /// The synthesis provider and its text.
    pub(super) synthesis: Option<(&'a str, &'a str)>,
    points: Vec<&'a str>,
}

/// One provider's part of the job in view.
#[derive(Debug)]
struct ReportInView<'a> {
    provider: &'a str,
    status: &'a str,
    text: Option<&'a str>,
}

impl<'a> JobInView<'a> {
    /// The job the context describes, if it describes one.
    pub(super) fn read(context: &'a ChatContext) -> Option<Self> {
        let job = context.get("job")?.as_object()?;
        let str_at = |v: &'a Value, key: &str| v.get(key).and_then(Value::as_str);
        let reports = job
            .get("reports")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|r| {
                Some(ReportInView {
                    provider: str_at(r, "provider")?,
                    status: str_at(r, "status").unwrap_or("unknown"),
                    text: str_at(r, "text").filter(|t| !t.trim().is_empty()),
                })
            })
            .collect();
        let synthesis = job.get("synthesis").and_then(|s| {
            let text = str_at(s, "text").filter(|t| !t.trim().is_empty())?;
            Some((
                str_at(s, "provider").unwrap_or("the synthesis provider"),
                text,
            ))
        });
        let points = job
            .get("points_of_interest")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        Some(JobInView {
            title: job
                .get("title")
                .and_then(Value::as_str)
                .unwrap_or("this job"),
            status: job
                .get("status")
                .and_then(Value::as_str)
                .unwrap_or("unknown"),
            reports,
            synthesis,
            points,
        })
    }

    pub(super) fn has_reports(&self) -> bool {
        !self.reports.is_empty()
    }

    /// The providers whose report is complete, in the job's order.
    pub(super) fn completed(&self) -> Vec<&'a str> {
        self.reports
            .iter()
            .filter(|r| r.status == "completed" && r.text.is_some())
            .map(|r| r.provider)
            .collect()
    }

    /// The job's providers the message names, as whole words (`offline` is not named by
    /// `offline-critic`).
    pub(super) fn named_in(&self, lower: &str) -> Vec<&'a str> {
        let words: Vec<&str> = lower
            .split(|c: char| !c.is_alphanumeric() && c != '-' && c != '_' && c != '.')
            .map(|w| w.trim_end_matches('.'))
            .collect();
        self.reports
            .iter()
            .map(|r| r.provider)
            .filter(|p| words.contains(&p.to_lowercase().as_str()))
            .collect()
    }

    /// What the job found, from the page: the reports of the providers named, or the synthesis
    /// with its points of interest and how each report opens; then chips to go on.
    pub(super) fn describe(&self, named: &[&str], resolution: &Resolution<'_>, text: &mut String) {
        let _ = writeln!(
            text,
            "From the job on screen, \"{}\" ({}):",
            self.title,
            self.status.replace('_', " ")
        );
        if !named.is_empty() {
            for report in self.reports.iter().filter(|r| named.contains(&r.provider)) {
                match report.text {
                    Some(body) => {
                        let _ = writeln!(text, "The report by {}:", report.provider);
                        quote(text, body);
                    }
                    None => {
                        let _ = writeln!(
                            text,
                            "{} has no report yet ({}).",
                            report.provider, report.status
                        );
                    }
                }
            }
        } else {
            match self.synthesis {
                Some((provider, body)) => {
                    let _ = writeln!(text, "The synthesis by {provider} says:");
                    quote(text, body);
                }
                None if self.status == "completed" => {
                    text.push_str("There is no synthesis: fewer than two reports completed.\n");
                }
                None => {
                    let _ = writeln!(
                        text,
                        "There is no synthesis yet: the job is {}.",
                        self.status.replace('_', " ")
                    );
                }
            }
            if !self.points.is_empty() {
                text.push_str("Points of interest:\n");
                for point in self.points.iter().take(QUOTED_LINES) {
                    let _ = writeln!(text, "> - {}", cut_line(point));
                }
            }
            if self.has_reports() {
                let _ = writeln!(
                    text,
                    "The {} of its providers:",
                    if self.reports.len() == 1 {
                        "report"
                    } else {
                        "reports"
                    }
                );
                for report in &self.reports {
                    let line = match report.text.and_then(opening) {
                        Some(opening) => format!("- {}: {opening}", report.provider),
                        None => format!("- {}: {}", report.provider, report.status),
                    };
                    let _ = writeln!(text, "{}", unmarked(&line));
                }
            }
        }
        let completed = self.completed();
        let mut chips = Vec::new();
        if completed.len() >= 2 && resolution.tool("compare_reports").is_some() {
            chips.push(json!({"label": "Compare the reports", "value": "Compare the reports"}));
        }
        if let Some(other) = completed.iter().rev().find(|p| !named.contains(p)) {
            chips.push(json!({"label": format!("What {other} says"), "value": format!("What does {other} say?")}));
        }
        if !chips.is_empty() {
            let _ = writeln!(text, "SUGGESTED_VALUES: {}", Value::Array(chips));
        }
    }
}

/// Quotes a text's lines (an offline label left out), each after `> `, so that no quoted line
/// can be read as a marker.
fn quote(text: &mut String, body: &str) {
    let lines: Vec<&str> = body
        .lines()
        .map(|l| match without_label(l) {
            rest if rest.len() == l.trim().len() => l.trim_end(),
            rest => rest,
        })
        .filter(|l| !l.trim().is_empty())
        .collect();
    for line in lines.iter().take(QUOTED_LINES) {
        let _ = writeln!(text, "> {}", cut_line(line));
    }
    if lines.len() > QUOTED_LINES {
        let _ = writeln!(
            text,
            "> (… {} more on the page)",
            counted(lines.len() - QUOTED_LINES, "line", "lines")
        );
    }
}

fn cut_line(line: &str) -> String {
    let mut cut: String = line.chars().take(QUOTED_CHARS).collect();
    if cut.len() < line.len() {
        cut.push('…');
    }
    cut
}

/// A line of quoted text made safe to echo: one that could be read as a marker (an upper-case
/// name and a colon at its start, after any indentation, bullet or bold) is put after `> `.
pub(super) fn unmarked(line: &str) -> std::borrow::Cow<'_, str> {
    let rest = line.trim_start_matches([' ', '\t']);
    let rest = rest
        .strip_prefix(['-', '+', '*', '•'])
        .or_else(|| {
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            (digits > 0)
                .then(|| rest[digits..].strip_prefix(['.', ')']))
                .flatten()
        })
        .unwrap_or(rest)
        .trim_start_matches([' ', '\t', '*', '_']);
    let name = rest
        .bytes()
        .take_while(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || *b == b'_')
        .count();
    let after = rest[name..].trim_start_matches(['*', '_']);
    if name > 0 && rest.as_bytes()[0].is_ascii_uppercase() && after.starts_with(':') {
        std::borrow::Cow::Owned(format!("> {line}"))
    } else {
        std::borrow::Cow::Borrowed(line)
    }
}
