//! The research tools and `retrieve_items`: the caller's own jobs only (another owner's job is
//! not found, as everywhere), listed, read, compared; abstracts fetched by PMID; and a research
//! question prepared as a `research_draft_suggestion` the user must Accept (nothing is started).

use std::fmt::Write;

use serde_json::{Value, json};
use stepwise_core::agent::ToolOutcome;
use stepwise_core::handshake::redact;
use stepwise_core::pubmed::is_pmid;
use stepwise_core::research::{LlmStatus, MAX_PROMPT_CHARS, Research, compare_reports};

use super::{ToolContext, cut, text};
use crate::articles::eutils::Eutils;
use crate::platform::error::{AppError, AppResult};
use crate::platform::ids;
use crate::platform::kv::Kv;
use crate::platform::output::Output;
use crate::research::{index, read_job};

/// Characters of one abstract or report given to the model.
const MAX_ITEM_CHARS: usize = 4000;
/// Jobs listed by default.
const DEFAULT_LIST: u64 = 20;

/// `retrieve_items`: full details by id, PMIDs (abstracts) and research ids (reports) alike.
pub async fn retrieve_items(
    ctx: &ToolContext<'_>,
    input: &Value,
    out: &mut Output,
) -> AppResult<ToolOutcome> {
    let ids: Vec<&str> = input["ids"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let pmids: Vec<String> = ids
        .iter()
        .filter(|id| is_pmid(id))
        .map(|id| (*id).to_owned())
        .collect();
    let mut text = String::new();
    if !pmids.is_empty() {
        out.tool_progress(
            "retrieve_items",
            "fetching_abstracts",
            "Fetching abstracts",
            0.3,
        )
        .await;
        let articles = Eutils::new(ctx.env).abstracts(&pmids).await?;
        for pmid in &pmids {
            match articles.iter().find(|a| &a.pmid == pmid) {
                Some(a) => {
                    let year = a.year.map_or("n.d.".to_owned(), |y| y.to_string());
                    let body = if a.text.is_empty() {
                        "(no abstract)"
                    } else {
                        &a.text
                    };
                    let _ = writeln!(
                        text,
                        "PMID {pmid} — {} ({}, {year})\n{}\n",
                        a.title,
                        a.journal,
                        cut(body, MAX_ITEM_CHARS)
                    );
                }
                None => {
                    let _ = writeln!(text, "PMID {pmid}: PubMed has no such article.\n");
                }
            }
        }
    }
    for id in ids.iter().filter(|id| !is_pmid(id)) {
        match job(ctx, id).await? {
            Some(research) => text.push_str(&describe(&research, true)),
            None => {
                let _ = writeln!(
                    text,
                    "{id:.64}: no such item (ids are PMIDs or research job ids).\n"
                );
            }
        }
    }
    Ok(done(text))
}

/// `list_research`: the caller's jobs, newest first.
pub async fn list(ctx: &ToolContext<'_>, input: &Value) -> AppResult<ToolOutcome> {
    let limit = input["limit"].as_u64().unwrap_or(DEFAULT_LIST);
    let page = index::LIST
        .page(&Kv::new(ctx.env)?, &ctx.owner.id, limit, None)
        .await?;
    if page.items.is_empty() {
        return Ok(done("The user has no research jobs yet.".into()));
    }
    let count = page.items.len();
    let mut text = format!(
        "{count} research {}, newest first:\n",
        if count == 1 { "job" } else { "jobs" }
    );
    for item in &page.items {
        let _ = writeln!(
            text,
            "- {} | {} | {}",
            item["id"].as_str().unwrap_or(""),
            item["title"].as_str().unwrap_or(""),
            item["status"].as_str().unwrap_or("")
        );
    }
    Ok(done(text))
}

/// `get_research`: one of the caller's jobs.
pub async fn get(ctx: &ToolContext<'_>, input: &Value) -> AppResult<ToolOutcome> {
    let id = text(input, "research_id").unwrap_or("");
    match job(ctx, id).await? {
        Some(research) => Ok(done(describe(&research, false))),
        None => Err(AppError::not_found("research")),
    }
}

/// `compare_reports`: where two providers' reports of a job agree and differ.
pub async fn compare(ctx: &ToolContext<'_>, input: &Value) -> AppResult<ToolOutcome> {
    let id = text(input, "research_id").unwrap_or("");
    let research = job(ctx, id)
        .await?
        .ok_or_else(|| AppError::not_found("research"))?;
    compare_reports(
        &research,
        text(input, "provider_a"),
        text(input, "provider_b"),
    )
    // The comparison quotes the reports (no ids): redacted like them.
    .map(|compared| done(redact(&compared)))
    .map_err(AppError::invalid_request)
}

/// `create_research_draft`: a checked research question for the Research form, as a payload.
pub fn draft(ctx: &ToolContext<'_>, input: &Value) -> AppResult<ToolOutcome> {
    let prompt = text(input, "prompt").unwrap_or("");
    if prompt.is_empty() || prompt.chars().count() > MAX_PROMPT_CHARS {
        let why = format!("the question must be 1 to {MAX_PROMPT_CHARS} characters");
        return Err(AppError::invalid_request(why));
    }
    let configured = ctx.settings.providers.names();
    let providers: Vec<String> = match input["providers"].as_array() {
        Some(list) => list
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        None => configured.clone(),
    };
    if let Some(unknown) = providers.iter().find(|p| !configured.contains(p)) {
        let why = format!(
            "provider `{unknown:.64}` is not configured; configured: {}",
            configured.join(", ")
        );
        return Err(AppError::invalid_request(why));
    }
    let mut payload = json!({"prompt": prompt, "providers": providers});
    if let Some(explanation) = text(input, "explanation") {
        payload["explanation"] = json!(explanation);
    }
    let text = format!(
        "Prepared the research question for the Research form, over {}. Nothing runs until the user Accepts it and starts the job.",
        providers.join(", ")
    );
    Ok(ToolOutcome::Done {
        text,
        payload: Some(payload),
    })
}

/// The caller's job `id`, or `None` (any other owner's job included).
async fn job(ctx: &ToolContext<'_>, id: &str) -> AppResult<Option<Research>> {
    if !ids::is_id(id) {
        return Ok(None);
    }
    match read_job(ctx.env, id, ctx.owner).await {
        Ok(research) => Ok(Some(research)),
        Err(error) if error.code() == "not_found" => Ok(None),
        Err(error) => Err(error),
    }
}

/// A job as the model reads it; with `reports`, each provider's report (cut) too.
/// A job for the model: its id, title, status and question, each provider's state (and
/// report), and its synthesis; what people or models wrote is redacted, the id kept whole.
fn describe(research: &Research, reports: bool) -> String {
    let mut text = format!(
        "Research {} \"{}\" ({}): {}\n",
        research.id,
        redact(&research.title),
        research.status.as_str(),
        redact(&cut(&research.prompt, 500))
    );
    for result in &research.llm_results {
        let status = match result.status {
            LlmStatus::Pending => "pending",
            LlmStatus::Processing => "processing",
            LlmStatus::Completed => "completed",
            LlmStatus::Failed => "failed",
        };
        let _ = writeln!(text, "- {}: {status}", result.provider);
        if reports && let Some(report) = &result.result {
            let _ = writeln!(text, "{}", redact(&cut(report, MAX_ITEM_CHARS)));
        }
    }
    if let Some(synthesis) = &research.synthesized_result {
        let _ = writeln!(
            text,
            "Synthesis:\n{}",
            redact(&cut(synthesis, MAX_ITEM_CHARS))
        );
    }
    text.push('\n');
    text
}

fn done(text: String) -> ToolOutcome {
    ToolOutcome::Done {
        text: text.trim_end().to_owned(),
        payload: None,
    }
}
