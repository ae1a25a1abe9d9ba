import type { Database } from '../ports.js';

/**
 * What a backup reads from its database snapshot (lib/backup/): the migrations applied to it, and
 * every stored media path in it, read a page at a time.
 */

export async function appliedMigrations(db: Database): Promise<string[]> {
  const rows = await db.prepare('SELECT name FROM schema_migrations ORDER BY name').all<{ name: string }>();
  return rows.results.map((r) => r.name);
}

/** Every column that holds a path under /media/ (`images/...`, `evidence/...`, `derived/...`, `thumbs/...`). */
const MEDIA_COLUMNS = [
  ['submissions', 'file'],
  ['submissions', 'thumb_path'],
  ['submissions', 'derived_path'],
  ['evidence', 'local_media_path'],
  ['page_captures', 'media_path'],
] as const;

const PAGE_ROWS = 1000;

/** The stored media paths, a page of rows at a time (a path may come more than once). */
export async function* storedMediaPaths(db: Database): AsyncGenerator<string[]> {
  for (const [table, column] of MEDIA_COLUMNS) {
    for (let after = 0; ; ) {
      const rows = await db
        .prepare(`SELECT rowid AS at, ${column} AS path FROM ${table} WHERE rowid > ? AND ${column} IS NOT NULL ORDER BY rowid LIMIT ?`)
        .bind(after, PAGE_ROWS)
        .all<{ at: number; path: string }>();
      if (rows.results.length === 0) break;
      yield rows.results.map((r) => r.path);
      after = rows.results[rows.results.length - 1].at;
    }
  }
}
