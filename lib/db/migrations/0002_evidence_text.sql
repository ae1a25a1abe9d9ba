-- Free text that belongs to an evidence item: a result's description or snippet, or a summary.
ALTER TABLE evidence ADD COLUMN text TEXT;
