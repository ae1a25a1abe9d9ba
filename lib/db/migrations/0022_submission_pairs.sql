-- The verdict of each pair of submissions the similarity lookups bring together (decision 0033), so
-- that the internal matches of a set of files do not depend on the order their comparisons run or
-- finish in, and comparisons need no lease across processes. `a` < `b`; the verdict holds for the
-- bytes whose SHA-256 it names (a pair for older bytes of either side counts for nothing), and
-- `threshold` is the pHash threshold it was judged at. Matched or not, a verdict is kept, so no pair
-- is checked geometrically twice. The evidence of each side is derived from its pairs: `a_view` is
-- the match as the evidence of `a` shows it (a the submission, b the candidate), `b_view` the other
-- way round (JSON: match_transform, match_similarity, match_inliers, match_region); `similarity` is
-- the plain pHash similarity of the two.
CREATE TABLE submission_pairs (
  a TEXT NOT NULL REFERENCES submissions (id) ON DELETE CASCADE,
  b TEXT NOT NULL REFERENCES submissions (id) ON DELETE CASCADE,
  a_sha256 TEXT NOT NULL,
  b_sha256 TEXT NOT NULL,
  threshold REAL,
  matched INTEGER NOT NULL,
  similarity REAL NOT NULL,
  a_view TEXT,
  b_view TEXT,
  PRIMARY KEY (a, b),
  CHECK (a < b)
) WITHOUT ROWID;
CREATE INDEX submission_pairs_b ON submission_pairs (b);

-- Matches compared before this migration become pairs, each side seen as its own evidence shows it
-- (or as the other side's shows it, when only one side has the row), with no threshold: they stand
-- until either side is compared again, which judges the pair anew.
INSERT OR IGNORE INTO submission_pairs (a, b, a_sha256, b_sha256, threshold, matched, similarity, a_view, b_view)
SELECT p.a, p.b, sa.sha256, sb.sha256, NULL, 1, COALESCE(ea.similarity, eb.similarity, 0),
  json_object('match_transform', COALESCE(ea.match_transform, eb.match_transform), 'match_similarity', COALESCE(ea.match_similarity, eb.match_similarity),
    'match_inliers', COALESCE(ea.match_inliers, eb.match_inliers), 'match_region', json(COALESCE(ea.match_region, eb.match_region))),
  json_object('match_transform', COALESCE(eb.match_transform, ea.match_transform), 'match_similarity', COALESCE(eb.match_similarity, ea.match_similarity),
    'match_inliers', COALESCE(eb.match_inliers, ea.match_inliers), 'match_region', json(COALESCE(eb.match_region, ea.match_region)))
FROM (
  SELECT DISTINCT min(submission_id, matched_submission_id) AS a, max(submission_id, matched_submission_id) AS b FROM evidence
  WHERE group_key = 'internal' AND matched_submission_id IS NOT NULL AND matched_submission_id <> submission_id
) p
JOIN submissions sa ON sa.id = p.a AND sa.sha256 IS NOT NULL
JOIN submissions sb ON sb.id = p.b AND sb.sha256 IS NOT NULL
LEFT JOIN evidence ea ON ea.submission_id = p.a AND ea.matched_submission_id = p.b AND ea.group_key = 'internal'
LEFT JOIN evidence eb ON eb.submission_id = p.b AND eb.matched_submission_id = p.a AND eb.group_key = 'internal';
