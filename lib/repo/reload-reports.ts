import { setImmediate as nextTurn } from 'node:timers/promises';
import { newId, toJson } from './json.js';
import type { Database } from '../ports.js';

/** The lists a reload report keeps whole (its answer names only the first of each). */
export const RELOAD_LISTS = ['imported', 'updated', 'removed', 'rejected'] as const;
export type ReloadList = (typeof RELOAD_LISTS)[number];

/**
 * The lists that say how things stand rather than what a reload did (migration 0026): a removal
 * or a refusal stands from report to report until a reload finds it settled, so a reload that
 * finds nothing changed refers to them instead of copying them.
 */
export type StandingList = 'removed' | 'rejected';

export interface ReloadItem {
  id: string | null;
  file: string | null;
  reason: string | null;
}

/** A removal or refusal; `registry` marks one of the registry's, which only a full pass settles again. */
export interface StandingItem extends ReloadItem {
  registry: boolean;
}

/**
 * What a reload did to a standing list: the whole list as a full pass found it, or the items that
 * ended (removals by submission id, refusals by file) and those added after the ones that stand.
 */
export type StandingChange = { whole: StandingItem[] } | { ended: string[]; added: StandingItem[] };

export interface StoredReloadReport {
  id: string;
  created_at: string;
  counts: Record<ReloadList, number>;
  unchanged: number;
  queued_jobs: number;
  remaining: number;
}

export interface SavedReload {
  imported: string[];
  updated: string[];
  removed: StandingChange;
  rejected: StandingChange;
  unchanged: number;
  queued_jobs: number;
  remaining: number;
}

/** Reports kept: enough to look back over a day of reloads, few enough never to grow. */
const KEPT_REPORTS = 20;
/** Items written or read per statement, as one bound JSON value (D1 binds at most 100 values). */
const ITEMS_PER_STATEMENT = 2000;
/** The column that names a standing item: a removal by its submission, a refusal by its file. */
const KEY: Record<StandingList, 'submission_id' | 'file'> = { removed: 'submission_id', rejected: 'file' };

type ReportRow = Omit<StoredReloadReport, 'counts'> & Record<ReloadList, number> & { seq: number };

/**
 * Stores a reload under a new report id, and drops the oldest reports beyond the kept number with
 * the removals and refusals that stood only in them. The report's row first, then its items a
 * statement at a time with a turn of the event loop between (a first pass over a million files
 * lists a million), then its counts. Its id is answered only once every item is in.
 */
export async function saveReloadReport(db: Database, report: SavedReload, now: string): Promise<string> {
  const id = newId('rl');
  const before = await latestRow(db);
  const seq = (before?.seq ?? 0) + 1;
  await dropItemsOfLeavingReports(db);
  await db.batch([
    db
      .prepare(
        `INSERT INTO reload_reports (id, seq, created_at, imported, updated, removed, rejected, unchanged, queued_jobs, remaining)
         VALUES (?, ?, ?, ?, ?, 0, 0, ?, ?, ?)`,
      )
      .bind(id, seq, now, report.imported.length, report.updated.length, report.unchanged, report.queued_jobs, report.remaining),
    db.prepare('DELETE FROM reload_reports WHERE seq NOT IN (SELECT seq FROM reload_reports ORDER BY seq DESC LIMIT ?)').bind(KEPT_REPORTS),
    db.prepare('DELETE FROM reload_standing WHERE until_seq <= (SELECT min(seq) FROM reload_reports)'),
  ]);
  for (const list of ['imported', 'updated'] as const) {
    await insertChunks(report[list], (chunk, from) =>
      db
        .prepare(
          `INSERT INTO reload_report_items (report_id, list, seq, submission_id)
           SELECT ?, ?, ? + key, value FROM json_each(?)`,
        )
        .bind(id, list, from, toJson(chunk)),
    );
  }
  const removed = await saveStanding(db, 'removed', report.removed, seq, before?.removed ?? 0);
  const rejected = await saveStanding(db, 'rejected', report.rejected, seq, before?.rejected ?? 0);
  await db.prepare('UPDATE reload_reports SET removed = ?, rejected = ? WHERE id = ?').bind(removed, rejected, id).run();
  return id;
}

/**
 * Deletes the items of the reports the next one pushes out of the kept number, a statement of
 * ITEMS_PER_STATEMENT at a time with a turn of the event loop between, so that deleting their rows
 * cascades over nothing: a first pass over 100,000 files keeps 100,000 items, whose deletion in one
 * statement held the event loop for 0.6 s (a million, seconds). A report whose items are half
 * deleted (a crash between statements) is one the next save drops.
 */
async function dropItemsOfLeavingReports(db: Database): Promise<void> {
  for (;;) {
    const { meta } = await db
      .prepare(
        `DELETE FROM reload_report_items WHERE (report_id, list, seq) IN
           (SELECT report_id, list, seq FROM reload_report_items
            WHERE report_id IN (SELECT id FROM reload_reports ORDER BY seq DESC LIMIT -1 OFFSET ?) LIMIT ?)`,
      )
      .bind(KEPT_REPORTS - 1, ITEMS_PER_STATEMENT)
      .run();
    if (meta.changes < ITEMS_PER_STATEMENT) return;
    await nextTurn();
  }
}

async function insertChunks<T>(items: T[], statement: (chunk: T[], from: number) => ReturnType<Database['prepare']>): Promise<void> {
  for (let from = 0; from < items.length; from += ITEMS_PER_STATEMENT) {
    await statement(items.slice(from, from + ITEMS_PER_STATEMENT), from).run();
    await nextTurn();
  }
}

/**
 * Writes what the report numbered `seq` did to a standing list, and answers how many items stand
 * in it. A whole list keeps the items it shares with the one standing, from the first on, and
 * ends the rest (a full pass finds its refusals in the same order each time, so one refusal more
 * or less costs the items after it, not the list).
 */
async function saveStanding(db: Database, list: StandingList, change: StandingChange, seq: number, standing: number): Promise<number> {
  let ended = 0;
  let added: StandingItem[];
  if ('whole' in change) {
    const kept = await sharedStart(db, list, change.whole);
    if (kept.endFrom !== null) {
      await db.prepare('UPDATE reload_standing SET until_seq = ? WHERE list = ? AND until_seq IS NULL AND seq >= ?').bind(seq, list, kept.endFrom).run();
    }
    added = change.whole.slice(kept.count);
  } else {
    for (let from = 0; from < change.ended.length; from += ITEMS_PER_STATEMENT) {
      const { meta } = await db
        .prepare(`UPDATE reload_standing SET until_seq = ? WHERE list = ? AND until_seq IS NULL AND ${KEY[list]} IN (SELECT value FROM json_each(?))`)
        .bind(seq, list, toJson(change.ended.slice(from, from + ITEMS_PER_STATEMENT)))
        .run();
      ended += meta.changes;
    }
    added = change.added;
  }
  await insertChunks(added, (chunk) =>
    db
      .prepare(
        `INSERT INTO reload_standing (list, submission_id, file, reason, registry, since_seq)
         SELECT ?, json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'), json_extract(value, '$[3]'), ? FROM json_each(?) ORDER BY key`,
      )
      .bind(list, seq, toJson(chunk.map((item) => [item.id, item.file, item.reason, item.registry ? 1 : 0]))),
  );
  return 'whole' in change ? change.whole.length : standing - ended + added.length;
}

type StandingRow = { seq: number; id: string | null; file: string | null; reason: string | null; registry: number };

const sameItem = (row: StandingRow, item: StandingItem) =>
  row.id === item.id && row.file === item.file && row.reason === item.reason && row.registry === (item.registry ? 1 : 0);

/** How many of `whole`'s first items stand already, in order, and the first standing item after them (null: none). */
async function sharedStart(db: Database, list: StandingList, whole: StandingItem[]): Promise<{ count: number; endFrom: number | null }> {
  let count = 0;
  for (let after = -1; ; ) {
    const { results } = await db
      .prepare(
        'SELECT seq, submission_id AS id, file, reason, registry FROM reload_standing WHERE list = ? AND until_seq IS NULL AND seq > ? ORDER BY seq LIMIT ?',
      )
      .bind(list, after, ITEMS_PER_STATEMENT)
      .all<StandingRow>();
    for (const row of results) {
      if (count >= whole.length || !sameItem(row, whole[count])) return { count, endFrom: row.seq };
      count++;
    }
    if (results.length < ITEMS_PER_STATEMENT) return { count, endFrom: null };
    after = results.at(-1)!.seq;
    await nextTurn();
  }
}

/** The items standing in a list whose submission id or file is among `keys`. */
export async function standingItems(db: Database, list: StandingList, by: 'id' | 'file', keys: string[]): Promise<StandingItem[]> {
  const items: StandingItem[] = [];
  for (let from = 0; from < keys.length; from += ITEMS_PER_STATEMENT) {
    const { results } = await db
      .prepare(
        `SELECT submission_id AS id, file, reason, registry FROM reload_standing
         WHERE until_seq IS NULL AND ${by === 'id' ? 'submission_id' : 'file'} IN (SELECT value FROM json_each(?)) AND list = ?`,
      )
      .bind(toJson(keys.slice(from, from + ITEMS_PER_STATEMENT)), list)
      .all<Omit<StandingRow, 'seq'>>();
    items.push(...results.map((row) => ({ ...row, registry: row.registry === 1 })));
  }
  return items;
}

const toReport = ({ imported, updated, removed, rejected, seq: _seq, ...rest }: ReportRow): StoredReloadReport => ({
  ...rest,
  counts: { imported, updated, removed, rejected },
});

async function latestRow(db: Database): Promise<ReportRow | null> {
  return db.prepare('SELECT * FROM reload_reports ORDER BY seq DESC LIMIT 1').first<ReportRow>();
}

export async function getReloadReport(db: Database, id: string): Promise<StoredReloadReport | null> {
  const row = await db.prepare('SELECT * FROM reload_reports WHERE id = ?').bind(id).first<ReportRow>();
  return row && toReport(row);
}

/** The last report kept: the one whose removals and refusals stand. */
export async function latestReloadReport(db: Database): Promise<StoredReloadReport | null> {
  const row = await latestRow(db);
  return row && toReport(row);
}

/** A page of one list, in the reload's order, after the item numbered `after` (-1 for the first page). */
export async function listReloadItems(db: Database, id: string, list: ReloadList, after: number, limit: number): Promise<(ReloadItem & { seq: number })[]> {
  const statement =
    list === 'removed' || list === 'rejected'
      ? db.prepare(
          `SELECT s.seq, s.submission_id AS id, s.file, s.reason FROM reload_reports r JOIN reload_standing s ON s.list = ? AND s.seq > ?
           WHERE r.id = ? AND s.since_seq <= r.seq AND (s.until_seq IS NULL OR s.until_seq > r.seq) ORDER BY s.seq LIMIT ?`,
        )
      : db.prepare(
          `SELECT seq, submission_id AS id, file, reason FROM reload_report_items
           WHERE list = ? AND seq > ? AND report_id = ? ORDER BY seq LIMIT ?`,
        );
  const { results } = await statement.bind(list, after, id, limit).all<ReloadItem & { seq: number }>();
  return results;
}
