import type { Database } from '../ports.js';

/**
 * The stored files the retention job ages out, each a path column of one table: when it was made,
 * which rows are kept whatever their age, and what a cleared row forgets. One fixed list, so the
 * three kinds are listed, cleared and kept by the same statements and no SQL is built from input.
 */
const RETAINED = {
  /** Downloaded evidence images (a local path outside evidence/ is not the service's download). */
  evidence: {
    table: 'evidence',
    path: 'local_media_path',
    made: 'local_media_created_at',
    expires: "local_media_path LIKE 'evidence/%'",
    forget: 'local_media_path = NULL, local_media_created_at = NULL',
  },
  /** Derived (transformed) copies of submissions. */
  derived: {
    table: 'submissions',
    path: 'derived_path',
    made: 'derived_created_at',
    expires: 'derived_path IS NOT NULL',
    forget: 'derived_path = NULL, derived_created_at = NULL',
  },
  /**
   * Page captures, except those of a decided case or of an entry still on the watchlist or its
   * candidate list: a case someone acted on keeps its proof until it is deleted. The fetch time
   * stays, as the record of when the page was seen.
   */
  captures: {
    table: 'page_captures',
    path: 'media_path',
    made: 'fetched_at',
    expires: `media_path IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM submissions s WHERE s.id = page_captures.submission_id AND s.decision IS NOT NULL)
      AND NOT EXISTS (SELECT 1 FROM knowledge_entries k WHERE k.submission_id = page_captures.submission_id AND k.state IN ('주의 후보', '확정 DB 편입'))`,
    forget: 'media_path = NULL',
  },
} as const;

export type RetainedMedia = keyof typeof RETAINED;
export const RETAINED_MEDIA = Object.keys(RETAINED) as RetainedMedia[];

/** A stored file older than the cutoff and the row that points to it. */
export interface ExpiredMedia {
  id: string;
  path: string;
}

/** The files of one kind older than the cutoff, with their rows (for the retention job). */
export async function listExpiredMedia(db: Database, kind: RetainedMedia, cutoff: string): Promise<ExpiredMedia[]> {
  const { table, path, made, expires } = RETAINED[kind];
  const sql = `SELECT id, ${path} AS path FROM ${table} WHERE ${expires} AND ${made} < ?`;
  return (await db.prepare(sql).bind(cutoff).all<ExpiredMedia>()).results;
}

/**
 * Forgets an expired file's path only if the row still points to it and it is still older than the
 * cutoff: a newer download, analysis or capture since it was listed keeps its file.
 */
export function clearExpiredMediaStatement(db: Database, kind: RetainedMedia, expired: ExpiredMedia, cutoff: string) {
  const { table, path, made, forget } = RETAINED[kind];
  return db.prepare(`UPDATE ${table} SET ${forget} WHERE id = ? AND ${path} = ? AND ${made} < ?`).bind(expired.id, expired.path, cutoff);
}

/** Every file of one kind a record still points to (the retention job keeps these). */
export async function listReferencedMedia(db: Database, kind: RetainedMedia): Promise<string[]> {
  const { table, path } = RETAINED[kind];
  return (await db.prepare(`SELECT ${path} AS path FROM ${table} WHERE ${path} IS NOT NULL`).all<{ path: string }>()).results.map((r) => r.path);
}
