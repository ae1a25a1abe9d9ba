import { toJob, type Job, type JobRow } from './jobs.js';
import { toJson } from './json.js';
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

/** A backup job waits or runs: the console's button and the daily timer queue no second one. */
const NONE_IN_FLIGHT = "NOT EXISTS (SELECT 1 FROM jobs WHERE type = 'backup' AND status IN ('queued', 'running'))";

/** Queues a backup unless one is queued or running; returns the id queued (RETURNING), if any. */
export function enqueueBackupStatement(db: Database, now: string) {
  return db.prepare(`INSERT INTO jobs (type, status, payload, created_at) SELECT 'backup', 'queued', '{}', ? WHERE ${NONE_IN_FLIGHT} RETURNING id`).bind(now);
}

/** Queues the daily backup unless one is in flight or one made since `since` succeeded. */
export function enqueueDailyBackupStatement(db: Database, now: string, since: string) {
  return db
    .prepare(
      `INSERT INTO jobs (type, status, payload, created_at) SELECT 'backup', 'queued', '{"daily":true}', ?
       WHERE ${NONE_IN_FLIGHT} AND NOT EXISTS (SELECT 1 FROM jobs WHERE type = 'backup' AND status = 'done' AND created_at >= ?) RETURNING id`,
    )
    .bind(now, since);
}

/** The backup job in flight, if any. */
export async function backupInFlight(db: Database): Promise<Job | null> {
  const row = await db.prepare("SELECT * FROM jobs WHERE type = 'backup' AND status IN ('queued', 'running') ORDER BY id LIMIT 1").first<JobRow>();
  return row ? toJob(row) : null;
}

export async function listBackupJobs(db: Database, limit: number): Promise<Job[]> {
  const rows = await db.prepare("SELECT * FROM jobs WHERE type = 'backup' ORDER BY id DESC LIMIT ?").bind(limit).all<JobRow>();
  return rows.results.map(toJob);
}

/** A backup job's progress, then its result, in its payload: what GET /api/jobs and /api/admin/backups show. */
export async function saveBackupPayload(db: Database, id: number, payload: Record<string, unknown>): Promise<void> {
  await db.prepare("UPDATE jobs SET payload = ? WHERE id = ? AND type = 'backup'").bind(toJson(payload), id).run();
}
