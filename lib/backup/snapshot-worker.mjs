// Copies the database for snapshot.ts off the main thread: SQLite's online backup on a connection
// of its own, every page in one step. One step reads the whole database inside one read
// transaction, so the copy is of one instant, and writers (WAL) go on meanwhile; a copy in small
// steps would start again each time another connection wrote, and under steady writing might
// never finish.
// in (workerData): { source, target }; out: { pages } or { error }
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const ALL_PAGES = 0x7fffffff;
const { source, target } = workerData;
try {
  const db = new Database(source, { fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  try {
    const { totalPages } = await db.backup(target, { progress: () => ALL_PAGES });
    // A file of its own, without the -wal beside it that WAL mode would want.
    const copy = new Database(target);
    copy.pragma('journal_mode = DELETE');
    copy.close();
    parentPort.postMessage({ pages: totalPages });
  } finally {
    db.close();
  }
} catch (error) {
  parentPort.postMessage({ error: error instanceof Error ? error.message : String(error) });
}
