//! `search_pubmed`: a PubMed search through the E-utilities, with progress (searching, then
//! fetching summaries), its results as text for the model and as a `pubmed_search_results`
//! payload for the client.

use serde_json::{Value, json};
use stepwise_core::agent::ToolOutcome;
use stepwise_core::pubmed::{Search, Sort};

use super::{ToolContext, text};
use crate::articles::eutils::Eutils;
use crate::platform::error::AppResult;
use crate::platform::output::Output;

const TOOL: &str = "search_pubmed";
/// Results a search gives the model by default.
const DEFAULT_RESULTS: u32 = 10;

/// Runs the search the model asked for.
pub async fn search(
    ctx: &ToolContext<'_>,
    input: &Value,
    out: &mut Output,
) -> AppResult<ToolOutcome> {
    let sort = match text(input, "sort") {
        Some(sort) => Sort::parse(sort)?,
        None => Sort::Relevance,
    };
    let per_page = input["max_results"]
        .as_u64()
        .map_or(DEFAULT_RESULTS, |n| n as u32);
    let search = Search::new(
        text(input, "query").unwrap_or(""),
        text(input, "mindate"),
        text(input, "maxdate"),
        sort,
        1,
        per_page,
    )?;
    let eutils = Eutils::new(ctx.env);
    out.tool_progress(TOOL, "searching", "Searching PubMed", 0.1)
        .await;
    let ids = eutils.search_ids(&search).await?;
    let count = ids.pmids.len();
    let message = format!(
        "Fetching summaries of {count} {}",
        if count == 1 { "article" } else { "articles" }
    );
    out.tool_progress(TOOL, "fetching_summaries", &message, 0.6)
        .await;
    let articles = eutils.summaries(&ids.pmids).await?;
    out.tool_progress(TOOL, "done", "Search complete", 1.0)
        .await;

    let mut text = format!(
        "PubMed search {}: {} articles found",
        json!(search.query),
        ids.count
    );
    if articles.is_empty() {
        text.push_str("; none to show.");
    } else {
        text.push_str(&format!("; the first {}:\n", articles.len()));
    }
    for article in &articles {
        let year = article.year.map_or("n.d.".to_owned(), |y| y.to_string());
        text.push_str(&format!(
            "- PMID {} ({year}, {}): {}\n",
            article.pmid, article.journal, article.title
        ));
    }
    let payload = json!({"query": search.query, "count": ids.count, "articles": articles});
    Ok(ToolOutcome::Done {
        text: text.trim_end().to_owned(),
        payload: Some(payload),
    })
}
