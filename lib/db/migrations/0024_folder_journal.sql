-- The submissions folder's change journal (issue 31): while the Node service runs, it watches the
-- folder and writes here what changed. A reload that finds the journal empty since its last pass
-- under the same watcher answers from that pass's report without listing the folder; anything in
-- it (a file's name, `*` for the folder's entries, `registry`) sends the reload through a full pass.
CREATE TABLE folder_watch (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  -- The running watcher; NULL when none runs (the Worker, tests, a watcher that failed).
  epoch TEXT,
  -- The report of the last reload under this watcher that left nothing unread.
  clean_report_id TEXT
);

CREATE TABLE folder_changes (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL
);
