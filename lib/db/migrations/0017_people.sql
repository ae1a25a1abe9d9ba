-- People (issue 27): person boxes beside the face boxes, and a queue filter for pictures that show
-- anyone (a person box or a face). `has_people` is kept by analysis with `people`, so the filter is
-- one range of an index and its total one more dimension of the queue's counters.
ALTER TABLE submissions ADD COLUMN people TEXT NOT NULL DEFAULT '[]';
ALTER TABLE submissions ADD COLUMN has_people INTEGER NOT NULL DEFAULT 0;
UPDATE submissions SET has_people = 1 WHERE faces <> '[]';
CREATE INDEX submissions_queue_people ON submissions (has_people, queue_rank);
DROP TRIGGER queue_counted_insert;
DROP TRIGGER queue_counted_delete;
DROP TRIGGER queue_counted_update;
DROP TABLE queue_counts;
CREATE TABLE queue_counts (decision TEXT NOT NULL, risk_level TEXT NOT NULL, enrichment_status TEXT NOT NULL, attention_match INTEGER NOT NULL, has_people INTEGER NOT NULL, n INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (decision, risk_level, enrichment_status, attention_match, has_people));
INSERT INTO queue_counts (decision, risk_level, enrichment_status, attention_match, has_people)
  SELECT d.column1, l.column1, e.column1, a.column1, p.column1 FROM (VALUES (''), ('승인'), ('보류'), ('반려')) d, (VALUES ('low'), ('medium'), ('high')) l,
    (VALUES ('pending'), ('running'), ('done'), ('failed'), ('skipped')) e, (VALUES (0), (1)) a, (VALUES (0), (1)) p;
UPDATE queue_counts SET n = g.n FROM (SELECT coalesce(decision, '') AS d, risk_level AS l, enrichment_status AS e, attention_match AS a, has_people AS p, COUNT(*) AS n FROM submissions GROUP BY 1, 2, 3, 4, 5) g
  WHERE queue_counts.decision = g.d AND queue_counts.risk_level = g.l AND queue_counts.enrichment_status = g.e AND queue_counts.attention_match = g.a AND queue_counts.has_people = g.p;
CREATE TRIGGER queue_counted_insert AFTER INSERT ON submissions BEGIN UPDATE queue_counts SET n = n + 1 WHERE decision = coalesce(NEW.decision, '') AND risk_level = NEW.risk_level AND enrichment_status = NEW.enrichment_status AND attention_match = NEW.attention_match AND has_people = NEW.has_people; END;
CREATE TRIGGER queue_counted_delete AFTER DELETE ON submissions BEGIN UPDATE queue_counts SET n = n - 1 WHERE decision = coalesce(OLD.decision, '') AND risk_level = OLD.risk_level AND enrichment_status = OLD.enrichment_status AND attention_match = OLD.attention_match AND has_people = OLD.has_people; END;
CREATE TRIGGER queue_counted_update AFTER UPDATE OF decision, risk_level, enrichment_status, attention_match, has_people ON submissions BEGIN UPDATE queue_counts SET n = n - 1 WHERE decision = coalesce(OLD.decision, '') AND risk_level = OLD.risk_level AND enrichment_status = OLD.enrichment_status AND attention_match = OLD.attention_match AND has_people = OLD.has_people; UPDATE queue_counts SET n = n + 1 WHERE decision = coalesce(NEW.decision, '') AND risk_level = NEW.risk_level AND enrichment_status = NEW.enrichment_status AND attention_match = NEW.attention_match AND has_people = NEW.has_people; END;
