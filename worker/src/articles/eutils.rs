//! PubMed's E-utilities through the Worker (the browser never calls them): `esearch` then
//! `esummary` for a page of results, `efetch` for abstracts, at `PUBMED_BASE_URL` (NCBI's by
//! default) with the `NCBI_API_KEY` secret when set. A service that cannot be reached is a 502
//! `upstream_unreachable`; an answer that cannot be read is a 502 `upstream_error`. Nothing is
//! made up in their place.

use std::time::Duration;

use stepwise_core::pubmed::{
    Abstract, ArticleSummary, DEFAULT_BASE_URL, Search, SearchIds, efetch_url, esummary_url,
    parse_efetch, parse_esearch, parse_esummary,
};
use worker::{Env, Request};

use crate::platform::deadline::{FetchFailure, fetch_within};
use crate::platform::error::{AppError, AppResult};
use crate::platform::settings::{number, var};

/// Default time allowed for one E-utilities request, in ms (`PUBMED_TIMEOUT_MS`).
const DEFAULT_TIMEOUT_MS: u64 = 15_000;
/// Largest answer read, in bytes.
const MAX_ANSWER_BYTES: usize = 4 * 1024 * 1024;

/// A page of search results.
#[derive(Debug, Clone)]
pub struct SearchPage {
    /// Articles matching in all.
    pub count: u64,
    /// How PubMed read the query.
    pub translation: Option<String>,
    /// This page's summaries, in PubMed's order.
    pub articles: Vec<ArticleSummary>,
}

/// The E-utilities of this environment.
pub struct Eutils {
    base: String,
    api_key: Option<String>,
    timeout: Duration,
}

impl Eutils {
    /// The service at `PUBMED_BASE_URL` (default NCBI's), with `NCBI_API_KEY` when set.
    pub fn new(env: &Env) -> Self {
        let api_key = env
            .secret("NCBI_API_KEY")
            .ok()
            .map(|s| s.to_string())
            .or_else(|| var(env, "NCBI_API_KEY"))
            .filter(|k| !k.trim().is_empty());
        Eutils {
            base: var(env, "PUBMED_BASE_URL").unwrap_or_else(|| DEFAULT_BASE_URL.to_owned()),
            api_key,
            timeout: Duration::from_millis(
                number(env, "PUBMED_TIMEOUT_MS").unwrap_or(DEFAULT_TIMEOUT_MS),
            ),
        }
    }

    /// Runs `search` and reads its page's summaries.
    pub async fn search(&self, search: &Search) -> AppResult<SearchPage> {
        let ids = self.search_ids(search).await?;
        let articles = self.summaries(&ids.pmids).await?;
        Ok(SearchPage {
            count: ids.count,
            translation: ids.translation,
            articles,
        })
    }

    /// `esearch`: the count and the page's PMIDs.
    pub async fn search_ids(&self, search: &Search) -> AppResult<SearchIds> {
        let url = search.esearch_url(&self.base, self.key());
        Ok(parse_esearch(&self.get(&url).await?)?)
    }

    /// `esummary`: the summaries of `pmids`, in their order (none for no PMID).
    pub async fn summaries(&self, pmids: &[String]) -> AppResult<Vec<ArticleSummary>> {
        if pmids.is_empty() {
            return Ok(Vec::new());
        }
        let url = esummary_url(&self.base, pmids, self.key());
        Ok(parse_esummary(&self.get(&url).await?, pmids)?)
    }

    /// The abstracts of `pmids` (those PubMed has), in its order.
    pub async fn abstracts(&self, pmids: &[String]) -> AppResult<Vec<Abstract>> {
        let xml = self.get(&efetch_url(&self.base, pmids, self.key())).await?;
        Ok(parse_efetch(&xml))
    }

    fn key(&self) -> Option<&str> {
        self.api_key.as_deref()
    }

    async fn get(&self, url: &str) -> AppResult<String> {
        let request = Request::new(url, worker::Method::Get)
            .map_err(|_| AppError::misconfigured("PUBMED_BASE_URL is not a valid URL"))?;
        let mut response = match fetch_within(request, self.timeout).await {
            Ok(response) => response,
            Err(FetchFailure::Unreachable | FetchFailure::TimedOut) => {
                return Err(AppError::upstream_unreachable("PubMed"));
            }
        };
        let status = response.status_code();
        if !(200..300).contains(&status) {
            return Err(AppError::upstream_error(format!(
                "PubMed answered {status}"
            )));
        }
        let body = response
            .text()
            .await
            .map_err(|_| AppError::upstream_unreachable("PubMed"))?;
        if body.len() > MAX_ANSWER_BYTES {
            return Err(AppError::upstream_error("PubMed's answer is too large"));
        }
        Ok(body)
    }
}
