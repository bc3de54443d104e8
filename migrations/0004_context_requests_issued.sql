-- Context-request telemetry is kept for TELEMETRY_RETENTION_DAYS (docs/operating.md): rows issued
-- earlier are deleted as new ones are written, found by this index.
CREATE INDEX context_requests_issued ON context_requests (issued_at);
