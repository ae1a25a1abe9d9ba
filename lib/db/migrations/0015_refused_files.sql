-- Files whose bytes a reload refused (not an image, cut short, too many pixels), with the size,
-- modification time and version they had: a later reload reports an unchanged refused file with
-- its reason again without reading it, so refused files cost nothing per reload, and a Worker
-- reload's read budget (lib/subrequests.ts) goes to files it has not seen. A row goes when its file
-- is gone, changed or accepted.
CREATE TABLE refused_files (
  file TEXT PRIMARY KEY,
  bytes INTEGER NOT NULL,
  file_mtime_ms INTEGER NOT NULL,
  file_version TEXT NOT NULL,
  reason TEXT NOT NULL
);
