-- Telemetry of the assistant's context requests (docs/context-on-request.md): one row a
-- request, its outcome and when it ended. Applied with the other migrations of `stepwise-help`.
CREATE TABLE context_requests (
  request_id TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  conversation_id TEXT NOT NULL,
  origin TEXT NOT NULL,
  issued_at INTEGER NOT NULL,
  outcome TEXT,
  resolved_at INTEGER
);

CREATE INDEX context_requests_owner ON context_requests (owner);
