-- Pages of copies (issue 29): the pages a provider names as holding a verified web match's image
-- (web detection's pages by image address, a search result's own page), linked to the match in the
-- provider's order. A page's capture is the latest page_captures row of the same evidence and address;
-- a capture that failed leaves its error here. `page_count` on the evidence is how many distinct pages
-- the provider named, which is more than the linked rows when the list was cut at its cap.
CREATE TABLE evidence_pages (
  evidence_id TEXT NOT NULL REFERENCES evidence (id) ON DELETE CASCADE,
  submission_id TEXT NOT NULL REFERENCES submissions (id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  page_url TEXT NOT NULL,
  title TEXT,
  error_code TEXT,
  error_message TEXT,
  PRIMARY KEY (evidence_id, page_url)
);
CREATE INDEX evidence_pages_submission ON evidence_pages (submission_id, evidence_id, position);
CREATE INDEX page_captures_page ON page_captures (evidence_id, page_url, fetched_at);
ALTER TABLE evidence ADD COLUMN page_count INTEGER;
