import type { Database, SqlValue } from '../db/types.js';
import { invalid } from '../errors.js';
import type { Decision, RiskLevel } from '../vocabulary.js';
import { toJson } from './json.js';

export interface FaceRecord {
  box: { x: number; y: number; width: number; height: number };
  score: number;
}

export interface RiskSignal {
  code: string;
  label: string;
  weight: number;
  evidence_ids: string[];
}

export interface Risk {
  score: number;
  level: RiskLevel;
  signals: RiskSignal[];
}

export type AnalysisStatus = 'pending' | 'done' | 'failed';
export type EnrichmentStatus = 'pending' | 'running' | 'done' | 'failed' | 'skipped';

/** A submission as every endpoint returns it (CONTRACT.md section 3). */
export interface Submission {
  id: string;
  title: string;
  file: string;
  media_url: string;
  /** A ~320 px JPEG made during analysis, for lists; null until the submission is analysed. */
  thumb_url: string | null;
  width: number | null;
  height: number | null;
  submitted_at: string;
  submitted_at_epoch: number;
  format: string | null;
  bytes: number | null;
  sha256: string | null;
  phash: string | null;
  faces: FaceRecord[];
  analysis_status: AnalysisStatus;
  analysis_error: string | null;
  enrichment_status: EnrichmentStatus;
  risk: Risk;
  decision: { value: Decision; note: string | null; decided_at: string } | null;
  evidence_count: number;
  attention_match: boolean;
}

/** The stored row, with the internal columns the API does not show. */
export interface SubmissionRow {
  id: string;
  title: string;
  file: string;
  origin: 'quick' | 'registry';
  /** Who submits and claims the rights (a registry entry's `submitter`); quick submissions have none. */
  submitter: string | null;
  width: number | null;
  height: number | null;
  submitted_at: string;
  submitted_at_epoch: number;
  format: string | null;
  bytes: number | null;
  sha256: string | null;
  phash: string | null;
  fingerprints: string | null;
  faces: string;
  derived_path: string | null;
  derived_created_at: string | null;
  thumb_path: string | null;
  file_mtime_ms: number | null;
  file_version: string | null;
  analysis_status: AnalysisStatus;
  analysis_error: string | null;
  enrichment_status: EnrichmentStatus;
  risk_score: number;
  risk_level: RiskLevel;
  risk_signals: string;
  decision: Decision | null;
  decision_note: string | null;
  decided_at: string | null;
  created_at: string;
  updated_at: string;
  evidence_count: number;
  attention_match: number;
}

const SELECT = 'SELECT s.* FROM submissions s';

/** A JSON column as the record shows it: its value, or an empty list when the cell is not JSON (one bad cell never breaks a list). */
const jsonList = (column: string) => `json(CASE WHEN json_valid(${column}) AND json_type(${column}) <> 'null' THEN ${column} ELSE '[]' END)`;

/**
 * A submission record as every endpoint shows it, written by SQLite as JSON text: a queue page
 * passes its rows' text on as it is. Parsing better-sqlite3's cells into objects and serializing
 * the page again were a quarter of a queue request's CPU (issue 11). Paths that need escaping in
 * a URL are mended in JS (recordText). `json()` around a CASE keeps a nested value JSON, not text.
 */
const RECORD = `json_object(
  'id', s.id, 'title', s.title, 'file', s.file, 'media_url', '/media/' || s.file,
  'thumb_url', CASE WHEN s.thumb_path IS NULL THEN NULL ELSE '/media/' || s.thumb_path END,
  'width', s.width, 'height', s.height, 'submitted_at', s.submitted_at, 'submitted_at_epoch', s.submitted_at_epoch,
  'format', s.format, 'bytes', s.bytes, 'sha256', s.sha256, 'phash', s.phash, 'faces', ${jsonList('s.faces')},
  'analysis_status', s.analysis_status, 'analysis_error', s.analysis_error, 'enrichment_status', s.enrichment_status,
  'risk', json_object('score', s.risk_score, 'level', s.risk_level, 'signals', ${jsonList('s.risk_signals')}),
  'decision', json(CASE WHEN s.decision IS NULL THEN 'null' ELSE json_object('value', s.decision, 'note', s.decision_note, 'decided_at', coalesce(s.decided_at, '')) END),
  'evidence_count', coalesce(s.evidence_count, 0),
  'attention_match', json(CASE WHEN s.attention_match THEN 'true' ELSE 'false' END)
)`;
const SELECT_RECORD = `SELECT ${RECORD} AS record, s.file AS file, s.thumb_path AS thumb_path, s.queue_rank AS queue_rank FROM submissions s`;

interface RecordRow {
  record: string;
  file: string;
  thumb_path: string | null;
  queue_rank: string;
}

// The characters encodeURIComponent leaves as they are, and the separator: most paths have no others.
const URL_SAFE_PATH = /^[\w.!~*'()/-]*$/;

export function mediaUrl(path: string): string {
  if (URL_SAFE_PATH.test(path)) return `/media/${path}`;
  return `/media/${path.split('/').map(encodeURIComponent).join('/')}`;
}

/** The record's JSON text, its media URLs escaped where a path needs it. */
function recordText(row: RecordRow): string {
  if (URL_SAFE_PATH.test(row.file) && (row.thumb_path === null || URL_SAFE_PATH.test(row.thumb_path))) return row.record;
  const record = JSON.parse(row.record) as Submission;
  record.media_url = mediaUrl(row.file);
  record.thumb_url = row.thumb_path === null ? null : mediaUrl(row.thumb_path);
  return JSON.stringify(record);
}

export async function getSubmissionRow(db: Database, id: string): Promise<SubmissionRow | null> {
  return db.prepare(`${SELECT} WHERE s.id = ?`).bind(id).first<SubmissionRow>();
}

export async function getSubmission(db: Database, id: string): Promise<Submission | null> {
  const row = await db.prepare(`${SELECT_RECORD} WHERE s.id = ?`).bind(id).first<RecordRow>();
  return row ? (JSON.parse(recordText(row)) as Submission) : null;
}

export async function listSubmissionRows(db: Database): Promise<SubmissionRow[]> {
  return (await db.prepare(`${SELECT} ORDER BY s.id`).all<SubmissionRow>()).results;
}

export interface QueueFilter {
  limit: number;
  offset: number;
  /** Where the previous page ended (`next_cursor` of its answer); then `offset` is not used. */
  cursor?: string;
  decision?: Decision | 'undecided';
  level?: RiskLevel;
  enrichment?: EnrichmentStatus;
  attention?: boolean;
  /** Any part of the id or the title (case-insensitive). */
  q?: string;
}

export interface QueuePage {
  /** Each submission record as JSON text (queuePageJson puts them into an answer unparsed). */
  records: string[];
  total: number;
  /** Pass as `cursor` for the page after this one; null on the last page. */
  next_cursor: string | null;
}

/** The page's submissions as objects (exports, tests). */
export const queueItems = (page: QueuePage): Submission[] => page.records.map((r) => JSON.parse(r) as Submission);

/** The page as the API answers it: `{items, total, next_cursor}`. */
export function queuePageJson(page: QueuePage): string {
  return `{"items":[${page.records.join(',')}],"total":${page.total},"next_cursor":${JSON.stringify(page.next_cursor)}}`;
}

// FTS5's trigram index answers parts of three characters or more; shorter ones are read row by row.
const TRIGRAM = 3;
// Above this many matches, reading the queue in its order and keeping the matching rows fills a
// page sooner than sorting every match.
const COMMON_TERM = 2000;

/**
 * Undecided first, then risk score high to low, then newest submission first (`queue_rank`, one
 * indexed key, so that a page costs the same at any depth). `total` counts the whole filter: from
 * the counters kept per filter combination, or with a search, from the search index.
 */
export async function listQueue(db: Database, filter: QueueFilter): Promise<QueuePage> {
  const where: string[] = [];
  const params: SqlValue[] = [];
  const add = (condition: string, ...values: SqlValue[]) => {
    where.push(condition);
    params.push(...values);
  };
  if (filter.decision === 'undecided') add("s.decision IS NULL");
  else if (filter.decision) add('s.decision = ?', filter.decision);
  if (filter.level) add('s.risk_level = ?', filter.level);
  if (filter.enrichment) add('s.enrichment_status = ?', filter.enrichment);
  if (filter.attention !== undefined) add('s.attention_match = ?', filter.attention ? 1 : 0);

  let total: number;
  if (!filter.q) {
    const counters = where.map((c) => c.replace('s.decision IS NULL', "decision = ''").replaceAll('s.', ''));
    const counted = await db
      .prepare(`SELECT COALESCE(SUM(n), 0) AS n FROM queue_counts${counters.length ? ` WHERE ${counters.join(' AND ')}` : ''}`)
      .bind(...params)
      .first<{ n: number }>();
    total = Number(counted?.n ?? 0);
  } else if ([...filter.q].length >= TRIGRAM) {
    const match = `"${filter.q.replaceAll('"', '""')}"`;
    const filtered = where.length ? ` AND ${where.join(' AND ')}` : '';
    // The count hands over the matching rows when they are few, so that the page does not run the
    // search a second time (issue 11: the search is most of the cost of finding one id).
    const few = (rowid: string) => `CASE WHEN COUNT(*) <= ${COMMON_TERM} THEN json_group_array(${rowid}) END AS rowids`;
    const counted = await db
      .prepare(
        where.length
          ? `SELECT COUNT(*) AS n, ${few('s.rowid')} FROM submissions_search f JOIN submissions s ON s.rowid = f.rowid WHERE submissions_search MATCH ?${filtered}`
          : `SELECT COUNT(*) AS n, ${few('rowid')} FROM submissions_search WHERE submissions_search MATCH ?`,
      )
      .bind(match, ...params)
      .first<{ n: number; rowids: string | null }>();
    total = Number(counted?.n ?? 0);
    if (total > COMMON_TERM) add("(s.id LIKE ? ESCAPE '\\' OR s.title LIKE ? ESCAPE '\\')", likeAny(filter.q), likeAny(filter.q));
    else add('s.rowid IN (SELECT value FROM json_each(?))', counted?.rowids ?? '[]');
  } else {
    add("(s.id LIKE ? ESCAPE '\\' OR s.title LIKE ? ESCAPE '\\')", likeAny(filter.q), likeAny(filter.q));
    const counted = await db.prepare(`SELECT COUNT(*) AS n FROM submissions s WHERE ${where.join(' AND ')}`).bind(...params).first<{ n: number }>();
    total = Number(counted?.n ?? 0);
  }

  const after = filter.cursor === undefined ? null : decodeCursor(filter.cursor);
  if (after !== null) add('s.queue_rank > ?', after);
  const clause = where.length ? ` WHERE ${where.join(' AND ')}` : '';
  // One row beyond the page tells whether there is a next one.
  const rows = await db
    .prepare(`${SELECT_RECORD}${clause} ORDER BY s.queue_rank LIMIT ? OFFSET ?`)
    .bind(...params, filter.limit + 1, after === null ? filter.offset : 0)
    .all<RecordRow>();
  const page = rows.results.slice(0, filter.limit);
  return {
    records: page.map(recordText),
    total,
    next_cursor: rows.results.length > filter.limit ? encodeCursor(page[page.length - 1].queue_rank) : null,
  };
}

/** A LIKE pattern for any part of a text, its own `%`, `_` and `\\` taken literally. */
const likeAny = (text: string) => `%${text.replace(/[\\%_]/g, '\\$&')}%`;

const encodeCursor = (rank: string) => Buffer.from(rank, 'utf8').toString('base64url');

/** A cursor is opaque to callers; one that was not made here is refused as a bad parameter. */
function decodeCursor(cursor: string): string {
  const rank = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^[01]\d{16}./s.test(rank) || encodeCursor(rank) !== cursor) throw invalid('cursor: not one this service gave out');
  return rank;
}

export interface SubmissionInput {
  id: string;
  title: string;
  file: string;
  origin: 'quick' | 'registry';
  submitter?: string | null;
  submitted_at: string;
  submitted_at_epoch: number;
  width: number;
  height: number;
  format: string;
  bytes: number;
  sha256: string;
  /** The file's modification time and the store's version when it was read: a reload that sees the same skips it. */
  file_mtime_ms?: number | null;
  file_version?: string | null;
}

/**
 * New submissions, or new bytes for existing ones: analysis starts over, the decision stays. One
 * statement for many rows (one bound JSON value): D1 counts statements against its 1,000 queries
 * per invocation and allows 100 bound values each, so a reload of 1,000 new files stays one query
 * per page. Ids must be distinct.
 */
export function upsertSubmissionStatement(db: Database, rows: SubmissionInput | SubmissionInput[], now: string) {
  const list = (Array.isArray(rows) ? rows : [rows]).map((s) => ({ ...s, submitter: s.submitter ?? null, file_mtime_ms: s.file_mtime_ms ?? null, file_version: s.file_version ?? null }));
  const field = (name: keyof SubmissionInput) => `json_extract(value, '$.${name}')`;
  const columns = ['id', 'title', 'file', 'origin', 'submitter', 'width', 'height', 'submitted_at', 'submitted_at_epoch', 'format', 'bytes', 'sha256', 'file_mtime_ms', 'file_version'] as const;
  return db
    .prepare(
      `INSERT INTO submissions (${columns.join(', ')}, analysis_status, enrichment_status, created_at, updated_at)
       SELECT ${columns.map(field).join(', ')}, 'pending', 'pending', ?, ? FROM json_each(?) WHERE true
       ON CONFLICT (id) DO UPDATE SET title = excluded.title, file = excluded.file, origin = excluded.origin, submitter = excluded.submitter,
         width = excluded.width, height = excluded.height, submitted_at = excluded.submitted_at,
         submitted_at_epoch = excluded.submitted_at_epoch, format = excluded.format, bytes = excluded.bytes,
         sha256 = excluded.sha256, file_mtime_ms = excluded.file_mtime_ms, file_version = excluded.file_version,
         phash = NULL, fingerprints = NULL, faces = '[]', thumb_path = NULL, analysis_status = 'pending',
         analysis_error = NULL, enrichment_status = 'pending', updated_at = excluded.updated_at`,
    )
    .bind(now, now, toJson(list));
}

/** A new title or time, and the file's stat signature (its bytes are the same as stored). */
export function updateSubmissionMetaStatement(
  db: Database,
  id: string,
  meta: { title: string; submitter: string | null; submitted_at: string; submitted_at_epoch: number },
  file: { size: number; mtimeMs: number; version: string },
  now: string,
) {
  return db
    .prepare('UPDATE submissions SET title = ?, submitter = ?, submitted_at = ?, submitted_at_epoch = ?, bytes = ?, file_mtime_ms = ?, file_version = ?, updated_at = ? WHERE id = ?')
    .bind(meta.title, meta.submitter, meta.submitted_at, meta.submitted_at_epoch, file.size, file.mtimeMs, file.version, now, id);
}

export interface AnalysisResult {
  phash: string;
  fingerprints: unknown;
  faces: FaceRecord[];
  thumb_path: string | null;
  /** Set when the image was analysed but a part of it (face detection, the thumbnail) failed. */
  analysis_error?: string | null;
}

/**
 * Stores an analysis of the bytes whose hash the analysis started from. When a reload recorded new
 * bytes in the meantime, nothing is stored (false): the analysis queued for the new bytes will be.
 */
export async function saveAnalysis(db: Database, id: string, analysedSha256: string | null, result: AnalysisResult, now: string): Promise<boolean> {
  const outcome = await db
    .prepare(
      `UPDATE submissions SET phash = ?, fingerprints = ?, faces = ?, thumb_path = ?,
         analysis_status = 'done', analysis_error = ?, updated_at = ? WHERE id = ? AND sha256 IS ?`,
    )
    .bind(result.phash, toJson(result.fingerprints), toJson(result.faces), result.thumb_path, result.analysis_error ?? null, now, id, analysedSha256)
    .run();
  return outcome.meta.changes > 0;
}

export async function saveAnalysisFailure(db: Database, id: string, analysedSha256: string | null, reason: string, now: string): Promise<boolean> {
  const outcome = await db
    .prepare(`UPDATE submissions SET analysis_status = 'failed', analysis_error = ?, updated_at = ? WHERE id = ? AND sha256 IS ?`)
    .bind(reason, now, id, analysedSha256)
    .run();
  return outcome.meta.changes > 0;
}

/** The copy that was sent to web detection, kept as the record of what left the service. */
export async function saveDerivedPath(db: Database, id: string, derivedPath: string, now: string): Promise<void> {
  await db.prepare('UPDATE submissions SET derived_path = ?, derived_created_at = ? WHERE id = ?').bind(derivedPath, now, id).run();
}

export async function setEnrichmentStatus(db: Database, id: string, status: EnrichmentStatus, now: string) {
  await db.prepare('UPDATE submissions SET enrichment_status = ?, updated_at = ? WHERE id = ?').bind(status, now, id).run();
}

export function saveRiskStatement(db: Database, id: string, risk: Risk, now: string) {
  return db
    .prepare('UPDATE submissions SET risk_score = ?, risk_level = ?, risk_signals = ?, updated_at = ? WHERE id = ?')
    .bind(risk.score, risk.level, toJson(risk.signals), now, id);
}

export function saveDecisionStatement(db: Database, id: string, decision: Decision, note: string | null, now: string) {
  return db
    .prepare('UPDATE submissions SET decision = ?, decision_note = ?, decided_at = ?, updated_at = ? WHERE id = ?')
    .bind(decision, note, now, now, id);
}

export async function clearDerivedPath(db: Database, id: string) {
  await db.prepare('UPDATE submissions SET derived_path = NULL, derived_created_at = NULL WHERE id = ?').bind(id).run();
}

/** Submissions whose derived image is older than the cutoff (for the retention job). */
export async function listExpiredDerivedImages(db: Database, cutoff: string): Promise<{ id: string; derived_path: string }[]> {
  return (
    await db
      .prepare('SELECT id, derived_path FROM submissions WHERE derived_path IS NOT NULL AND derived_created_at < ?')
      .bind(cutoff)
      .all<{ id: string; derived_path: string }>()
  ).results;
}

/** Clears an expired derived image only if no newer analysis replaced it since it was listed. */
export function clearExpiredDerivedStatement(db: Database, id: string, derivedPath: string, cutoff: string) {
  return db
    .prepare('UPDATE submissions SET derived_path = NULL, derived_created_at = NULL WHERE id = ? AND derived_path = ? AND derived_created_at < ?')
    .bind(id, derivedPath, cutoff);
}

/** Every derived image a submission still points to (the retention job keeps these files). */
export async function listDerivedPaths(db: Database): Promise<string[]> {
  const rows = await db.prepare('SELECT derived_path FROM submissions WHERE derived_path IS NOT NULL').all<{ derived_path: string }>();
  return rows.results.map((r) => r.derived_path);
}
