//! The MCP tools and resources performed as their owner: research jobs read through their
//! objects (another owner's job is "not found", as everywhere), a saved stream's PubMed search
//! through the E-utilities client. A tool whose subject is missing answers a tool error
//! (`isError`) the model can read; a resource that is missing is JSON-RPC's -32002.

use futures::{StreamExt, TryStreamExt, stream};
use serde_json::{Value, json};
use stepwise_core::mcp::jsonrpc::{RESOURCE_NOT_FOUND, RpcError};
use stepwise_core::mcp::resources::ResourceUri;
use stepwise_core::mcp::tools::{ARTICLES_PER_PAGE, ToolCall};
use stepwise_core::pubmed::{Search, Sort};
use stepwise_core::streams::SavedStream;
use worker::Env;

use super::person::tool_error;
use crate::articles::eutils::Eutils;
use crate::platform::error::{AppError, AppResult};
use crate::platform::kv::Kv;
use crate::platform::owner::Owner;
use crate::research::{self, index};
use crate::streams;

/// Jobs one `resources/list` page reads (each is one read of its object).
const RESOURCES_PER_PAGE: u64 = 20;
/// Jobs read at once.
const PARALLEL_READS: usize = 6;

/// Runs a tool: `{content, structuredContent}`, or `{content, isError: true}` when what it is
/// about is not the caller's.
pub async fn tool(env: &Env, owner: &Owner, call: &ToolCall) -> AppResult<Value> {
    match call {
        ToolCall::ResearchStart { .. } => Err(AppError::invalid_request(
            "research_start runs in a session (start.rs)",
        )),
        ToolCall::GuidedConfigure { .. } => Ok(tool_error(
            "guided_configure asks each step of the workflow through elicitation: use a client that declares the `elicitation` capability, connected with a session (its `initialize` answers an Mcp-Session-Id), that accepts an event stream.",
        )),
        ToolCall::HelpAsk {
            question,
            session_id,
        } => super::ask::once(env, owner, question, session_id.clone()).await,
        ToolCall::ResearchStatus { research_id } => {
            let Some(job) = research::read_owned(env, owner, research_id).await? else {
                return Ok(not_found("research job", research_id));
            };
            let providers: Vec<Value> = job["llm_results"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|r| json!({"provider": r["provider"], "status": r["status"]}))
                .collect();
            let status = json!({"id": job["id"], "title": job["title"], "status": job["status"],
                "providers": providers, "created_at": job["created_at"],
                "started_at": job["started_at"], "finished_at": job["finished_at"]});
            let lines: Vec<String> = providers
                .iter()
                .map(|p| format!("- {}: {}", text(&p["provider"]), text(&p["status"])))
                .collect();
            let summary = format!(
                "Research “{}” is {}.\n{}",
                text(&job["title"]),
                text(&job["status"]),
                lines.join("\n")
            );
            Ok(answer(summary, status))
        }
        ToolCall::ResearchResult { research_id } => {
            let Some(job) = research::read_owned(env, owner, research_id).await? else {
                return Ok(not_found("research job", research_id));
            };
            let reports: Vec<Value> = job["llm_results"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|r| json!({"provider": r["provider"], "status": r["status"], "report": r["result"]}))
                .collect();
            let synthesis = job["synthesized_result"].clone();
            let mut content = vec![json!({"type": "text", "text": match synthesis.as_str() {
                Some(body) => format!("# Synthesis of “{}”\n\n{body}", text(&job["title"])),
                None => format!("“{}” is {}: no synthesis yet.", text(&job["title"]), text(&job["status"])),
            }})];
            for report in &reports {
                if let Some(body) = report["report"].as_str() {
                    let provider = text(&report["provider"]);
                    content.push(json!({"type": "text", "text": format!("# Report of {provider}\n\n{body}")}));
                    let uri = ResourceUri::Report {
                        research_id: research_id.clone(),
                        provider: provider.clone(),
                    };
                    content.push(json!({"type": "resource_link", "uri": uri.to_uri(),
                        "name": format!("report-{provider}"), "mimeType": "text/markdown"}));
                }
            }
            let structured = json!({"id": job["id"], "status": job["status"], "synthesis": synthesis,
                "points_of_interest": job["points_of_interest"], "reports": reports});
            Ok(json!({"content": content, "structuredContent": structured}))
        }
        ToolCall::StreamArticles { stream_id, page } => {
            let kv = Kv::new(env)?;
            let stream = match streams::find(&kv, owner, stream_id).await {
                Ok(stream) => stream,
                Err(error) if error.status() == 404 => return Ok(not_found("stream", stream_id)),
                Err(error) => return Err(error),
            };
            let query = SavedStream::query_for(&stream.config);
            if query.is_empty() {
                let why = format!(
                    "stream “{}” has no keywords or focus areas to search",
                    stream.name
                );
                return Ok(tool_error(&why));
            }
            let search = Search::new(
                &query,
                None,
                None,
                Sort::Relevance,
                *page,
                ARTICLES_PER_PAGE,
            )?;
            // PubMed failing is the tool's failure, which the model can read and retry.
            let found = match Eutils::new(env).search(&search).await {
                Ok(found) => found,
                Err(error) => {
                    let why = format!("PubMed could not be searched: {}", error.message());
                    return Ok(tool_error(&why));
                }
            };
            let lines: Vec<String> = found
                .articles
                .iter()
                .map(|a| {
                    format!(
                        "- PMID {}: {} ({}, {})",
                        a.pmid,
                        a.title,
                        a.journal,
                        a.year.map_or("n.d.".into(), |y| y.to_string())
                    )
                })
                .collect();
            let summary = format!(
                "PubMed: {} articles for {} (page {page}).\n{}",
                found.count,
                query,
                lines.join("\n")
            );
            let structured = json!({"stream_id": stream_id, "query": query, "count": found.count,
                "page": page, "articles": found.articles});
            Ok(answer(summary, structured))
        }
    }
}

/// `resources/list`: the texts of the caller's completed jobs (a synthesis when one was
/// written, each provider's report), newest job first, a page of jobs at a time (`nextCursor`).
pub async fn resources(env: &Env, owner: &Owner, cursor: Option<String>) -> AppResult<Value> {
    let kv = Kv::new(env)?;
    let page = index::LIST
        .page(&kv, &owner.id, RESOURCES_PER_PAGE, cursor)
        .await
        .map_err(|_| AppError::invalid_request("the cursor is not one this list gave"))?;
    let completed = page
        .items
        .iter()
        .filter(|entry| entry["status"] == "completed")
        .filter_map(|entry| entry["id"].as_str());
    let jobs: Vec<Option<Value>> = stream::iter(completed)
        .map(|id| research::read_owned(env, owner, id))
        .buffered(PARALLEL_READS)
        .try_collect()
        .await?;
    let mut resources = Vec::new();
    for job in jobs.iter().flatten() {
        let research_id = text(&job["id"]);
        let title = text(&job["title"]);
        if job["synthesized_result"].is_string() {
            let uri = ResourceUri::Synthesis {
                research_id: research_id.clone(),
            };
            resources.push(
                json!({"uri": uri.to_uri(), "name": format!("synthesis-{research_id}"),
                "title": format!("Synthesis: {title}"), "mimeType": "text/markdown"}),
            );
        }
        for report in job["llm_results"].as_array().into_iter().flatten() {
            if !report["result"].is_string() {
                continue;
            }
            let provider = text(&report["provider"]);
            let uri = ResourceUri::Report {
                research_id: research_id.clone(),
                provider: provider.clone(),
            };
            resources.push(
                json!({"uri": uri.to_uri(), "name": format!("report-{research_id}-{provider}"),
                "title": format!("{provider}'s report: {title}"), "mimeType": "text/markdown"}),
            );
        }
    }
    let mut result = json!({"resources": resources});
    if let Some(cursor) = page.cursor {
        result["nextCursor"] = cursor.into();
    }
    Ok(result)
}

/// `resources/read`: the synthesis or report as markdown; -32002 when the job is not the
/// caller's, or the text is not written yet.
pub async fn read_resource(
    env: &Env,
    owner: &Owner,
    resource: &ResourceUri,
) -> Result<Value, RpcError> {
    let missing = || RpcError {
        data: Some(json!({"uri": resource.to_uri()})),
        ..RpcError::new(RESOURCE_NOT_FOUND, "Resource not found")
    };
    let job = research::read_owned(env, owner, resource.research_id())
        .await
        .map_err(|error| {
            RpcError::new(stepwise_core::mcp::jsonrpc::INTERNAL_ERROR, error.message())
        })?
        .ok_or_else(missing)?;
    let text = match resource {
        ResourceUri::Synthesis { .. } => job["synthesized_result"].as_str(),
        ResourceUri::Report { provider, .. } => job["llm_results"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|r| r["provider"] == provider.as_str())
            .and_then(|r| r["result"].as_str()),
    }
    .ok_or_else(missing)?;
    Ok(json!({"contents": [{"uri": resource.to_uri(), "mimeType": "text/markdown", "text": text}]}))
}

/// A tool's answer: the text for the model, the same as structured content.
fn answer(summary: String, structured: Value) -> Value {
    json!({"content": [{"type": "text", "text": summary}], "structuredContent": structured})
}

/// A tool error: what was looked for is not the caller's (or does not exist).
fn not_found(what: &str, id: &str) -> Value {
    let why = format!(
        "no {what} `{id}` of yours: check the id (it is 32 hex digits, and only your own are found)"
    );
    tool_error(&why)
}

fn text(value: &Value) -> String {
    value
        .as_str()
        .map_or_else(|| value.to_string(), str::to_owned)
}
