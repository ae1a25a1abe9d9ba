import { toJson } from './json.js';
import type { Database } from '../ports.js';

/**
 * The submissions folder's change journal (migration 0024): the folder watcher writes, reloads
 * read. `*` stands for a change of the images folder's entries that names no file (a burst the
 * watcher may not have seen whole, the folder replaced), `registry` for the registry file; any
 * other name is an image file added, removed, renamed or changed in place.
 */
export const FOLDER_ENTRIES_CHANGED = '*';
export const REGISTRY_CHANGED = 'registry';

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
  const { results } = await db.prepare('SELECT seq, name FROM folder_changes ORDER BY seq').all<{ seq: number; name: string }>();
  const changedFiles = new Set(results.map((r) => r.name).filter((name) => name !== FOLDER_ENTRIES_CHANGED && name !== REGISTRY_CHANGED));
  return {
    epoch: watch?.epoch ?? null,
    cleanReportId: watch?.clean_report_id ?? null,
    lastSeq: results.at(-1)?.seq ?? 0,
    changedFiles,
    changed: results.length > 0,
    unnamed: results.some((r) => r.name === FOLDER_ENTRIES_CHANGED || r.name === REGISTRY_CHANGED),
  };
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
