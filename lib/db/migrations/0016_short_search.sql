-- Search for one or two characters without reading every row. The trigram index (0009) answers
-- parts of three characters or more; a Korean word is often two (야경, 한강) and was found by a
-- scan of all titles (38 ms at 100,000 submissions, growing with every one). Every distinct
-- character and pair of characters of each submission's id and title is kept here, lowered as
-- LIKE compares (ASCII letters only), so a short search is one range of this table's key.
CREATE TABLE submission_grams (gram TEXT NOT NULL, submission_rowid INTEGER NOT NULL, PRIMARY KEY (gram, submission_rowid)) WITHOUT ROWID;
-- Character positions for the triggers, which may not use a recursive query: titles are at most
-- 500 characters and ids 128 (lib/ingest.ts); 1,000 leaves room.
CREATE TABLE search_positions (n INTEGER PRIMARY KEY);
INSERT INTO search_positions (n) WITH RECURSIVE p(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM p WHERE n < 1000) SELECT n FROM p;
CREATE TABLE search_gram_widths (w INTEGER PRIMARY KEY);
INSERT INTO search_gram_widths (w) VALUES (1), (2);
INSERT OR IGNORE INTO submission_grams (gram, submission_rowid)
  SELECT lower(substr(t.text, p.n, g.w)), t.rowid FROM (SELECT rowid, id AS text FROM submissions UNION ALL SELECT rowid, title FROM submissions) t, search_gram_widths g, search_positions p
  WHERE p.n <= length(t.text) - g.w + 1;
CREATE TRIGGER submission_grams_insert AFTER INSERT ON submissions BEGIN INSERT OR IGNORE INTO submission_grams (gram, submission_rowid) SELECT lower(substr(t.text, p.n, g.w)), NEW.rowid FROM (SELECT NEW.id AS text UNION ALL SELECT NEW.title) t, search_gram_widths g, search_positions p WHERE p.n <= length(t.text) - g.w + 1; END;
CREATE TRIGGER submission_grams_delete AFTER DELETE ON submissions BEGIN DELETE FROM submission_grams WHERE submission_rowid = OLD.rowid AND gram IN (SELECT lower(substr(t.text, p.n, g.w)) FROM (SELECT OLD.id AS text UNION ALL SELECT OLD.title) t, search_gram_widths g, search_positions p WHERE p.n <= length(t.text) - g.w + 1); END;
CREATE TRIGGER submission_grams_update AFTER UPDATE OF title ON submissions WHEN OLD.title IS NOT NEW.title BEGIN DELETE FROM submission_grams WHERE submission_rowid = OLD.rowid AND gram IN (SELECT lower(substr(t.text, p.n, g.w)) FROM (SELECT OLD.id AS text UNION ALL SELECT OLD.title) t, search_gram_widths g, search_positions p WHERE p.n <= length(t.text) - g.w + 1); INSERT OR IGNORE INTO submission_grams (gram, submission_rowid) SELECT lower(substr(t.text, p.n, g.w)), NEW.rowid FROM (SELECT NEW.id AS text UNION ALL SELECT NEW.title) t, search_gram_widths g, search_positions p WHERE p.n <= length(t.text) - g.w + 1; END;
