-- Reload is an index pass: a file whose size, modification time and inode are unchanged is not read.
ALTER TABLE submissions ADD COLUMN file_mtime_ms INTEGER;
ALTER TABLE submissions ADD COLUMN file_inode INTEGER;
-- A small copy made during analysis for the queue and the watchlist (`/media/thumbs/...`).
ALTER TABLE submissions ADD COLUMN thumb_path TEXT;
-- The reload's index pass reads these columns of every row; as an index they are read without
-- touching the wide rows (fingerprints), which halves the pass at 100,000 submissions.
CREATE INDEX submissions_index_pass ON submissions (id, file, origin, bytes, file_mtime_ms, file_inode, title, submitted_at, submitted_at_epoch, sha256);
-- Finding the work each submission is owed (start-up and reload sweeps) without a scan.
CREATE INDEX submissions_owed ON submissions (analysis_status, enrichment_status);
CREATE INDEX jobs_submission ON jobs (submission_id, type, status);
CREATE INDEX jobs_type_status ON jobs (type, status, id);
CREATE INDEX jobs_finished ON jobs (type, finished_at) WHERE finished_at IS NOT NULL;
