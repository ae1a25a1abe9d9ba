-- A submitted file is told unchanged by its size, modification time and the store's version of it:
-- the inode in the data folder, the etag in R2. The version is text so both fit.
ALTER TABLE submissions ADD COLUMN file_version TEXT;
UPDATE submissions SET file_version = CAST(file_inode AS TEXT) WHERE file_inode IS NOT NULL;
DROP INDEX submissions_index_pass;
ALTER TABLE submissions DROP COLUMN file_inode;
CREATE INDEX submissions_index_pass ON submissions (id, file, origin, bytes, file_mtime_ms, file_version, title, submitted_at, submitted_at_epoch, sha256);
