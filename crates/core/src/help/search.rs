//! Ranking: BM25 hits from the full-text index and, when an embeddings provider is configured,
//! cosine similarity of stored article vectors, fused by reciprocal rank fusion. A hit counts
//! only above a score threshold; below it the desk says it has no answer.

use serde::{Deserialize, Serialize};

/// The `k` of reciprocal rank fusion: `score = Σ 1 / (k + rank)` over the lists a hit is in.
pub const RRF_K: f64 = 60.0;
/// Most hits taken from each list.
pub const MAX_HITS: usize = 10;
/// Longest embedding accepted from a provider.
pub const MAX_DIMENSIONS: usize = 4096;

/// Thresholds below which a hit is not an answer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    /// Least BM25 score (FTS5's `bm25()` negated, so larger is better).
    pub min_bm25: f64,
    /// Least cosine similarity of the question's and the article's vectors.
    pub min_cosine: f64,
}

/// The relevance floor of BM25 alone, the search a newcomer runs (no embeddings endpoint).
///
/// Chosen from scores measured on the starter knowledge base (docs/help/starter-kb.json, its 21
/// articles indexed as migrations/0002 does: FTS5 `bm25()`, title weight 4, body 1) for 67
/// questions a user could ask about the app and 36 it has no answer to; every question, its best
/// hits and their scores are in tests/vectors/help_relevance.json. When BM25's best hit answered a
/// relevant question, it scored 2.22 to 11.0, except for 6 questions made only of words most
/// articles share (0.56 "where are my streams?" to 1.46 "how can I remove a stream?"). Unrelated
/// questions scored 0 to 3.86, 30 of 36 below 2.0 ("can I export my streams to Excel?" 0.56).
/// Every score between 1.46 and 2.22 was an unrelated question's, so the floor sits in that gap:
/// at 2.0 the desk answers 57 of the relevant questions from the right article and 6 unrelated
/// ones, where the former floor of 1.0 answered 59 and 14. Below the floor the desk says it has no
/// answer and offers a person.
pub const MIN_BM25: f64 = 2.0;
/// The least cosine similarity that counts, when an embeddings endpoint is configured.
pub const MIN_COSINE: f64 = 0.5;

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            min_bm25: MIN_BM25,
            min_cosine: MIN_COSINE,
        }
    }
}

/// A hit of one list: an article id and its score there, best first in its list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// The article.
    pub id: String,
    /// Its score in this list.
    pub score: f64,
}

/// A fused hit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ranked {
    /// The article.
    pub id: String,
    /// Its reciprocal-rank-fusion score.
    pub score: f64,
    /// Its BM25 score, when the full-text index found it.
    pub bm25: Option<f64>,
    /// Its cosine similarity, when vectors were compared.
    pub cosine: Option<f64>,
}

/// Fuses the BM25 list and the (possibly empty) vector list, keeping hits that pass a threshold
/// in either, best first (ties by id).
///
/// ```
/// use stepwise_core::help::{Candidate, Thresholds, fuse};
/// let c = |id: &str, score| Candidate { id: id.into(), score };
/// let bm25 = [c("keys", 3.0), c("share", 2.5), c("weak", 0.2)];
/// let vectors = [c("share", 0.9), c("keys", 0.7)];
/// let ranked = fuse(&bm25, &vectors, Thresholds::default());
/// let ids: Vec<&str> = ranked.iter().map(|r| r.id.as_str()).collect();
/// assert_eq!(ids, ["keys", "share"]); // tied on fusion, ordered by id; "weak" passes no threshold
/// ```
pub fn fuse(bm25: &[Candidate], vectors: &[Candidate], thresholds: Thresholds) -> Vec<Ranked> {
    let mut fused: Vec<Ranked> = Vec::new();
    // Only hits that pass their list's threshold take part: a list of weak hits must not lift
    // an article by its rank alone.
    let mut add = |list: &[Candidate], is_bm25: bool| {
        let least = if is_bm25 {
            thresholds.min_bm25
        } else {
            thresholds.min_cosine
        };
        let passing = list.iter().filter(|hit| hit.score >= least);
        for (rank, hit) in passing.take(MAX_HITS).enumerate() {
            let share = 1.0 / (RRF_K + rank as f64 + 1.0);
            let entry = match fused.iter().position(|r| r.id == hit.id) {
                Some(i) => &mut fused[i],
                None => {
                    fused.push(Ranked {
                        id: hit.id.clone(),
                        score: 0.0,
                        bm25: None,
                        cosine: None,
                    });
                    fused.last_mut().expect("just pushed")
                }
            };
            entry.score += share;
            if is_bm25 {
                entry.bm25 = Some(hit.score);
            } else {
                entry.cosine = Some(hit.score);
            }
        }
    };
    add(bm25, true);
    add(vectors, false);
    fused.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.id.cmp(&b.id)));
    fused
}

/// The cosine similarity of two vectors (0 when either is zero or their lengths differ).
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    if a.len() != b.len() || a.is_empty() {
        return 0.0;
    }
    let (mut dot, mut aa, mut bb) = (0.0f64, 0.0f64, 0.0f64);
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (f64::from(*x), f64::from(*y));
        dot += x * y;
        aa += x * x;
        bb += y * y;
    }
    if aa == 0.0 || bb == 0.0 {
        return 0.0;
    }
    dot / (aa.sqrt() * bb.sqrt())
}

/// The articles most similar to `query`, best first, at most [`MAX_HITS`].
pub fn by_similarity(query: &[f32], articles: &[(String, Vec<f32>)]) -> Vec<Candidate> {
    let mut hits: Vec<Candidate> = articles
        .iter()
        .map(|(id, vector)| Candidate {
            id: id.clone(),
            score: cosine(query, vector),
        })
        .collect();
    hits.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.id.cmp(&b.id)));
    hits.truncate(MAX_HITS);
    hits
}

/// The body of an OpenAI-compatible `POST /embeddings` request.
pub fn embeddings_request(model: &str, inputs: &[&str]) -> String {
    serde_json::json!({ "model": model, "input": inputs }).to_string()
}

#[derive(Deserialize)]
struct EmbeddingsAnswer {
    data: Vec<EmbeddingItem>,
}

#[derive(Deserialize)]
struct EmbeddingItem {
    embedding: Vec<f32>,
    #[serde(default)]
    index: Option<usize>,
}

/// Reads an OpenAI-compatible embeddings answer holding `expected` vectors of one length, in
/// input order (by `index` when given); an error names what is wrong.
pub fn read_embeddings(json: &str, expected: usize) -> Result<Vec<Vec<f32>>, String> {
    let answer: EmbeddingsAnswer =
        serde_json::from_str(json).map_err(|e| format!("not an embeddings answer: {e}"))?;
    if answer.data.len() != expected {
        return Err(format!(
            "{} vectors for {expected} inputs",
            answer.data.len()
        ));
    }
    let mut items = answer.data;
    if items.iter().all(|i| i.index.is_some()) {
        items.sort_by_key(|i| i.index);
    }
    let dims = items.first().map_or(0, |i| i.embedding.len());
    if dims == 0 || dims > MAX_DIMENSIONS || items.iter().any(|i| i.embedding.len() != dims) {
        return Err(format!(
            "vectors must share one length of 1 to {MAX_DIMENSIONS}"
        ));
    }
    Ok(items.into_iter().map(|i| i.embedding).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(id: &str, score: f64) -> Candidate {
        Candidate {
            id: id.into(),
            score,
        }
    }

    #[test]
    fn fusion_rewards_agreement_and_drops_weak_hits() {
        let ranked = fuse(
            &[c("a", 5.0), c("b", 4.0), c("c", 3.0)],
            &[c("c", 0.9), c("b", 0.8), c("z", 0.1)],
            Thresholds::default(),
        );
        let ids: Vec<&str> = ranked.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["c", "b", "a"]);
        assert_eq!(ranked[0].cosine, Some(0.9));
        // "z" is below the cosine threshold: it neither appears nor takes a rank from others.
        let weak_first = fuse(
            &[c("a", 5.0)],
            &[c("z", 0.1), c("a", 0.9)],
            Thresholds::default(),
        );
        assert_eq!(weak_first[0].score, 2.0 / (RRF_K + 1.0));
        assert!(fuse(&[c("a", 0.5)], &[], Thresholds::default()).is_empty());
    }

    #[test]
    fn embeddings_are_read_in_input_order() {
        let json = r#"{"data":[{"index":1,"embedding":[0,1]},{"index":0,"embedding":[1,0]}]}"#;
        assert_eq!(
            read_embeddings(json, 2).unwrap(),
            vec![vec![1.0, 0.0], vec![0.0, 1.0]]
        );
        assert!(read_embeddings(json, 3).is_err());
        assert!(read_embeddings(r#"{"data":[{"embedding":[1]},{"embedding":[1,2]}]}"#, 2).is_err());
        assert!((cosine(&[1.0, 0.0], &[1.0, 0.0]) - 1.0).abs() < 1e-9);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
        let top = by_similarity(
            &[1.0, 0.0],
            &[("x".into(), vec![0.0, 1.0]), ("y".into(), vec![1.0, 0.1])],
        );
        assert_eq!(top[0].id, "y");
    }
}
