-- A reload report's removals and refusals as they stand (issue 31): a reload that finds nothing
-- changed, or reads only the files the folder journal names, refers to the lists that stand
-- instead of copying them, so that 200,000 refused files cost nothing per reload. A report is
-- numbered (seq); an item stands in the reports numbered from since_seq up to, not including,
-- until_seq (NULL: it still stands). Imports and updates stay in reload_report_items, per report.
ALTER TABLE reload_reports ADD COLUMN seq INTEGER;

UPDATE reload_reports SET seq = rowid;

CREATE UNIQUE INDEX reload_reports_seq ON reload_reports (seq);

CREATE TABLE reload_standing (
  -- The lists' order: an item that stands keeps its place, later ones come after it.
  seq INTEGER PRIMARY KEY,
  list TEXT NOT NULL CHECK (list IN ('removed', 'rejected')),
  submission_id TEXT,
  file TEXT,
  reason TEXT,
  -- 1 for a refusal of the registry's (its entry, or the file it names): only a full pass, which
  -- reads the registry, settles it again.
  registry INTEGER NOT NULL,
  since_seq INTEGER NOT NULL,
  until_seq INTEGER
);

-- Each kept report's removals and refusals. Their origin is not known: taken as the registry's.
INSERT INTO reload_standing (list, submission_id, file, reason, registry, since_seq, until_seq)
SELECT i.list, i.submission_id, i.file, i.reason, 1, r.seq, CASE WHEN r.seq = (SELECT max(seq) FROM reload_reports) THEN NULL ELSE r.seq + 1 END
FROM reload_report_items i JOIN reload_reports r ON r.id = i.report_id
WHERE i.list IN ('removed', 'rejected')
ORDER BY r.seq, i.list, i.seq;

DELETE FROM reload_report_items WHERE list IN ('removed', 'rejected');

CREATE INDEX reload_standing_lists ON reload_standing (list);

-- What a reload over named files looks up: the items standing for those files and submissions.
CREATE INDEX reload_standing_files ON reload_standing (list, file) WHERE until_seq IS NULL;

CREATE INDEX reload_standing_submissions ON reload_standing (list, submission_id) WHERE until_seq IS NULL;

-- The items of reports no longer kept go with them.
CREATE INDEX reload_standing_ended ON reload_standing (until_seq) WHERE until_seq IS NOT NULL;
