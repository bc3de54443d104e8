//! The knowledge base in D1 (`HELP_DB`, schema in `migrations/`): articles, their FTS5 index
//! ranked by BM25 (title weighted 4, body 1) and the stored article vectors. The users' search
//! reads only the users' articles: operators' (`core::help::doc::OPERATOR_PREFIX`) are listed,
//! never searched. Rows come back as one JSON text built by SQLite (`json_group_array`), read by
//! serde_json like every other JSON of the Worker.

use serde::{Deserialize, Serialize};
use stepwise_core::help::doc::{Audience, OPERATOR_PREFIX};
use stepwise_core::help::search::MAX_HITS;
use stepwise_core::help::{Candidate, HelpDoc};
use wasm_bindgen::JsValue;
use worker::{D1Database, D1PreparedStatement, Env};

use crate::platform::error::{AppError, AppResult};

/// The D1 binding's name in wrangler.toml.
const BINDING: &str = "HELP_DB";
/// Articles written in one D1 batch (one transaction).
const WRITE_CHUNK: usize = 25;
/// Most stored vectors compared per search.
const MAX_VECTORS: usize = 2000;

/// The columns of an article as one JSON object.
const DOC_OBJECT: &str = "json_object('id', id, 'title', title, 'body', body, 'language', \
language, 'clarifying_questions', json(clarifying_questions), 'requires_handoff', \
json(CASE WHEN requires_handoff THEN 'true' ELSE 'false' END), 'updated_at', updated_at)";

/// An article as the list shows it.
#[derive(Debug, Serialize, Deserialize)]
pub struct DocSummary {
    /// Its id.
    pub id: String,
    /// Whom it is for (from its id).
    #[serde(default = "user_audience")]
    pub audience: Audience,
    /// Its title.
    pub title: String,
    /// Its language.
    pub language: String,
    /// How many clarifying questions it asks.
    pub questions: u32,
    /// Whether answering from it hands the session to a person.
    pub requires_handoff: bool,
    /// When it last changed.
    pub updated_at: u64,
}

fn user_audience() -> Audience {
    Audience::User
}

/// A SQL condition on `column` (an article id) keeping the users' articles, with `?2` bound to
/// [`operator_prefix`].
fn for_users(column: &str) -> String {
    format!("substr({column}, 1, length(?2)) <> ?2")
}

fn operator_prefix() -> JsValue {
    OPERATOR_PREFIX.into()
}

/// What an import changed.
#[derive(Debug, Default, Serialize)]
pub struct ImportReport {
    /// Articles that did not exist.
    pub created: Vec<String>,
    /// Articles whose content changed.
    pub updated: Vec<String>,
    /// Articles sent again as they are (their `updated_at` is kept).
    pub unchanged: Vec<String>,
}

/// The knowledge base of this environment.
pub struct Kb {
    db: D1Database,
}

impl Kb {
    /// The database bound to the Worker.
    pub fn new(env: &Env) -> AppResult<Kb> {
        Ok(Kb {
            db: env.d1(BINDING)?,
        })
    }

    async fn json_rows(&self, sql: &str, binds: &[JsValue]) -> AppResult<String> {
        let statement = self.db.prepare(sql).bind(binds)?;
        let text: Option<String> = statement.first(Some("j")).await?;
        Ok(text.unwrap_or_else(|| "[]".into()))
    }

    /// The best BM25 hits of an FTS5 query (made by the core, words quoted) among the users'
    /// articles, best first.
    pub async fn bm25(&self, fts: &str) -> AppResult<Vec<Candidate>> {
        let sql = format!(
            "SELECT json_group_array(json_object('id', id, 'score', score)) AS j FROM \
             (SELECT doc_id AS id, -bm25(help_docs_fts, 0.0, 4.0, 1.0) AS score \
             FROM help_docs_fts WHERE help_docs_fts MATCH ?1 AND {} \
             ORDER BY score DESC LIMIT {MAX_HITS})",
            for_users("doc_id")
        );
        let binds = [fts.into(), operator_prefix()];
        let mut hits: Vec<Candidate> = serde_json::from_str(&self.json_rows(&sql, &binds).await?)?;
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.id.cmp(&b.id)));
        Ok(hits)
    }

    /// One article.
    pub async fn doc(&self, id: &str) -> AppResult<Option<HelpDoc>> {
        let sql =
            format!("SELECT json_group_array({DOC_OBJECT}) AS j FROM help_docs WHERE id = ?1");
        let docs: Vec<HelpDoc> = serde_json::from_str(&self.json_rows(&sql, &[id.into()]).await?)?;
        Ok(docs.into_iter().next())
    }

    /// Every article's summary, by title, each with its audience.
    pub async fn list(&self) -> AppResult<Vec<DocSummary>> {
        let sql = "SELECT json_group_array(json_object('id', id, 'title', title, 'language', \
                   language, 'questions', json_array_length(clarifying_questions), \
                   'requires_handoff', json(CASE WHEN requires_handoff THEN 'true' ELSE 'false' END), \
                   'updated_at', updated_at)) AS j FROM (SELECT * FROM help_docs ORDER BY title, id)";
        let mut docs: Vec<DocSummary> = serde_json::from_str(&self.json_rows(sql, &[]).await?)?;
        for doc in &mut docs {
            doc.audience = Audience::of(&doc.id);
        }
        Ok(docs)
    }

    /// Stores checked articles: new ones are created, changed ones replaced (index and vectors
    /// with them), identical ones left as they are, so an import can be repeated.
    pub async fn import(&self, docs: &[HelpDoc]) -> AppResult<ImportReport> {
        let ids: Vec<&str> = docs.iter().map(|d| d.id.as_str()).collect();
        let sql = format!(
            "SELECT json_group_array({DOC_OBJECT}) AS j FROM help_docs \
             WHERE id IN (SELECT value FROM json_each(?1))"
        );
        let ids_json = serde_json::to_string(&ids)?;
        let existing: Vec<HelpDoc> =
            serde_json::from_str(&self.json_rows(&sql, &[ids_json.into()]).await?)?;
        let mut report = ImportReport::default();
        let mut writes: Vec<&HelpDoc> = Vec::new();
        for doc in docs {
            match existing.iter().find(|e| e.id == doc.id) {
                None => report.created.push(doc.id.clone()),
                Some(old) if same_content(old, doc) => {
                    report.unchanged.push(doc.id.clone());
                    continue;
                }
                Some(_) => report.updated.push(doc.id.clone()),
            }
            writes.push(doc);
        }
        for chunk in writes.chunks(WRITE_CHUNK) {
            let mut statements = Vec::with_capacity(chunk.len() * 4);
            for doc in chunk {
                statements.extend(self.write_statements(doc)?);
            }
            self.db.batch(statements).await?;
        }
        Ok(report)
    }

    fn write_statements(&self, doc: &HelpDoc) -> AppResult<Vec<D1PreparedStatement>> {
        let questions = serde_json::to_string(&doc.clarifying_questions)?;
        let id: JsValue = doc.id.as_str().into();
        Ok(vec![
            self.db
                .prepare(
                    "INSERT INTO help_docs (id, title, body, language, clarifying_questions, \
                     requires_handoff, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) \
                     ON CONFLICT(id) DO UPDATE SET title = excluded.title, body = excluded.body, \
                     language = excluded.language, clarifying_questions = \
                     excluded.clarifying_questions, requires_handoff = excluded.requires_handoff, \
                     updated_at = excluded.updated_at",
                )
                .bind(&[
                    id.clone(),
                    doc.title.as_str().into(),
                    doc.body.as_str().into(),
                    doc.language.as_str().into(),
                    questions.into(),
                    JsValue::from_f64(f64::from(u8::from(doc.requires_handoff))),
                    JsValue::from_f64(doc.updated_at as f64),
                ])?,
            self.db
                .prepare("DELETE FROM help_docs_fts WHERE doc_id = ?1")
                .bind(std::slice::from_ref(&id))?,
            self.db
                .prepare("INSERT INTO help_docs_fts (doc_id, title, body) VALUES (?1, ?2, ?3)")
                .bind(&[
                    id.clone(),
                    doc.title.as_str().into(),
                    doc.body.as_str().into(),
                ])?,
            self.db
                .prepare("DELETE FROM help_embeddings WHERE doc_id = ?1")
                .bind(&[id])?,
        ])
    }

    /// The stored vectors of `model` of the users' articles.
    pub async fn vectors(&self, model: &str) -> AppResult<Vec<(String, Vec<f32>)>> {
        let sql = format!(
            "SELECT json_group_array(json_array(doc_id, json(vector))) AS j FROM \
             (SELECT doc_id, vector FROM help_embeddings WHERE model = ?1 AND {} \
             ORDER BY doc_id LIMIT {MAX_VECTORS})",
            for_users("doc_id")
        );
        Ok(serde_json::from_str(
            &self
                .json_rows(&sql, &[model.into(), operator_prefix()])
                .await?,
        )?)
    }

    /// Up to `limit` users' articles without a vector of `model`: id and the text to embed.
    pub async fn without_vectors(
        &self,
        model: &str,
        limit: usize,
    ) -> AppResult<Vec<(String, String)>> {
        let sql = format!(
            "SELECT json_group_array(json_array(id, text)) AS j FROM (SELECT id, \
             substr(title || char(10) || body, 1, 8000) AS text FROM help_docs WHERE id NOT IN \
             (SELECT doc_id FROM help_embeddings WHERE model = ?1) AND {} ORDER BY id LIMIT {limit})",
            for_users("id")
        );
        Ok(serde_json::from_str(
            &self
                .json_rows(&sql, &[model.into(), operator_prefix()])
                .await?,
        )?)
    }

    /// Stores vectors of `model`.
    pub async fn store_vectors(
        &self,
        model: &str,
        vectors: &[(String, Vec<f32>)],
    ) -> AppResult<()> {
        let mut statements = Vec::with_capacity(vectors.len());
        for (id, vector) in vectors {
            statements.push(
                self.db
                    .prepare(
                        "INSERT OR REPLACE INTO help_embeddings (doc_id, model, vector) \
                         VALUES (?1, ?2, ?3)",
                    )
                    .bind(&[
                        id.as_str().into(),
                        model.into(),
                        serde_json::to_string(vector)?.into(),
                    ])?,
            );
        }
        if !statements.is_empty() {
            self.db.batch(statements).await.map_err(AppError::from)?;
        }
        Ok(())
    }
}

fn same_content(a: &HelpDoc, b: &HelpDoc) -> bool {
    a.title == b.title
        && a.body == b.body
        && a.language == b.language
        && a.clarifying_questions == b.clarifying_questions
        && a.requires_handoff == b.requires_handoff
}
