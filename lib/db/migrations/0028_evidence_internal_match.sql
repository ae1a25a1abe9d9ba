-- A comparison asks which submissions' internal evidence names the one compared (lib/repo/pairs.ts,
-- pairPartnersStatement) and rewrites each partner's row about it (decision 0077). Without an index
-- on the matched submission the first read scanned the whole evidence table on every comparison:
-- 283 ms at 520,000 evidence rows (100,000 submissions with five pieces of evidence each), 0.7 ms
-- with this index. Only internal rows are looked up by the submission they name.
CREATE INDEX evidence_internal_match ON evidence (matched_submission_id, submission_id) WHERE group_key = 'internal';
