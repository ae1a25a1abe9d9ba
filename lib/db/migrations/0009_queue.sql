-- The review queue at 100,000 submissions. The evidence count and the attention match were counted
-- for every row of every request; they are kept on the submission by triggers on evidence instead.
ALTER TABLE submissions ADD COLUMN evidence_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE submissions ADD COLUMN attention_match INTEGER NOT NULL DEFAULT 0;
UPDATE submissions SET
  evidence_count = (SELECT COUNT(*) FROM evidence e WHERE e.submission_id = submissions.id),
  attention_match = EXISTS (SELECT 1 FROM evidence e WHERE e.submission_id = submissions.id AND e.group_key = 'attention' AND (e.status IS NULL OR e.status = '판단에 사용'));
CREATE TRIGGER evidence_counted_insert AFTER INSERT ON evidence BEGIN UPDATE submissions SET evidence_count = (SELECT COUNT(*) FROM evidence e WHERE e.submission_id = NEW.submission_id), attention_match = EXISTS (SELECT 1 FROM evidence e WHERE e.submission_id = NEW.submission_id AND e.group_key = 'attention' AND (e.status IS NULL OR e.status = '판단에 사용')) WHERE id = NEW.submission_id; END;
CREATE TRIGGER evidence_counted_delete AFTER DELETE ON evidence BEGIN UPDATE submissions SET evidence_count = (SELECT COUNT(*) FROM evidence e WHERE e.submission_id = OLD.submission_id), attention_match = EXISTS (SELECT 1 FROM evidence e WHERE e.submission_id = OLD.submission_id AND e.group_key = 'attention' AND (e.status IS NULL OR e.status = '판단에 사용')) WHERE id = OLD.submission_id; END;
CREATE TRIGGER evidence_counted_update AFTER UPDATE OF status, group_key ON evidence BEGIN UPDATE submissions SET attention_match = EXISTS (SELECT 1 FROM evidence e WHERE e.submission_id = NEW.submission_id AND e.group_key = 'attention' AND (e.status IS NULL OR e.status = '판단에 사용')) WHERE id = NEW.submission_id; END;
-- One sortable key in the queue's order: undecided first, risk high to low, newest first, then id.
-- Every page, filter and cursor is then one range of an index, whatever its depth.
ALTER TABLE submissions ADD COLUMN queue_rank TEXT GENERATED ALWAYS AS ((decision IS NOT NULL) || printf('%03d', 100 - risk_score) || printf('%013d', 9999999999999 - submitted_at_epoch) || id) VIRTUAL;
DROP INDEX submissions_queue;
CREATE INDEX submissions_queue ON submissions (queue_rank);
CREATE INDEX submissions_queue_decision ON submissions (decision, queue_rank);
CREATE INDEX submissions_queue_level ON submissions (risk_level, queue_rank);
CREATE INDEX submissions_queue_enrichment ON submissions (enrichment_status, queue_rank);
CREATE INDEX submissions_queue_attention ON submissions (attention_match, queue_rank);
-- The decisions export reads decided submissions latest first, page by page.
CREATE INDEX submissions_decided ON submissions (decided_at, id) WHERE decision IS NOT NULL;
-- Exact totals for any combination of the queue's filters without counting rows: one counter per
-- combination of decision ('' when undecided), level, enrichment status and attention match.
CREATE TABLE queue_counts (decision TEXT NOT NULL, risk_level TEXT NOT NULL, enrichment_status TEXT NOT NULL, attention_match INTEGER NOT NULL, n INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (decision, risk_level, enrichment_status, attention_match));
INSERT INTO queue_counts (decision, risk_level, enrichment_status, attention_match)
  SELECT d.column1, l.column1, e.column1, a.column1 FROM (VALUES (''), ('승인'), ('보류'), ('반려')) d, (VALUES ('low'), ('medium'), ('high')) l,
    (VALUES ('pending'), ('running'), ('done'), ('failed'), ('skipped')) e, (VALUES (0), (1)) a;
UPDATE queue_counts SET n = g.n FROM (SELECT coalesce(decision, '') AS d, risk_level AS l, enrichment_status AS e, attention_match AS a, COUNT(*) AS n FROM submissions GROUP BY 1, 2, 3, 4) g
  WHERE queue_counts.decision = g.d AND queue_counts.risk_level = g.l AND queue_counts.enrichment_status = g.e AND queue_counts.attention_match = g.a;
CREATE TRIGGER queue_counted_insert AFTER INSERT ON submissions BEGIN UPDATE queue_counts SET n = n + 1 WHERE decision = coalesce(NEW.decision, '') AND risk_level = NEW.risk_level AND enrichment_status = NEW.enrichment_status AND attention_match = NEW.attention_match; END;
CREATE TRIGGER queue_counted_delete AFTER DELETE ON submissions BEGIN UPDATE queue_counts SET n = n - 1 WHERE decision = coalesce(OLD.decision, '') AND risk_level = OLD.risk_level AND enrichment_status = OLD.enrichment_status AND attention_match = OLD.attention_match; END;
CREATE TRIGGER queue_counted_update AFTER UPDATE OF decision, risk_level, enrichment_status, attention_match ON submissions BEGIN UPDATE queue_counts SET n = n - 1 WHERE decision = coalesce(OLD.decision, '') AND risk_level = OLD.risk_level AND enrichment_status = OLD.enrichment_status AND attention_match = OLD.attention_match; UPDATE queue_counts SET n = n + 1 WHERE decision = coalesce(NEW.decision, '') AND risk_level = NEW.risk_level AND enrichment_status = NEW.enrichment_status AND attention_match = NEW.attention_match; END;
-- Search by id or title (any part of three characters or more) without reading every row.
CREATE VIRTUAL TABLE submissions_search USING fts5 (id, title, content = 'submissions', content_rowid = 'rowid', tokenize = 'trigram');
INSERT INTO submissions_search (submissions_search) VALUES ('rebuild');
CREATE TRIGGER submissions_search_insert AFTER INSERT ON submissions BEGIN INSERT INTO submissions_search (rowid, id, title) VALUES (NEW.rowid, NEW.id, NEW.title); END;
CREATE TRIGGER submissions_search_delete AFTER DELETE ON submissions BEGIN INSERT INTO submissions_search (submissions_search, rowid, id, title) VALUES ('delete', OLD.rowid, OLD.id, OLD.title); END;
CREATE TRIGGER submissions_search_update AFTER UPDATE OF title ON submissions BEGIN INSERT INTO submissions_search (submissions_search, rowid, id, title) VALUES ('delete', OLD.rowid, OLD.id, OLD.title); INSERT INTO submissions_search (rowid, id, title) VALUES (NEW.rowid, NEW.id, NEW.title); END;
