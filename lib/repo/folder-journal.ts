import { toJson } from './json.js';
import type { Database } from '../ports.js';

/**
 * The submissions folder's change journal (migration 0024): the folder watcher writes, reloads
 * read. `*` stands for a change of the images folder's entries that names no file (a burst the
 * watcher may not have seen whole, the folder replaced), `registry` for the registry file,
 * `fence/<name>` for a reload's fence (lib/ingest/folder-watch.ts: every change made before it is
 * journalled before it); any other name is an image file added, removed, renamed or changed in place.
 */
export const FOLDER_ENTRIES_CHANGED = '*';
export const REGISTRY_CHANGED = 'registry';
export const FENCE_PREFIX = 'fence/';
// The watcher names an image file by its base name, which has no slash: a fence is never a file.
const NOT_A_FENCE = "substr(name, 1, 6) <> 'fence/'";

export interface FolderJournal {
  epoch: string | null;
  cleanReportId: string | null;
  /** The last change read, or 0: what a pass may clear once it is done. */
  lastSeq: number;
  /** The image files named as added, removed, renamed or changed in place (special entries left out). */
  changedFiles: Set<string>;
  /** Anything at all was journalled since the last clean pass. */
  changed: boolean;
  /** The registry changed, or the folder's entries changed without names (only a listing tells what). */
  unnamed: boolean;
}

/** A new watcher starts: earlier changes and the last clean pass no longer count (the next reload is a full pass). */
export async function startFolderJournal(db: Database, epoch: string): Promise<void> {
  await db.batch([
    db.prepare('DELETE FROM folder_changes'),
    db
      .prepare(
        'INSERT INTO folder_watch (id, epoch, clean_report_id) VALUES (1, ?, NULL) ON CONFLICT (id) DO UPDATE SET epoch = excluded.epoch, clean_report_id = NULL',
      )
      .bind(epoch),
  ]);
}

/** The watcher stopped or failed: reloads go back to full passes. */
export async function stopFolderJournal(db: Database, epoch: string): Promise<void> {
  await db.prepare('UPDATE folder_watch SET epoch = NULL, clean_report_id = NULL WHERE id = 1 AND epoch = ?').bind(epoch).run();
}

export async function recordFolderChanges(db: Database, names: string[]): Promise<void> {
  if (names.length === 0) return;
  await db.prepare('INSERT INTO folder_changes (name) SELECT value FROM json_each(?)').bind(toJson(names)).run();
}

export async function readFolderJournal(db: Database): Promise<FolderJournal> {
  const watch = await db
    .prepare('SELECT epoch, clean_report_id FROM folder_watch WHERE id = 1')
    .first<{ epoch: string | null; clean_report_id: string | null }>();
  const lastSeq = await lastJournalled(db);
  const { results } = await db.prepare(`SELECT name FROM folder_changes WHERE seq <= ? AND ${NOT_A_FENCE} ORDER BY seq`).bind(lastSeq).all<{ name: string }>();
  const changedFiles = new Set(results.map((r) => r.name).filter((name) => name !== FOLDER_ENTRIES_CHANGED && name !== REGISTRY_CHANGED));
  return {
    epoch: watch?.epoch ?? null,
    cleanReportId: watch?.clean_report_id ?? null,
    lastSeq,
    changedFiles,
    changed: results.length > 0,
    unnamed: results.some((r) => r.name === FOLDER_ENTRIES_CHANGED || r.name === REGISTRY_CHANGED),
  };
}

/** The last change journalled, fences included, or 0: a fence is looked for after it. */
export async function lastJournalled(db: Database): Promise<number> {
  return (await db.prepare('SELECT max(seq) AS seq FROM folder_changes').first<{ seq: number | null }>())?.seq ?? 0;
}

/** The last change to the folder journalled (fences left out), or 0: unchanged while nothing is being copied in. */
export async function lastFolderChange(db: Database): Promise<number> {
  // From the newest back: the fences of the reload asking are all there is to pass over.
  return (await db.prepare(`SELECT seq FROM folder_changes WHERE ${NOT_A_FENCE} ORDER BY seq DESC LIMIT 1`).first<{ seq: number }>())?.seq ?? 0;
}

/** Whether the watcher has journalled the fence `name` after change `after`. */
export async function fenceJournalled(db: Database, name: string, after: number): Promise<boolean> {
  const row = await db
    .prepare('SELECT 1 AS found FROM folder_changes WHERE seq > ? AND name = ?')
    .bind(after, FENCE_PREFIX + name)
    .first();
  return row !== null;
}

/**
 * A pass read everything up to `lastSeq`: those changes are cleared and its report becomes the
 * clean one, unless another watcher has started since (then the next reload is a full pass anyway).
 */
export async function markFolderClean(db: Database, journal: FolderJournal, reportId: string): Promise<void> {
  if (!journal.epoch) return;
  await db.batch([
    db
      .prepare('DELETE FROM folder_changes WHERE seq <= ? AND EXISTS (SELECT 1 FROM folder_watch WHERE id = 1 AND epoch = ?)')
      .bind(journal.lastSeq, journal.epoch),
    db.prepare('UPDATE folder_watch SET clean_report_id = ? WHERE id = 1 AND epoch = ?').bind(reportId, journal.epoch),
  ]);
}
