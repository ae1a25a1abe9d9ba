-- Submitted images and their local analysis. JSON columns hold arrays/objects the API returns as-is.
CREATE TABLE submissions (
  id TEXT PRIMARY KEY,
  title TEXT NOT NULL,
  file TEXT NOT NULL,
  origin TEXT NOT NULL CHECK (origin IN ('quick', 'registry')),
  width INTEGER,
  height INTEGER,
  submitted_at TEXT NOT NULL,
  submitted_at_epoch INTEGER NOT NULL,
  format TEXT,
  bytes INTEGER,
  sha256 TEXT,
  phash TEXT,
  fingerprints TEXT,
  faces TEXT NOT NULL DEFAULT '[]',
  derived_path TEXT,
  derived_created_at TEXT,
  analysis_status TEXT NOT NULL DEFAULT 'pending' CHECK (analysis_status IN ('pending', 'done', 'failed')),
  analysis_error TEXT,
  enrichment_status TEXT NOT NULL DEFAULT 'pending' CHECK (enrichment_status IN ('pending', 'running', 'done', 'failed', 'skipped')),
  risk_score INTEGER NOT NULL DEFAULT 0,
  risk_level TEXT NOT NULL DEFAULT 'low',
  risk_signals TEXT NOT NULL DEFAULT '[]',
  decision TEXT CHECK (decision IS NULL OR decision IN ('승인', '보류', '반려')),
  decision_note TEXT,
  decided_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX submissions_queue ON submissions (decision, risk_score);
CREATE UNIQUE INDEX submissions_file ON submissions (file);

CREATE TABLE evidence (
  id TEXT PRIMARY KEY,
  submission_id TEXT NOT NULL REFERENCES submissions (id) ON DELETE CASCADE,
  source TEXT NOT NULL CHECK (source IN ('internal', 'watchlist', 'regional', 'global_vision', 'global_search', 'local_llm')),
  kind TEXT NOT NULL,
  group_key TEXT NOT NULL CHECK (group_key IN ('attention', 'watchlist', 'internal', 'web_match', 'web_related', 'supporting', 'failures')),
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
  created_at TEXT NOT NULL
);
CREATE INDEX evidence_submission ON evidence (submission_id, created_at);
CREATE INDEX evidence_media ON evidence (local_media_created_at) WHERE local_media_path IS NOT NULL;

-- Attention candidates and the watchlist: one entry per submission, its state moved by operators only.
CREATE TABLE knowledge_entries (
  id TEXT PRIMARY KEY,
  submission_id TEXT NOT NULL UNIQUE REFERENCES submissions (id) ON DELETE CASCADE,
  phash TEXT NOT NULL,
  fingerprints TEXT,
  evidence_ids TEXT NOT NULL DEFAULT '[]',
  decision TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('주의 후보', '확정 DB 편입', '오탐 제외')),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX knowledge_state ON knowledge_entries (state);

-- The stored switch of each provider and what it last did; effective state also needs the keys.
CREATE TABLE providers (
  id TEXT PRIMARY KEY CHECK (id IN ('regional', 'global_vision', 'global_search', 'local_llm')),
  switched_on INTEGER NOT NULL DEFAULT 1,
  switched_off_by TEXT,
  last_success_at TEXT,
  last_failure_at TEXT,
  last_error TEXT,
  updated_at TEXT NOT NULL
);
INSERT INTO providers (id, updated_at) VALUES
  ('regional', '1970-01-01T00:00:00.000Z'),
  ('global_vision', '1970-01-01T00:00:00.000Z'),
  ('global_search', '1970-01-01T00:00:00.000Z'),
  ('local_llm', '1970-01-01T00:00:00.000Z');

-- Daily request counts per provider: reserved before a call, moved to used only when it succeeded.
CREATE TABLE quota_usage (
  provider TEXT NOT NULL,
  day TEXT NOT NULL,
  used INTEGER NOT NULL DEFAULT 0,
  reserved INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (provider, day)
);

CREATE TABLE jobs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  type TEXT NOT NULL,
  submission_id TEXT REFERENCES submissions (id) ON DELETE CASCADE,
  status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed', 'skipped')),
  attempts INTEGER NOT NULL DEFAULT 0,
  payload TEXT NOT NULL DEFAULT '{}',
  error TEXT,
  run_token TEXT,
  created_at TEXT NOT NULL,
  started_at TEXT,
  finished_at TEXT
);
CREATE INDEX jobs_status ON jobs (status, id);

CREATE TABLE audit_events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  at TEXT NOT NULL,
  action TEXT NOT NULL,
  target_type TEXT NOT NULL,
  target_id TEXT,
  details TEXT NOT NULL DEFAULT '{}'
);
