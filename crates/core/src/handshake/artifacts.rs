//! The owner's artifacts by phase (context-handshake.md §4.2), addressed by key path and sliced
//! with a size limit and redaction. Phase 0 is the saved stream's configuration and chat
//! instructions; phase 1 its last literature search and the abstracts fetched for it; phase 2 a
//! research job's prompt, external reports and each provider's report; phase 3 the job's
//! synthesis (`summary`, `points_of_interest`); phase 4 its publication.
//!
//! Key paths: `stream/<id>/config/<field>`, `stream/<id>/chat_instructions`,
//! `stream/<id>/literature/search`, `stream/<id>/literature/abstracts/<pmid>`,
//! `research/<id>/prompt`, `research/<id>/external_reports/<n>`,
//! `research/<id>/llm_results/<provider>/result` (`*` for every provider),
//! `research/<id>/synthesis/summary`, `research/<id>/synthesis/points_of_interest`,
//! `research/<id>/publication`. The [`Sources`] hold only what the caller owns, so a path to
//! anything else is simply not found.

use serde::{Deserialize, Serialize};

use super::redact;
use crate::dates;
use crate::research::{LlmStatus, Research, ResearchStatus};
use crate::streams::SavedStream;
use crate::workflow::FieldValue;

/// Most characters one slice may ask for.
pub const MAX_SLICE_CHARS: usize = 20_000;
/// The size limit of a slice that names none.
pub const DEFAULT_SLICE_CHARS: usize = 4_000;
/// Most articles kept of a literature search.
pub const MAX_LITERATURE_ARTICLES: usize = 20;
/// Most abstracts kept for a stream.
pub const MAX_LITERATURE_ABSTRACTS: usize = 20;
/// Longest key path, in bytes.
pub const MAX_KEY_PATH_LEN: usize = 200;

/// A stream's last literature search and the abstracts fetched since (phase 1), as the edge
/// keeps it per owner and stream.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Literature {
    /// The query.
    pub query: String,
    /// Matches PubMed reported.
    pub count: u64,
    /// When it ran (ms since the epoch).
    pub searched_at: u64,
    /// The first page's summaries, at most [`MAX_LITERATURE_ARTICLES`].
    #[serde(default)]
    pub articles: Vec<ArticleNote>,
    /// Abstracts fetched by `retrieve_items`, newest last, at most [`MAX_LITERATURE_ABSTRACTS`].
    #[serde(default)]
    pub abstracts: Vec<AbstractNote>,
}

/// One article of a search, as kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArticleNote {
    /// PubMed id.
    pub pmid: String,
    /// Title.
    pub title: String,
    /// Journal.
    #[serde(default)]
    pub journal: String,
    /// Publication year.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub year: Option<u32>,
}

/// One fetched abstract.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AbstractNote {
    /// PubMed id.
    pub pmid: String,
    /// Title.
    pub title: String,
    /// The abstract.
    pub text: String,
}

impl Literature {
    /// Keeps an abstract (replacing an older copy), dropping the oldest past the limit.
    pub fn remember_abstract(&mut self, note: AbstractNote) {
        self.abstracts.retain(|a| a.pmid != note.pmid);
        self.abstracts.push(note);
        let extra = self
            .abstracts
            .len()
            .saturating_sub(MAX_LITERATURE_ABSTRACTS);
        self.abstracts.drain(..extra);
    }
}

/// What the caller owns that artifacts are read from.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sources<'a> {
    /// The saved stream in view.
    pub stream: Option<&'a SavedStream>,
    /// Its literature.
    pub literature: Option<&'a Literature>,
    /// Research jobs (the one in view, the stream's latest).
    pub jobs: &'a [Research],
}

/// One artifact as listed: where it is, its phase and type, its size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ArtifactInfo {
    /// Its key path.
    pub key_path: String,
    /// Its phase, 0 to 4.
    pub phase: u8,
    /// What it is (`stream_config`, `llm_result`, `points_of_interest`...).
    pub artifact_type: &'static str,
    /// A label for people.
    pub title: String,
    /// Its size in characters, before any limit.
    pub chars: usize,
}

/// A slice of an artifact, redacted and cut to a size limit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Excerpt {
    /// The key path sliced.
    pub key_path: String,
    /// Its phase.
    pub phase: u8,
    /// Its type.
    pub artifact_type: String,
    /// The text, redacted, at most the limit.
    pub text: String,
    /// Offset of the slice in the artifact, in characters (always 0: slices start at the top).
    pub start: usize,
    /// End of the slice, in characters.
    pub end: usize,
    /// The artifact's whole size, in characters.
    pub total_chars: usize,
}

impl Excerpt {
    /// Whether the slice is shorter than the artifact.
    pub fn truncated(&self) -> bool {
        self.end < self.total_chars
    }
}

/// Why a key path was not sliced.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArtifactError {
    /// The path has no artifact form.
    #[error("`{0:.200}` is not an artifact key path")]
    InvalidKeyPath(String),
    /// Nothing the caller owns is at this path.
    #[error("there is no artifact at `{0:.200}`")]
    NotFound(String),
}

impl ArtifactError {
    /// Stable machine code.
    pub fn code(&self) -> &'static str {
        match self {
            ArtifactError::InvalidKeyPath(_) => "invalid_key_path",
            ArtifactError::NotFound(_) => "artifact_not_found",
        }
    }
}

/// The phase a key path belongs to, when it has an artifact form.
///
/// ```
/// use stepwise_core::handshake::phase_of;
/// assert_eq!(phase_of("research/r1/synthesis/points_of_interest"), Some(3));
/// assert_eq!(phase_of("stream/s1/config/purpose"), Some(0));
/// assert_eq!(phase_of("elsewhere/x"), None);
/// ```
pub fn phase_of(key_path: &str) -> Option<u8> {
    kind_of(key_path).map(|(phase, _)| phase)
}

/// The phase and artifact type of a key path's form.
pub fn kind_of(key_path: &str) -> Option<(u8, &'static str)> {
    if key_path.len() > MAX_KEY_PATH_LEN || key_path.chars().any(char::is_control) {
        return None;
    }
    let parts: Vec<&str> = key_path.split('/').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return None;
    }
    Some(match parts.as_slice() {
        ["stream", _, "config", _] => (0, "stream_config"),
        ["stream", _, "chat_instructions"] => (0, "chat_instructions"),
        ["stream", _, "literature", "search"] => (1, "literature_search"),
        ["stream", _, "literature", "abstracts", _] => (1, "abstract"),
        ["research", _, "prompt"] => (2, "research_prompt"),
        ["research", _, "external_reports", _] => (2, "external_report"),
        ["research", _, "llm_results", _, "result"] => (2, "llm_result"),
        ["research", _, "synthesis", "summary"] => (3, "summary"),
        ["research", _, "synthesis", "points_of_interest"] => (3, "points_of_interest"),
        ["research", _, "publication"] => (4, "publication"),
        _ => return None,
    })
}

/// Every artifact in `sources`, by phase then key path order of appearance.
pub fn list(sources: &Sources<'_>) -> Vec<ArtifactInfo> {
    let mut out: Vec<ArtifactInfo> = all(sources)
        .into_iter()
        .filter_map(|(key_path, title)| {
            let (phase, artifact_type) = kind_of(&key_path)?;
            let chars = full_text(sources, &key_path)?.chars().count();
            Some(ArtifactInfo {
                key_path,
                phase,
                artifact_type,
                title,
                chars,
            })
        })
        .collect();
    out.sort_by_key(|a| a.phase);
    out
}

/// The artifact at `key_path`, redacted and cut to `size_limit` characters (at most
/// [`MAX_SLICE_CHARS`]).
///
/// ```
/// use stepwise_core::handshake::{slice, Sources};
/// let error = slice(&Sources::default(), "research/r1/prompt", 100).unwrap_err();
/// assert_eq!(error.code(), "artifact_not_found");
/// assert_eq!(slice(&Sources::default(), "../etc", 100).unwrap_err().code(), "invalid_key_path");
/// ```
pub fn slice(
    sources: &Sources<'_>,
    key_path: &str,
    size_limit: usize,
) -> Result<Excerpt, ArtifactError> {
    let (phase, artifact_type) =
        kind_of(key_path).ok_or_else(|| ArtifactError::InvalidKeyPath(key_path.to_owned()))?;
    let text =
        full_text(sources, key_path).ok_or_else(|| ArtifactError::NotFound(key_path.to_owned()))?;
    let text = redact(&text);
    let total_chars = text.chars().count();
    let limit = size_limit.clamp(1, MAX_SLICE_CHARS);
    let end = total_chars.min(limit);
    Ok(Excerpt {
        key_path: key_path.to_owned(),
        phase,
        artifact_type: artifact_type.to_owned(),
        text: text.chars().take(end).collect(),
        start: 0,
        end,
        total_chars,
    })
}

/// Whether `sources` hold an artifact at `key_path` (false for a path of no artifact form).
pub fn exists(sources: &Sources<'_>, key_path: &str) -> bool {
    kind_of(key_path).is_some() && full_text(sources, key_path).is_some()
}

/// Every key path the sources hold, with a title.
fn all(sources: &Sources<'_>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Some(stream) = sources.stream {
        let base = format!("stream/{}", stream.id);
        for field in stream.config.keys() {
            out.push((
                format!("{base}/config/{field}"),
                format!("Stream {}: {field}", stream.name),
            ));
        }
        if !stream.chat_instructions.trim().is_empty() {
            out.push((
                format!("{base}/chat_instructions"),
                format!("Stream {}: chat instructions", stream.name),
            ));
        }
        if let Some(literature) = sources.literature {
            out.push((
                format!("{base}/literature/search"),
                format!("Literature search \"{}\"", literature.query),
            ));
            for note in &literature.abstracts {
                out.push((
                    format!("{base}/literature/abstracts/{}", note.pmid),
                    format!("Abstract PMID {}: {}", note.pmid, note.title),
                ));
            }
        }
    }
    for job in sources.jobs {
        let base = format!("research/{}", job.id);
        let title = &job.title;
        out.push((format!("{base}/prompt"), format!("Job \"{title}\": prompt")));
        for (n, report) in job.external_reports.iter().enumerate() {
            out.push((
                format!("{base}/external_reports/{n}"),
                format!("Job \"{title}\": external report \"{}\"", report.title),
            ));
        }
        for result in job
            .llm_results
            .iter()
            .filter(|r| r.status == LlmStatus::Completed)
        {
            out.push((
                format!("{base}/llm_results/{}/result", result.provider),
                format!("Job \"{title}\": {} report", result.provider),
            ));
        }
        if job.synthesized_result.is_some() {
            out.push((
                format!("{base}/synthesis/summary"),
                format!("Job \"{title}\": synthesis summary"),
            ));
        }
        if !job.points_of_interest.is_empty() {
            out.push((
                format!("{base}/synthesis/points_of_interest"),
                format!("Job \"{title}\": points of interest"),
            ));
        }
        if job.status == ResearchStatus::Completed {
            out.push((
                format!("{base}/publication"),
                format!("Job \"{title}\": publication"),
            ));
        }
    }
    out
}

/// The whole text at a key path, unredacted; `None` when the sources hold nothing there.
fn full_text(sources: &Sources<'_>, key_path: &str) -> Option<String> {
    let parts: Vec<&str> = key_path.split('/').collect();
    match parts.as_slice() {
        ["stream", id, rest @ ..] => {
            let stream = sources.stream.filter(|s| s.id == *id)?;
            match rest {
                ["config", field] => stream.config.get(field).map(value_text),
                ["chat_instructions"] => {
                    Some(stream.chat_instructions.clone()).filter(|t| !t.trim().is_empty())
                }
                ["literature", "search"] => sources.literature.map(search_text),
                ["literature", "abstracts", pmid] => sources
                    .literature?
                    .abstracts
                    .iter()
                    .find(|a| a.pmid == *pmid)
                    .map(|a| format!("{} (PMID {})\n{}", a.title, a.pmid, a.text)),
                _ => None,
            }
        }
        ["research", id, rest @ ..] => {
            let job = sources.jobs.iter().find(|j| j.id == *id)?;
            job_text(job, rest)
        }
        _ => None,
    }
}

fn job_text(job: &Research, rest: &[&str]) -> Option<String> {
    match rest {
        ["prompt"] => Some(job.prompt.clone()),
        ["external_reports", n] => {
            let report = job.external_reports.get(n.parse::<usize>().ok()?)?;
            Some(format!("{}\n{}", report.title, report.content))
        }
        ["llm_results", "*", "result"] => {
            let texts: Vec<String> = job
                .llm_results
                .iter()
                .filter_map(|r| Some(format!("### {}\n{}", r.provider, r.result.as_ref()?)))
                .collect();
            (!texts.is_empty()).then(|| texts.join("\n\n"))
        }
        ["llm_results", provider, "result"] => job
            .llm_results
            .iter()
            .find(|r| r.provider == *provider && r.status == LlmStatus::Completed)?
            .result
            .clone(),
        ["synthesis", "summary"] => job.synthesized_result.clone(),
        ["synthesis", "points_of_interest"] => (!job.points_of_interest.is_empty()).then(|| {
            job.points_of_interest
                .iter()
                .map(|p| format!("- {p}"))
                .collect::<Vec<_>>()
                .join("\n")
        }),
        ["publication"] if job.status == ResearchStatus::Completed => Some(match &job.share_info {
            Some(share) => format!(
                "Published on {} at {}; the page expires on {}.",
                dates::day(share.published_at),
                share.url,
                dates::day(share.expires_at)
            ),
            None => "Not published.".to_owned(),
        }),
        _ => None,
    }
}

fn value_text(value: &FieldValue) -> String {
    match value {
        FieldValue::Text(text) => text.clone(),
        FieldValue::List(items) => items.join(", "),
    }
}

fn search_text(literature: &Literature) -> String {
    let mut out = format!(
        "Query: {}\nMatches: {}\nRun on: {}\n",
        literature.query,
        literature.count,
        dates::day(literature.searched_at)
    );
    for article in &literature.articles {
        let year = article.year.map(|y| format!(" {y}")).unwrap_or_default();
        out.push_str(&format!(
            "- {} ({}{year}, PMID {})\n",
            article.title, article.journal, article.pmid
        ));
    }
    out
}
