import { setImmediate as nextTurn } from 'node:timers/promises';
import { newId, toJson } from './json.js';
import type { Database } from '../ports.js';

/** The lists a reload report keeps whole (its answer names only the first of each). */
export const RELOAD_LISTS = ['imported', 'updated', 'removed', 'rejected'] as const;
export type ReloadList = (typeof RELOAD_LISTS)[number];

export interface ReloadItem {
  id: string | null;
  file: string | null;
  reason: string | null;
}

export interface StoredReloadReport {
  id: string;
  created_at: string;
  counts: Record<ReloadList, number>;
  unchanged: number;
  queued_jobs: number;
  remaining: number;
}

/** Reports kept: enough to look back over a day of reloads, few enough never to grow. */
const KEPT_REPORTS = 20;
/** Items written per statement, as one bound JSON value (D1 binds at most 100 values). */
const ITEMS_PER_STATEMENT = 2000;

type ReportRow = Omit<StoredReloadReport, 'counts'> & Record<ReloadList, number>;

/**
 * Stores a reload's whole lists under a new report id, and drops the oldest reports beyond the kept
 * number. The report's row first, then its items a statement at a time with a turn of the event
 * loop between: a first pass over a million files lists a million, which written in one
 * transaction held the event loop for seconds. Its id is answered only once every item is in.
 */
export async function saveReloadReport(
  db: Database,
  report: { lists: Record<ReloadList, ReloadItem[]>; unchanged: number; queued_jobs: number; remaining: number },
  now: string,
): Promise<string> {
  const id = newId('rl');
  const { lists } = report;
  await db.batch([
    db
      .prepare(
        `INSERT INTO reload_reports (id, created_at, imported, updated, removed, rejected, unchanged, queued_jobs, remaining)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .bind(
        id,
        now,
        lists.imported.length,
        lists.updated.length,
        lists.removed.length,
        lists.rejected.length,
        report.unchanged,
        report.queued_jobs,
        report.remaining,
      ),
    db.prepare('DELETE FROM reload_reports WHERE id NOT IN (SELECT id FROM reload_reports ORDER BY rowid DESC LIMIT ?)').bind(KEPT_REPORTS),
  ]);
  for (const list of RELOAD_LISTS) {
    for (let from = 0; from < lists[list].length; from += ITEMS_PER_STATEMENT) {
      const chunk = lists[list].slice(from, from + ITEMS_PER_STATEMENT).map((item) => [item.id, item.file, item.reason]);
      await db
        .prepare(
          `INSERT INTO reload_report_items (report_id, list, seq, submission_id, file, reason)
           SELECT ?, ?, ? + key, json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]') FROM json_each(?)`,
        )
        .bind(id, list, from, toJson(chunk))
        .run();
      await nextTurn();
    }
  }
  return id;
}

export async function getReloadReport(db: Database, id: string): Promise<StoredReloadReport | null> {
  const row = await db.prepare('SELECT * FROM reload_reports WHERE id = ?').bind(id).first<ReportRow>();
  if (!row) return null;
  const { imported, updated, removed, rejected, ...rest } = row;
  return { ...rest, counts: { imported, updated, removed, rejected } };
}

/** A page of one list, in the reload's order, after the item numbered `after` (-1 for the first page). */
export async function listReloadItems(db: Database, id: string, list: ReloadList, after: number, limit: number): Promise<(ReloadItem & { seq: number })[]> {
  const { results } = await db
    .prepare(
      `SELECT seq, submission_id AS id, file, reason FROM reload_report_items
       WHERE report_id = ? AND list = ? AND seq > ? ORDER BY seq LIMIT ?`,
    )
    .bind(id, list, after, limit)
    .all<ReloadItem & { seq: number }>();
  return results;
}
