-- A running reload's progress (issue 31): the reload writes it as it goes, any process reads it
-- (GET /api/submissions/reload/progress), so the console shows how far a first pass over a million
-- files has come. The reload deletes it when it ends; a row a crash left stops being shown once it
-- is a minute old.
CREATE TABLE reload_progress (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  started_at TEXT NOT NULL,
  -- 'listing' while the folder is listed and compared with the stored index, 'reading' while new
  -- and changed files are read, hashed and stored.
  phase TEXT NOT NULL,
  listed INTEGER NOT NULL,
  to_read INTEGER NOT NULL,
  read INTEGER NOT NULL,
  updated_at TEXT NOT NULL
);
