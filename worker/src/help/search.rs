//! Hybrid search: BM25 from the full-text index and, when `EMBEDDINGS_BASE_URL` and
//! `EMBEDDINGS_MODEL` name an OpenAI-compatible embeddings endpoint, cosine similarity of the
//! question's vector to the stored article vectors, fused by the core (reciprocal rank fusion,
//! thresholds). Articles still without a vector get one here, a few per search. A failing
//! embeddings endpoint never fails a search: BM25 alone answers and the failure is logged.

use std::time::Duration;

use stepwise_core::help::search::{by_similarity, embeddings_request, read_embeddings};
use stepwise_core::help::{Candidate, HelpDoc, Thresholds, fuse};
use stepwise_core::spend::{Charge, estimate_tokens};
use worker::{Env, Headers, Method, Request, RequestInit, console_warn};

use super::kb::Kb;
use crate::platform::deadline::{FetchFailure, fetch_within};
use crate::platform::error::{AppError, AppResult};
use crate::platform::owner::Owner;
use crate::platform::settings::{number, var};
use crate::platform::spend;

/// Longest wait for the embeddings endpoint.
const EMBEDDINGS_TIMEOUT: Duration = Duration::from_secs(10);
/// Articles embedded per search, at most.
const EMBED_PER_SEARCH: usize = 16;

/// The configured embeddings endpoint.
struct Embeddings {
    url: String,
    model: String,
    key: Option<String>,
}

impl Embeddings {
    fn from_env(env: &Env) -> Option<Embeddings> {
        let base = var(env, "EMBEDDINGS_BASE_URL")?;
        let model = var(env, "EMBEDDINGS_MODEL")?;
        let key = env.secret("EMBEDDINGS_API_KEY").ok().map(|s| s.to_string());
        Some(Embeddings {
            url: format!("{}/embeddings", base.trim_end_matches('/')),
            model,
            key: key.filter(|k| !k.is_empty()),
        })
    }

    async fn embed(&self, inputs: &[&str]) -> AppResult<Vec<Vec<f32>>> {
        let headers = Headers::new();
        headers.set("content-type", "application/json")?;
        if let Some(key) = &self.key {
            headers.set("authorization", &format!("Bearer {key}"))?;
        }
        let mut init = RequestInit::new();
        init.with_method(Method::Post)
            .with_headers(headers)
            .with_body(Some(embeddings_request(&self.model, inputs).into()));
        let request = Request::new_with_init(&self.url, &init)?;
        let mut response = match fetch_within(request, EMBEDDINGS_TIMEOUT).await {
            Ok(response) => response,
            Err(FetchFailure::Unreachable) => {
                return Err(AppError::upstream_unreachable("embeddings"));
            }
            Err(FetchFailure::TimedOut) => {
                return Err(AppError::upstream_error("embeddings timed out"));
            }
        };
        let status = response.status_code();
        let text = response.text().await?;
        if status != 200 {
            return Err(AppError::upstream_error(format!(
                "embeddings answered {status}"
            )));
        }
        read_embeddings(&text, inputs.len()).map_err(AppError::upstream_error)
    }
}

/// The search thresholds (`HELP_MIN_BM25`, `HELP_MIN_COSINE`).
fn thresholds(env: &Env) -> Thresholds {
    let default = Thresholds::default();
    Thresholds {
        min_bm25: number(env, "HELP_MIN_BM25").unwrap_or(default.min_bm25),
        min_cosine: number(env, "HELP_MIN_COSINE").unwrap_or(default.min_cosine),
    }
}

/// The best article for a question that passes the thresholds, if any. The embeddings call
/// is a model call of `owner`'s, charged to the spending guard like any other; refused (or
/// failing), the search ranks by BM25 alone.
pub async fn best(
    env: &Env,
    kb: &Kb,
    fts: Option<&str>,
    text: &str,
    owner: &Owner,
) -> AppResult<Option<HelpDoc>> {
    let bm25 = match fts {
        Some(fts) => kb.bm25(fts).await?,
        None => Vec::new(),
    };
    let vectors = match Embeddings::from_env(env) {
        Some(embeddings) => similar(env, kb, &embeddings, text, owner)
            .await
            .unwrap_or_else(|error| {
                console_warn!("help search: embeddings unavailable, BM25 alone: {error:?}");
                Vec::new()
            }),
        None => Vec::new(),
    };
    let ranked = fuse(&bm25, &vectors, thresholds(env));
    match ranked.first() {
        Some(top) => kb.doc(&top.id).await,
        None => Ok(None),
    }
}

async fn similar(
    env: &Env,
    kb: &Kb,
    embeddings: &Embeddings,
    text: &str,
    owner: &Owner,
) -> AppResult<Vec<Candidate>> {
    let missing = kb
        .without_vectors(&embeddings.model, EMBED_PER_SEARCH)
        .await?;
    let mut inputs: Vec<&str> = missing.iter().map(|(_, t)| t.as_str()).collect();
    inputs.push(text);
    let chars = inputs.iter().map(|i| i.len()).sum();
    let charge = Charge {
        calls: 1,
        tokens: estimate_tokens(chars, 0),
    };
    spend::charge(env, owner, charge).await?;
    let mut vectors = match embeddings.embed(&inputs).await {
        Ok(vectors) => vectors,
        Err(error) => {
            // A call that failed is not one the owner spent.
            if let Err(refund) = spend::refund(env, owner, charge).await {
                console_warn!("help search: the embeddings charge was not given back: {refund}");
            }
            return Err(error);
        }
    };
    let query = vectors.pop().unwrap_or_default();
    let fresh: Vec<(String, Vec<f32>)> =
        missing.into_iter().map(|(id, _)| id).zip(vectors).collect();
    kb.store_vectors(&embeddings.model, &fresh).await?;
    let stored = kb.vectors(&embeddings.model).await?;
    Ok(by_similarity(&query, &stored))
}
