import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqlite } from '../../lib/db/sqlite.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-checkpoints-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The rows the database file alone holds: what a copy of it without its write-ahead log would show. */
function rowsInFileAlone(file: string): number {
  const copy = join(dir, 'alone.sqlite3');
  copyFileSync(file, copy);
  const alone = new BetterSqlite3(copy, { readonly: true });
  try {
    // The table itself may still be in the log only.
    if (!alone.prepare("SELECT 1 FROM sqlite_master WHERE name = 'notes'").get()) return 0;
    return (alone.prepare('SELECT COUNT(*) AS n FROM notes').get() as { n: number }).n;
  } finally {
    alone.close();
  }
}

describe('checkpoints of the service database', () => {
  it('copies committed pages into the database file off the writing thread, well before a commit would', async () => {
    const file = join(dir, 'svc.sqlite3');
    const db = openSqlite(file);
    try {
      await db.prepare('CREATE TABLE notes (body TEXT)').run();
      // About 300 pages, far under the commit's own threshold: only the checkpoint thread moves them.
      for (let i = 0; i < 300; i++) await db.prepare('INSERT INTO notes (body) VALUES (?)').bind('x'.repeat(3000)).run();
      let alone = rowsInFileAlone(file);
      for (let waited = 0; alone < 300 && waited < 5000; waited += 50) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        alone = rowsInFileAlone(file);
      }
      expect(alone).toBe(300);
    } finally {
      db.close();
    }
  });

  it('lets go of the file when the database closes: the log is folded in and removed', async () => {
    const file = join(dir, 'svc.sqlite3');
    const db = openSqlite(file);
    await db.prepare('CREATE TABLE notes (body TEXT)').run();
    await db.prepare('INSERT INTO notes (body) VALUES (?)').bind('kept').run();
    db.close();
    // The last connection to close folds the log in and deletes it: the thread's is closed first.
    expect(existsSync(`${file}-wal`)).toBe(false);
    expect(rowsInFileAlone(file)).toBe(1);
  });
});
