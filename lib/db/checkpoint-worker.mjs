// Checkpoints the service's SQLite file off the event loop, for sqlite.ts. Plain .mjs, so that it
// needs no TypeScript loader in a worker.
// Every INTERVAL_MS it copies the write-ahead log's pages into the database with a PASSIVE
// checkpoint: it never waits on a writer or a reader (pages a reader still needs wait for the next
// one). On `close` it closes its connection, then sets the shared flag the closing thread waits on.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const INTERVAL_MS = 200;
const { file, closed } = workerData;
const done = new Int32Array(closed);
const db = new Database(file, { fileMustExist: true });
let timer = null;

function checkpoint() {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // A busy or full file: the next turn tries again, and the writer's own threshold stands behind it.
  }
  timer = setTimeout(checkpoint, INTERVAL_MS);
}

parentPort.on('message', (message) => {
  if (message !== 'close') return;
  clearTimeout(timer);
  db.close();
  Atomics.store(done, 0, 1);
  Atomics.notify(done, 0);
  parentPort.close();
});
checkpoint();
