-- Reload reports (issue 31): a reload's answer names at most the first 100 of each list, with the
-- counts; the whole lists are kept here, paged by GET /api/reloads/{id}. The last 20 are kept (by
-- rowid: the order they were written in).
CREATE TABLE reload_reports (
  id TEXT PRIMARY KEY,
  created_at TEXT NOT NULL,
  imported INTEGER NOT NULL,
  updated INTEGER NOT NULL,
  removed INTEGER NOT NULL,
  rejected INTEGER NOT NULL,
  unchanged INTEGER NOT NULL,
  queued_jobs INTEGER NOT NULL,
  remaining INTEGER NOT NULL
);

-- One row per listed item, numbered in the order the reload listed them.
CREATE TABLE reload_report_items (
  report_id TEXT NOT NULL REFERENCES reload_reports (id) ON DELETE CASCADE,
  list TEXT NOT NULL CHECK (list IN ('imported', 'updated', 'removed', 'rejected')),
  seq INTEGER NOT NULL,
  submission_id TEXT,
  file TEXT,
  reason TEXT,
  PRIMARY KEY (report_id, list, seq)
) WITHOUT ROWID;
