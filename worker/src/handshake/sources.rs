//! Loading what the caller owns that a turn's context comes from: the stream in view, its
//! literature (KV), the job whose phase-3 outputs apply (the one in view, else the stream's
//! newest with a synthesis) and, when the analyzer must let the user choose, the owner's newest
//! finished jobs. Everything is read as the caller: another owner's data is never loaded.

use serde_json::Value;
use stepwise_core::handshake::{Literature, Sources};
use stepwise_core::research::{Research, ResearchStatus};
use stepwise_core::streams::SavedStream;
use worker::Env;

use crate::platform::error::AppResult;
use crate::platform::ids;
use crate::platform::kv::Kv;
use crate::platform::owner::Owner;
use crate::research::{index, read_job};

/// Index entries read to find a stream's job or candidates.
const INDEX_SCAN: u64 = 50;
/// Candidate jobs offered at most.
pub const MAX_CANDIDATES: usize = 4;

pub use crate::streams::store::literature_key;

/// The caller's sources for a turn.
#[derive(Default)]
pub struct Loaded {
    /// The stream in view.
    pub stream: Option<SavedStream>,
    /// Its literature.
    pub literature: Option<Literature>,
    /// Jobs loaded: the applicable one first, then candidates.
    pub jobs: Vec<Research>,
    /// Whether `jobs[0]` is the applicable job (in view, or the stream's).
    pub has_job: bool,
    /// The owner's newest finished jobs, `(id, title)`, when none applies.
    pub candidates: Vec<(String, String)>,
}

impl Loaded {
    /// The sources as the core reads them.
    pub fn sources(&self) -> Sources<'_> {
        Sources {
            stream: self.stream.as_ref(),
            literature: self.literature.as_ref(),
            jobs: &self.jobs,
        }
    }

    /// The applicable job.
    pub fn job(&self) -> Option<&Research> {
        self.jobs.first().filter(|_| self.has_job)
    }

    /// The furthest phase reached: 0 with a stream, 1 with literature, 2 with a job, 3 with a
    /// synthesis, 4 once published.
    pub fn active_phase(&self) -> u8 {
        match self.job() {
            Some(job) if job.share_info.is_some() => 4,
            Some(job) if job.synthesized_result.is_some() => 3,
            Some(_) => 2,
            None if self.literature.is_some() => 1,
            None => 0,
        }
    }

    /// The key paths the baseline already carries (the applicable job's phase-3 outputs).
    pub fn held(&self) -> Vec<String> {
        match self.job() {
            Some(job) if job.synthesized_result.is_some() => vec![
                format!("research/{}/synthesis/summary", job.id),
                format!("research/{}/synthesis/points_of_interest", job.id),
            ],
            _ => Vec::new(),
        }
    }
}

/// Loads the sources of `owner` for the stream and job in view. A job id that is not the
/// caller's is ignored (`strict`: refused with 404), like a missing one.
pub async fn load(
    env: &Env,
    owner: &Owner,
    stream: Option<SavedStream>,
    research_id: Option<&str>,
    strict: bool,
) -> AppResult<Loaded> {
    let kv = Kv::new(env)?;
    let literature = match &stream {
        Some(s) => kv.json(&literature_key(&owner.id, &s.id)).await?,
        None => None,
    };
    let mut loaded = Loaded {
        stream,
        literature,
        ..Loaded::default()
    };
    if let Some(id) = research_id.filter(|id| ids::is_id(id)) {
        match read_job(env, id, owner).await {
            Ok(job) => {
                loaded.jobs.push(job);
                loaded.has_job = true;
            }
            Err(error) if strict => return Err(error),
            Err(_) => {}
        }
    } else if let Some(id) = research_id
        && strict
    {
        return Err(crate::platform::error::AppError::not_found(&format!(
            "research `{id:.40}`"
        )));
    }
    if loaded.has_job {
        return Ok(loaded);
    }
    let page = index::LIST.page(&kv, &owner.id, INDEX_SCAN, None).await?;
    let finished = |entry: &&Value| entry["status"] == "completed";
    if let Some(stream) = &loaded.stream {
        let mine = page
            .items
            .iter()
            .filter(finished)
            .find(|e| e["stream_id"].as_str() == Some(stream.id.as_str()));
        if let Some(id) = mine.and_then(|e| e["id"].as_str())
            && let Ok(job) = read_job(env, id, owner).await
            && job.status == ResearchStatus::Completed
        {
            loaded.jobs.push(job);
            loaded.has_job = true;
            return Ok(loaded);
        }
    }
    loaded.candidates = page
        .items
        .iter()
        .filter(finished)
        .filter_map(|e| {
            Some((
                e["id"].as_str()?.to_owned(),
                e["title"].as_str()?.to_owned(),
            ))
        })
        .take(MAX_CANDIDATES)
        .collect();
    Ok(loaded)
}

/// Loads the candidate jobs (for suggestions), after the analyzer asked for a choice.
pub async fn load_candidates(env: &Env, owner: &Owner, loaded: &mut Loaded) {
    for (id, _) in loaded.candidates.clone() {
        if let Ok(job) = read_job(env, &id, owner).await {
            loaded.jobs.push(job);
        }
    }
}

/// Loads the jobs and stream named by `key_paths` that are the caller's and not loaded yet
/// (the model may ask for any artifact of the owner's, not only those in view).
pub async fn load_paths(env: &Env, owner: &Owner, loaded: &mut Loaded, key_paths: &[&str]) {
    for path in key_paths {
        let parts: Vec<&str> = path.split('/').collect();
        match parts.as_slice() {
            ["research", id, ..] if ids::is_id(id) && !loaded.jobs.iter().any(|j| j.id == *id) => {
                // Pushed after the applicable job, if any (`jobs[0]` with `has_job`).
                if let Ok(job) = read_job(env, id, owner).await {
                    loaded.jobs.push(job);
                }
            }
            ["stream", id, ..] if ids::is_id(id) && loaded.stream.is_none() => {
                if let Ok(kv) = Kv::new(env)
                    && let Ok(stream) = crate::streams::find(&kv, owner, id).await
                {
                    loaded.literature =
                        kv.json(&literature_key(&owner.id, id)).await.ok().flatten();
                    loaded.stream = Some(stream);
                }
            }
            _ => {}
        }
    }
}
