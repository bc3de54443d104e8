//! A stream's literature (phase 1), kept per owner and stream in KV when the Articles tab
//! searches or fetches abstracts for a stream (`stream_id` on `GET /api/articles/search` and
//! `/abstracts`): the last search's query, count and first page, and the abstracts fetched.
//! It expires with its stream (`streams::store::seconds_left`). Failures are logged: keeping it
//! never fails the search.

use stepwise_core::handshake::artifacts::MAX_LITERATURE_ARTICLES;
use stepwise_core::handshake::{AbstractNote, ArticleNote, Literature};
use stepwise_core::pubmed::{Abstract, ArticleSummary};
use worker::Env;

use super::sources::literature_key;
use crate::platform::deadline::now_ms;
use crate::platform::error::AppResult;
use crate::platform::kv::Kv;
use crate::platform::owner::Owner;
use crate::streams;
use crate::streams::store::{retention_seconds, seconds_left};

/// Keeps a search of the caller's stream `stream_id` (ignored for another owner's).
pub async fn remember_search(
    env: &Env,
    owner: &Owner,
    stream_id: &str,
    query: &str,
    count: u64,
    articles: &[ArticleSummary],
) {
    let kept = async {
        let kv = Kv::new(env)?;
        let stream = streams::find(&kv, owner, stream_id).await?;
        let ttl = seconds_left(&stream, retention_seconds(env));
        let key = literature_key(&owner.id, stream_id);
        let mut literature: Literature = kv.json(&key).await?.unwrap_or_default();
        literature.query = query.to_owned();
        literature.count = count;
        literature.searched_at = now_ms();
        literature.articles = articles
            .iter()
            .take(MAX_LITERATURE_ARTICLES)
            .map(|a| ArticleNote {
                pmid: a.pmid.clone(),
                title: a.title.clone(),
                journal: a.journal.clone(),
                year: a.year,
            })
            .collect();
        kv.put_json(&key, &literature, Some(ttl)).await
    };
    log(kept.await, stream_id);
}

/// Keeps fetched abstracts for the caller's stream `stream_id`.
pub async fn remember_abstracts(env: &Env, owner: &Owner, stream_id: &str, abstracts: &[Abstract]) {
    let kept = async {
        let kv = Kv::new(env)?;
        let stream = streams::find(&kv, owner, stream_id).await?;
        let ttl = seconds_left(&stream, retention_seconds(env));
        let key = literature_key(&owner.id, stream_id);
        let mut literature: Literature = kv.json(&key).await?.unwrap_or_default();
        for a in abstracts.iter().filter(|a| !a.text.is_empty()) {
            literature.remember_abstract(AbstractNote {
                pmid: a.pmid.clone(),
                title: a.title.clone(),
                text: a.text.clone(),
            });
        }
        kv.put_json(&key, &literature, Some(ttl)).await
    };
    log(kept.await, stream_id);
}

fn log(result: AppResult<()>, stream_id: &str) {
    if let Err(error) = result {
        worker::console_warn!("literature of stream {stream_id}: not kept: {error}");
    }
}
