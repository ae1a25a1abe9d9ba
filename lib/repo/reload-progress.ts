import type { Database } from '../ports.js';

/** How far the running reload has come (migration 0025). */
export interface ReloadProgress {
  started_at: string;
  phase: 'listing' | 'reading';
  /** Files listed and compared with the stored index so far. */
  listed: number;
  /** New and changed files the pass reads (known once the listing is done). */
  to_read: number;
  read: number;
  updated_at: string;
}

/** A row not written for this long is a reload that ended without clearing it (a crash). */
const STALE_MS = 60_000;

export async function writeReloadProgress(db: Database, progress: ReloadProgress): Promise<void> {
  const p = progress;
  await db
    .prepare(
      `INSERT INTO reload_progress (id, started_at, phase, listed, to_read, read, updated_at) VALUES (1, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET started_at = excluded.started_at, phase = excluded.phase, listed = excluded.listed,
         to_read = excluded.to_read, read = excluded.read, updated_at = excluded.updated_at`,
    )
    .bind(p.started_at, p.phase, p.listed, p.to_read, p.read, p.updated_at)
    .run();
}

export async function clearReloadProgress(db: Database): Promise<void> {
  await db.prepare('DELETE FROM reload_progress').run();
}

/** The running reload's progress, or null when none runs. */
export async function readReloadProgress(db: Database, now: Date): Promise<ReloadProgress | null> {
  const row = await db.prepare('SELECT started_at, phase, listed, to_read, read, updated_at FROM reload_progress WHERE id = 1').first<ReloadProgress>();
  return row && now.getTime() - Date.parse(row.updated_at) < STALE_MS ? row : null;
}
