-- The similarity index of submissions, kept in the database instead of in each process's memory
-- (issue 13: at 100,000 submissions the in-memory index took 126 MiB, more than a Worker isolate
-- has, and an isolate's copy went stale as soon as another isolate compared a submission).
-- Each stored 64-bit key (the pHash, each region key) is four rows, one per 16-bit chunk:
-- slot = (kind * 4 + chunk) * 65536 + the chunk's value (lib/images/robust.ts, indexEntries); the
-- row keeps the whole key (16 hex digits), so a lookup keeps only the rows within its distance
-- before it reads any submission.
CREATE TABLE fingerprint_slots (
  slot INTEGER NOT NULL,
  submission_id TEXT NOT NULL,
  key TEXT NOT NULL,
  PRIMARY KEY (slot, submission_id, key)
) WITHOUT ROWID;
CREATE INDEX fingerprint_slots_submission ON fingerprint_slots (submission_id);

-- Submissions compared before this migration have no slots yet; the region keys are chosen bits
-- of the region hashes, which SQL cannot compute, so an `index` job writes them, a page of
-- submissions at a time from this cursor (the row goes when done). No analysis starts before.
CREATE TABLE fingerprint_slots_backfill (after TEXT NOT NULL);
INSERT INTO fingerprint_slots_backfill (after) SELECT '' WHERE EXISTS (SELECT 1 FROM submissions WHERE phash IS NOT NULL);
INSERT INTO jobs (type, status, payload, created_at)
SELECT 'index', 'queued', '{}', strftime('%Y-%m-%dT%H:%M:%fZ', 'now') FROM fingerprint_slots_backfill;

-- Comparisons hold this lease so that only one runs at a time across processes and Worker isolates:
-- a comparison rewrites the evidence of both sides of a match, and one computed from an older view
-- must not overwrite a newer one.
CREATE TABLE leases (
  name TEXT PRIMARY KEY,
  holder TEXT NOT NULL,
  expires_at TEXT NOT NULL
);
