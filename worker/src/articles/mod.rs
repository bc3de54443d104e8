//! The Articles tab's literature search at the edge: `GET /api/articles/search` (a page of
//! PubMed results with their summaries) and `GET /api/articles/abstracts` (abstracts by PMID),
//! through [`eutils::Eutils`]. Parameters are checked by the core before any request.

pub mod eutils;

use stepwise_core::pubmed::{MAX_IDS, Search, Sort, is_pmid};
use worker::{Env, Request, Response};

use self::eutils::Eutils;
use crate::handshake::literature;
use crate::platform::error::{AppError, AppResult};
use crate::platform::owner::Owner;
use crate::platform::url_parts::query_param;

/// Results a page by default.
const DEFAULT_PER_PAGE: u32 = 20;

/// `GET /api/articles/search?query=&mindate=&maxdate=&sort=relevance|date&page=&per_page=
/// &stream_id=`; with the caller's `stream_id`, the search is kept as the stream's literature.
pub async fn search(req: &Request, env: &Env, owner: &Owner) -> AppResult<Response> {
    let url = req.inner().url();
    let param = |name: &str| query_param(&url, name).filter(|v| !v.trim().is_empty());
    let number = |name: &str, default: u32| -> AppResult<u32> {
        match param(name) {
            None => Ok(default),
            Some(text) => text
                .trim()
                .parse()
                .map_err(|_| AppError::invalid_request(format!("`{name}` must be a number"))),
        }
    };
    let sort = match param("sort") {
        Some(sort) => Sort::parse(sort.trim())?,
        None => Sort::Relevance,
    };
    let search = Search::new(
        &param("query").unwrap_or_default(),
        param("mindate").as_deref(),
        param("maxdate").as_deref(),
        sort,
        number("page", 1)?,
        number("per_page", DEFAULT_PER_PAGE)?,
    )?;
    let page = Eutils::new(env).search(&search).await?;
    if let Some(stream_id) = param("stream_id") {
        literature::remember_search(
            env,
            owner,
            stream_id.trim(),
            &search.query,
            page.count,
            &page.articles,
        )
        .await;
    }
    Ok(Response::from_json(&serde_json::json!({
        "query": search.query,
        "mindate": search.mindate,
        "maxdate": search.maxdate,
        "sort": search.sort.as_str(),
        "page": search.page,
        "per_page": search.per_page,
        "count": page.count,
        "translation": page.translation,
        "articles": page.articles,
    }))?)
}

/// `GET /api/articles/abstracts?ids=31,32&stream_id=`: up to 50 PMIDs; with the caller's
/// `stream_id`, the abstracts are kept with the stream's literature.
pub async fn abstracts(req: &Request, env: &Env, owner: &Owner) -> AppResult<Response> {
    let url = req.inner().url();
    let ids = pmids(&query_param(&url, "ids").unwrap_or_default())?;
    let articles = Eutils::new(env).abstracts(&ids).await?;
    if let Some(stream_id) = query_param(&url, "stream_id").filter(|v| !v.trim().is_empty()) {
        literature::remember_abstracts(env, owner, stream_id.trim(), &articles).await;
    }
    Ok(Response::from_json(
        &serde_json::json!({ "articles": articles }),
    )?)
}

/// PMIDs from a comma-separated list: 1 to 50 of them, each 1 to 10 digits.
pub fn pmids(text: &str) -> AppResult<Vec<String>> {
    let ids: Vec<String> = text
        .split(',')
        .map(str::trim)
        .filter(|id| !id.is_empty())
        .map(str::to_owned)
        .collect();
    if ids.is_empty() || ids.len() > MAX_IDS {
        return Err(AppError::invalid_request(format!(
            "`ids` must list 1 to {MAX_IDS} PMIDs"
        )));
    }
    if let Some(bad) = ids.iter().find(|id| !is_pmid(id)) {
        return Err(AppError::invalid_request(format!(
            "`{bad:.20}` is not a PMID (1 to 10 digits)"
        )));
    }
    Ok(ids)
}
