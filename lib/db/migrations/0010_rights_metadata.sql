-- Rights metadata of the submitted file (issue 15): evidence gets the source `file_metadata` and the
-- group `rights`, and a registry entry may name its submitter. SQLite cannot change a CHECK in place,
-- so evidence is rebuilt. page_captures refers to evidence with ON DELETE CASCADE and foreign keys
-- stay on (D1 cannot switch them off), so dropping evidence would delete every capture: captures are
-- set aside first and put back after, and evidence is dropped only when nothing refers to it.
ALTER TABLE submissions ADD COLUMN submitter TEXT;
CREATE TABLE evidence_rebuilt (
  id TEXT PRIMARY KEY,
  submission_id TEXT NOT NULL REFERENCES submissions (id) ON DELETE CASCADE,
  source TEXT NOT NULL CHECK (source IN ('internal', 'watchlist', 'regional', 'global_vision', 'global_search', 'local_llm', 'file_metadata')),
  kind TEXT NOT NULL,
  group_key TEXT NOT NULL CHECK (group_key IN ('attention', 'watchlist', 'internal', 'rights', 'web_match', 'web_related', 'supporting', 'failures')),
  title TEXT,
  url TEXT,
  image_url TEXT,
  local_media_path TEXT,
  local_media_created_at TEXT,
  query TEXT,
  similarity REAL,
  matched INTEGER NOT NULL DEFAULT 0,
  match_transform TEXT,
  confidence REAL,
  status TEXT CHECK (status IS NULL OR status IN ('판단에 사용', '무관', '오탐', '보류')),
  supporting INTEGER NOT NULL DEFAULT 0,
  face_crop INTEGER NOT NULL DEFAULT 0,
  source_evidence_ids TEXT NOT NULL DEFAULT '[]',
  source_urls TEXT NOT NULL DEFAULT '[]',
  matched_submission_id TEXT,
  knowledge_entry_id TEXT,
  error_code TEXT,
  error_message TEXT,
  created_at TEXT NOT NULL,
  text TEXT
);
INSERT INTO evidence_rebuilt (id, submission_id, source, kind, group_key, title, url, image_url, local_media_path, local_media_created_at,
    query, similarity, matched, match_transform, confidence, status, supporting, face_crop, source_evidence_ids, source_urls,
    matched_submission_id, knowledge_entry_id, error_code, error_message, created_at, text)
  SELECT id, submission_id, source, kind, group_key, title, url, image_url, local_media_path, local_media_created_at,
    query, similarity, matched, match_transform, confidence, status, supporting, face_crop, source_evidence_ids, source_urls,
    matched_submission_id, knowledge_entry_id, error_code, error_message, created_at, text
  FROM evidence;
CREATE TABLE page_captures_kept AS SELECT * FROM page_captures;
DROP TABLE page_captures;
-- Dropping a table fires no triggers, so the evidence counts kept on submissions stay as they are.
DROP TABLE evidence;
ALTER TABLE evidence_rebuilt RENAME TO evidence;
CREATE INDEX evidence_submission ON evidence (submission_id, created_at);
CREATE INDEX evidence_media ON evidence (local_media_created_at) WHERE local_media_path IS NOT NULL;
CREATE TRIGGER evidence_counted_insert AFTER INSERT ON evidence BEGIN UPDATE submissions SET evidence_count = (SELECT COUNT(*) FROM evidence e WHERE e.submission_id = NEW.submission_id), attention_match = EXISTS (SELECT 1 FROM evidence e WHERE e.submission_id = NEW.submission_id AND e.group_key = 'attention' AND (e.status IS NULL OR e.status = '판단에 사용')) WHERE id = NEW.submission_id; END;
CREATE TRIGGER evidence_counted_delete AFTER DELETE ON evidence BEGIN UPDATE submissions SET evidence_count = (SELECT COUNT(*) FROM evidence e WHERE e.submission_id = OLD.submission_id), attention_match = EXISTS (SELECT 1 FROM evidence e WHERE e.submission_id = OLD.submission_id AND e.group_key = 'attention' AND (e.status IS NULL OR e.status = '판단에 사용')) WHERE id = OLD.submission_id; END;
CREATE TRIGGER evidence_counted_update AFTER UPDATE OF status, group_key ON evidence BEGIN UPDATE submissions SET attention_match = EXISTS (SELECT 1 FROM evidence e WHERE e.submission_id = NEW.submission_id AND e.group_key = 'attention' AND (e.status IS NULL OR e.status = '판단에 사용')) WHERE id = NEW.submission_id; END;
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
INSERT INTO page_captures (id, evidence_id, submission_id, page_url, final_url, http_status, content_type, date_header, last_modified,
    bytes, sha256, media_path, image_sha256, fetched_at)
  SELECT id, evidence_id, submission_id, page_url, final_url, http_status, content_type, date_header, last_modified,
    bytes, sha256, media_path, image_sha256, fetched_at
  FROM page_captures_kept;
DROP TABLE page_captures_kept;
CREATE INDEX page_captures_evidence ON page_captures (evidence_id, fetched_at);
CREATE INDEX page_captures_submission ON page_captures (submission_id, fetched_at);
CREATE INDEX page_captures_media ON page_captures (fetched_at) WHERE media_path IS NOT NULL;
