-- What a web page was when the service saw it: the bytes as fetched (kept under evidence/ like
-- downloaded images), where the fetch ended, what the server said, and a hash of every stored byte.
CREATE TABLE page_captures (
  id TEXT PRIMARY KEY,
  evidence_id TEXT NOT NULL REFERENCES evidence (id) ON DELETE CASCADE,
  submission_id TEXT NOT NULL REFERENCES submissions (id) ON DELETE CASCADE,
  page_url TEXT NOT NULL,
  final_url TEXT NOT NULL,
  http_status INTEGER NOT NULL,
  content_type TEXT,
  date_header TEXT,
  last_modified TEXT,
  bytes INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  media_path TEXT,
  image_sha256 TEXT,
  fetched_at TEXT NOT NULL
);
CREATE INDEX page_captures_evidence ON page_captures (evidence_id, fetched_at);
CREATE INDEX page_captures_submission ON page_captures (submission_id, fetched_at);
CREATE INDEX page_captures_media ON page_captures (fetched_at) WHERE media_path IS NOT NULL;
-- A case's audit events (bundle) are read by target instead of scanning the whole log.
CREATE INDEX audit_events_target ON audit_events (target_type, target_id);
