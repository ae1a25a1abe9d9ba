-- Reload is an index pass: a file whose size, modification time and inode are unchanged is not read.
ALTER TABLE submissions ADD COLUMN file_mtime_ms INTEGER;
ALTER TABLE submissions ADD COLUMN file_inode INTEGER;
-- A small copy made during analysis for the queue and the watchlist (`/media/thumbs/...`).
ALTER TABLE submissions ADD COLUMN thumb_path TEXT;
-- Finding the work each submission is owed (start-up and reload sweeps) without a scan.
CREATE INDEX submissions_owed ON submissions (analysis_status, enrichment_status);
CREATE INDEX jobs_submission ON jobs (submission_id, type, status);
CREATE INDEX jobs_type_status ON jobs (type, status, id);
CREATE INDEX jobs_finished ON jobs (type, finished_at) WHERE finished_at IS NOT NULL;
