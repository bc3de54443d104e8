-- The help desk's knowledge base (docs/help-desk.md): articles, their full-text index
-- (FTS5, BM25 ranking, Porter stemming) and, when an embeddings provider is configured, one
-- vector per article and model. Applied by `wrangler d1 migrations apply stepwise-help`.
CREATE TABLE help_docs (
  id TEXT PRIMARY KEY,
  title TEXT NOT NULL,
  body TEXT NOT NULL,
  language TEXT NOT NULL,
  clarifying_questions TEXT NOT NULL DEFAULT '[]',
  requires_handoff INTEGER NOT NULL DEFAULT 0,
  updated_at INTEGER NOT NULL
);

CREATE VIRTUAL TABLE help_docs_fts USING fts5(
  doc_id UNINDEXED,
  title,
  body,
  tokenize = 'porter unicode61'
);

CREATE TABLE help_embeddings (
  doc_id TEXT NOT NULL,
  model TEXT NOT NULL,
  vector TEXT NOT NULL,
  PRIMARY KEY (doc_id, model)
);
