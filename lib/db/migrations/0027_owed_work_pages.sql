-- The work owed to submissions (an analysis never finished, an enrichment never queued) is queued a
-- page of submissions at a time, in id order (lib/repo/jobs.ts, queueOwedWork): one statement over
-- every pending submission held the event loop for 0.1 s at 100,000 and about a second at a
-- million. Each index holds only the submissions its kind of owed work looks at.
CREATE INDEX submissions_owed_analysis ON submissions (id) WHERE analysis_status = 'pending';

CREATE INDEX submissions_owed_enrichment ON submissions (id) WHERE analysis_status IN ('done', 'failed') AND enrichment_status IN ('pending', 'running');
