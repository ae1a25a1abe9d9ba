import type { Database, Statement } from '../ports.js';

/** What a reload reads of the stored submissions, and the files whose bytes it refused (migration 0015). */

/**
 * What a reload needs of each stored submission: no fingerprints, no counts. Title and time are
 * read only of registry rows, by a second query (a quick row's come from its file): four more
 * columns in the paged read, even empty, made reading 100,000 rows a third slower.
 */
export interface IndexedSubmission {
  id: string;
  file: string;
  origin: 'quick' | 'registry';
  title: string | null;
  submitter: string | null;
  submitted_at: string | null;
  submitted_at_epoch: number | null;
  bytes: number | null;
  file_mtime_ms: number | null;
  file_version: string | null;
}

export type SubmissionMeta = Pick<IndexedSubmission, 'title' | 'submitter' | 'submitted_at' | 'submitted_at_epoch'>;

/** A file whose bytes were refused, with the signature it had then. */
export interface Refusal {
  file: string;
  bytes: number;
  file_mtime_ms: number;
  file_version: string;
  reason: string;
}

type IndexTuple = [string, string, IndexedSubmission['origin'], number | null, number | null, string | null];

/** The submissions after `after` in id order, at most `limit`, without their metadata; `last` is the next page's `after`. */
export async function submissionIndexPage(db: Database, after: string, limit: number): Promise<{ rows: IndexedSubmission[]; last: string | null }> {
  // A page is one JSON text: better-sqlite3's object and string per cell cost about twice
  // SQLite's JSON and JSON.parse over 100,000 rows.
  const page = await db
    .prepare(
      `SELECT json_group_array(json_array(id, file, origin, bytes, file_mtime_ms, file_version)) AS rows, max(id) AS last
       FROM (SELECT id, file, origin, bytes, file_mtime_ms, file_version FROM submissions WHERE id > ? ORDER BY id LIMIT ?)`,
    )
    .bind(after, limit)
    .first<{ rows: string; last: string | null }>();
  const rows = (JSON.parse(page?.rows ?? '[]') as IndexTuple[]).map(
    ([id, file, origin, bytes, file_mtime_ms, file_version]): IndexedSubmission => ({
      id,
      file,
      origin,
      bytes,
      file_mtime_ms,
      file_version,
      title: null,
      submitter: null,
      submitted_at: null,
      submitted_at_epoch: null,
    }),
  );
  return { rows, last: page?.last ?? null };
}

/** The stored submissions of the given files, with their metadata (a reload over the files a journal names). */
export async function submissionsOfFiles(db: Database, files: string[]): Promise<IndexedSubmission[]> {
  const rows = await db
    .prepare(
      `SELECT id, file, origin, title, submitter, submitted_at, submitted_at_epoch, bytes, file_mtime_ms, file_version FROM submissions
       WHERE file IN (SELECT value FROM json_each(?))`,
    )
    .bind(JSON.stringify(files))
    .all<IndexedSubmission>();
  return rows.results;
}

/** Which of the ids a stored submission already has. */
export async function storedIds(db: Database, ids: string[]): Promise<Set<string>> {
  const rows = await db.prepare('SELECT id FROM submissions WHERE id IN (SELECT value FROM json_each(?))').bind(JSON.stringify(ids)).all<{ id: string }>();
  return new Set(rows.results.map((r) => r.id));
}

/** The metadata of the given submissions, by id. */
export async function listSubmissionMeta(db: Database, ids: string[]): Promise<(SubmissionMeta & { id: string })[]> {
  const rows = await db
    .prepare('SELECT id, title, submitter, submitted_at, submitted_at_epoch FROM submissions WHERE id IN (SELECT value FROM json_each(?))')
    .bind(JSON.stringify(ids))
    .all<SubmissionMeta & { id: string }>();
  return rows.results;
}

/** A submission's metadata and the hash of the bytes it was stored with. */
export async function getSubmissionMeta(db: Database, id: string): Promise<(SubmissionMeta & { sha256: string | null }) | null> {
  return db
    .prepare('SELECT title, submitter, submitted_at, submitted_at_epoch, sha256 FROM submissions WHERE id = ?')
    .bind(id)
    .first<SubmissionMeta & { sha256: string | null }>();
}

/** A page of the refused files, in file order, after `after`: a full pass reads them all, a page at a time. */
export async function refusalsPage(db: Database, after: string, limit: number): Promise<Refusal[]> {
  const rows = await db
    .prepare('SELECT file, bytes, file_mtime_ms, file_version, reason FROM refused_files WHERE file > ? ORDER BY file LIMIT ?')
    .bind(after, limit)
    .all<Refusal>();
  return rows.results;
}

/** The refusals of the named files: a reload over the files the folder journal names looks up only those. */
export async function refusalsOf(db: Database, files: string[]): Promise<Refusal[]> {
  const rows = await db
    .prepare('SELECT file, bytes, file_mtime_ms, file_version, reason FROM refused_files WHERE file IN (SELECT value FROM json_each(?))')
    .bind(JSON.stringify(files))
    .all<Refusal>();
  return rows.results;
}

// Refusals written or cleared per statement: one JSON array each, well inside D1's statement size.
const REFUSAL_PAGE = 200;

/** Remembers the newly refused files and forgets the cleared ones (gone, changed or now accepted). */
export function keepRefusalsStatements(db: Database, added: Refusal[], cleared: string[]): Statement[] {
  const statements: Statement[] = [];
  for (let start = 0; start < added.length; start += REFUSAL_PAGE) {
    statements.push(
      db
        .prepare(
          `INSERT INTO refused_files (file, bytes, file_mtime_ms, file_version, reason)
           SELECT json_extract(value, '$.file'), json_extract(value, '$.bytes'), json_extract(value, '$.file_mtime_ms'), json_extract(value, '$.file_version'), json_extract(value, '$.reason') FROM json_each(?) WHERE true
           ON CONFLICT (file) DO UPDATE SET bytes = excluded.bytes, file_mtime_ms = excluded.file_mtime_ms, file_version = excluded.file_version, reason = excluded.reason`,
        )
        .bind(JSON.stringify(added.slice(start, start + REFUSAL_PAGE))),
    );
  }
  for (let start = 0; start < cleared.length; start += REFUSAL_PAGE) {
    statements.push(
      db.prepare('DELETE FROM refused_files WHERE file IN (SELECT value FROM json_each(?))').bind(JSON.stringify(cleared.slice(start, start + REFUSAL_PAGE))),
    );
  }
  return statements;
}
