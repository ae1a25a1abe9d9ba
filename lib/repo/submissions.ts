import { setImmediate as nextTurn } from 'node:timers/promises';
import type { z } from 'zod';
import type { QueuePageRecord, SubmissionRecord } from '../api/records.js';
import { invalid } from '../http/errors.js';
import type { Decision, RiskLevel } from '../vocabulary.js';
import { fromJson, toJson } from './json.js';
import type { Database, SqlValue, Statement } from '../ports.js';

/** A submission as every endpoint returns it (CONTRACT.md section 3): the API record's own type. */
export type Submission = z.infer<typeof SubmissionRecord>;
export type FaceRecord = Submission['faces'][number];
/** A person box (whole or partial body); `face` is the index in `faces` of the face inside it. */
export type PersonRecord = Submission['people'][number];
export type Risk = Submission['risk'];
export type RiskSignal = Risk['signals'][number];
export type AnalysisStatus = Submission['analysis_status'];
export type EnrichmentStatus = Submission['enrichment_status'];

/** The columns a submission record shows as they are stored (the others are parsed or built from columns). */
type StoredAsShown =
  | 'id'
  | 'title'
  | 'file'
  | 'width'
  | 'height'
  | 'submitted_at'
  | 'submitted_at_epoch'
  | 'format'
  | 'bytes'
  | 'sha256'
  | 'phash'
  | 'analysis_status'
  | 'analysis_error'
  | 'enrichment_status'
  | 'evidence_count';

/**
 * The stored row: the columns the record shows as stored, then the columns the record parses (JSON
 * text, 0/1 flags, the risk and decision split into columns) and the internal ones the API does
 * not show. Row and record are two layers (docs/architecture.md); the shared fields are written once.
 */
export interface SubmissionRow extends Pick<Submission, StoredAsShown> {
  origin: 'quick' | 'registry';
  /** Who submits and claims the rights (a registry entry's `submitter`); quick submissions have none. */
  submitter: string | null;
  fingerprints: string | null;
  faces: string;
  people: string;
  has_people: number;
  derived_path: string | null;
  derived_created_at: string | null;
  thumb_path: string | null;
  file_mtime_ms: number | null;
  file_version: string | null;
  risk_score: number;
  risk_level: RiskLevel;
  risk_signals: string;
  decision: Decision | null;
  decision_note: string | null;
  decided_at: string | null;
  created_at: string;
  updated_at: string;
  attention_match: number;
}

const SELECT = 'SELECT s.* FROM submissions s';
/** What a reload records of a file and its entry, beside the id, title and file; a record shows them all. */
const RECORDED_COLUMNS = ['width', 'height', 'submitted_at', 'submitted_at_epoch', 'format', 'bytes', 'sha256'] as const;
/** What a submission record shows; lists read these and not the wide internal columns (fingerprints). */
const SHOWN_COLUMNS = [
  'id',
  'title',
  'file',
  'thumb_path',
  ...RECORDED_COLUMNS,
  'phash',
  'faces',
  'people',
  'analysis_status',
  'analysis_error',
  'enrichment_status',
  'risk_score',
  'risk_level',
  'risk_signals',
  'decision',
  'decision_note',
  'decided_at',
  'evidence_count',
  'attention_match',
] as const;
type ShownRow = Pick<SubmissionRow, (typeof SHOWN_COLUMNS)[number]>;
/**
 * A page of the queue reads each row as one JSON array of the shown columns and its `queue_rank`:
 * better-sqlite3 makes a JS object and a string per cell, which for 51 rows of 25 cells costs
 * about three times what SQLite takes to write the same cells as JSON and JSON.parse to read them
 * (issue 11: 1.0 against 0.3 ms a page). JSON keeps every value as stored (JSON columns stay text).
 */
const SELECT_SHOWN_CELLS = `SELECT json_array(${SHOWN_COLUMNS.map((c) => `s.${c}`).join(', ')}, s.queue_rank) AS cells FROM submissions s`;

/** The cells in SHOWN_COLUMNS' order, named by one object literal (one shape, unlike keys set in a loop). */
function shownRow(cells: string): ShownRow & { queue_rank: string } {
  const c = JSON.parse(cells);
  return {
    id: c[0],
    title: c[1],
    file: c[2],
    thumb_path: c[3],
    width: c[4],
    height: c[5],
    submitted_at: c[6],
    submitted_at_epoch: c[7],
    format: c[8],
    bytes: c[9],
    sha256: c[10],
    phash: c[11],
    faces: c[12],
    people: c[13],
    analysis_status: c[14],
    analysis_error: c[15],
    enrichment_status: c[16],
    risk_score: c[17],
    risk_level: c[18],
    risk_signals: c[19],
    decision: c[20],
    decision_note: c[21],
    decided_at: c[22],
    evidence_count: c[23],
    attention_match: c[24],
    queue_rank: c[25],
  };
}

// The characters encodeURIComponent leaves as they are, and the separator: most paths have no others.
const URL_SAFE_PATH = /^[\w.!~*'()/-]*$/;

export function mediaUrl(path: string): string {
  if (URL_SAFE_PATH.test(path)) return `/media/${path}`;
  return `/media/${path.split('/').map(encodeURIComponent).join('/')}`;
}

/**
 * One object literal, each field named: a queue page makes 50 of these, and spreading picked
 * columns into the record cost 20-30 µs a row (a third of a page's CPU at a million submissions).
 */
export function toSubmission(row: ShownRow): Submission {
  return {
    id: row.id,
    title: row.title,
    file: row.file,
    width: row.width,
    height: row.height,
    submitted_at: row.submitted_at,
    submitted_at_epoch: row.submitted_at_epoch,
    format: row.format,
    bytes: row.bytes,
    sha256: row.sha256,
    phash: row.phash,
    analysis_status: row.analysis_status,
    analysis_error: row.analysis_error,
    enrichment_status: row.enrichment_status,
    media_url: mediaUrl(row.file),
    thumb_url: row.thumb_path ? mediaUrl(row.thumb_path) : null,
    faces: fromJson<FaceRecord[]>(row.faces, []),
    people: fromJson<PersonRecord[]>(row.people, []),
    risk: { score: row.risk_score, level: row.risk_level, signals: fromJson<RiskSignal[]>(row.risk_signals, []) },
    decision: row.decision ? { value: row.decision, note: row.decision_note, decided_at: row.decided_at ?? '' } : null,
    evidence_count: Number(row.evidence_count ?? 0),
    attention_match: Boolean(row.attention_match),
  };
}

/** A submission's row; its answer is the first of its rows (`rowsOf`), none when it is gone. */
export function submissionRowStatement(db: Database, id: string) {
  return db.prepare(`${SELECT} WHERE s.id = ?`).bind(id);
}

/** The row of the submission whose job of `type` the claim `token` holds (read in the claim's batch). */
export function claimedSubmissionRowStatement(db: Database, type: string, token: string) {
  return db
    .prepare(`${SELECT} WHERE s.id = (SELECT j.submission_id FROM jobs j WHERE j.type = ? AND j.status = 'running' AND j.run_token = ?)`)
    .bind(type, token);
}

export async function getSubmissionRow(db: Database, id: string): Promise<SubmissionRow | null> {
  return submissionRowStatement(db, id).first<SubmissionRow>();
}

export async function getSubmission(db: Database, id: string): Promise<Submission | null> {
  const row = await getSubmissionRow(db, id);
  return row ? toSubmission(row) : null;
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
  /** Whether the picture shows anyone: a person box or a face. */
  people?: boolean;
  /** Any part of the id or the title (case-insensitive). */
  q?: string;
}

/** A page of the queue; its `next_cursor` goes as `cursor` for the page after it, null on the last page. */
export type QueuePage = z.infer<typeof QueuePageRecord>;

// FTS5's trigram index answers parts of three characters or more; shorter ones are looked up in
// submission_grams (migration 0016), which keeps every character and pair of characters.
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
  if (filter.decision === 'undecided') add('s.decision IS NULL');
  else if (filter.decision) add('s.decision = ?', filter.decision);
  if (filter.level) add('s.risk_level = ?', filter.level);
  if (filter.enrichment) add('s.enrichment_status = ?', filter.enrichment);
  if (filter.attention !== undefined) add('s.attention_match = ?', filter.attention ? 1 : 0);
  if (filter.people !== undefined) add('s.has_people = ?', filter.people ? 1 : 0);

  let total: number;
  // A search term's own rows, by key: the page reads them when they are few.
  let matching: [string, SqlValue] | null = null;
  if (!filter.q) {
    const counters = where.map((c) => c.replace('s.decision IS NULL', "decision = ''").replaceAll('s.', ''));
    const counted = await db
      .prepare(`SELECT COALESCE(SUM(n), 0) AS n FROM queue_counts${counters.length ? ` WHERE ${counters.join(' AND ')}` : ''}`)
      .bind(...params)
      .first<{ n: number }>();
    total = Number(counted?.n ?? 0);
  } else if ([...filter.q].length < TRIGRAM) {
    const gram = lowerAscii(filter.q);
    total = where.length
      ? await countInSpans(
          db,
          `SELECT COUNT(*) AS n FROM submission_grams g JOIN submissions s ON s.rowid = g.submission_rowid WHERE g.gram = ? AND ${where.join(' AND ')}`,
          [gram, ...params],
        )
      : Number((await db.prepare('SELECT COUNT(*) AS n FROM submission_grams WHERE gram = ?').bind(gram).first<{ n: number }>())?.n ?? 0);
    matching = ['s.rowid IN (SELECT submission_rowid FROM submission_grams WHERE gram = ?)', gram];
  } else {
    const match = `"${filter.q.replaceAll('"', '""')}"`;
    // The count hands over the matching rows when they are few, so that the page does not run the
    // search a second time (issue 11: the search is most of the cost of finding one id).
    const few = (rowid: string) => `CASE WHEN COUNT(*) <= ${COMMON_TERM} THEN json_group_array(${rowid}) END AS rowids`;
    const counted = where.length
      ? await countMatchesFiltered(db, match, where, params)
      : await db
          .prepare(`SELECT COUNT(*) AS n, ${few('rowid')} FROM submissions_search WHERE submissions_search MATCH ?`)
          .bind(match)
          .first<{ n: number; rowids: string | null }>();
    total = Number(counted?.n ?? 0);
    matching = ['s.rowid IN (SELECT value FROM json_each(?))', counted?.rowids ?? '[]'];
  }
  if (matching) {
    if (total > COMMON_TERM) add("(s.id LIKE ? ESCAPE '\\' OR s.title LIKE ? ESCAPE '\\')", likeAny(filter.q!), likeAny(filter.q!));
    else add(...matching);
  }

  const after = filter.cursor === undefined ? null : decodeCursor(filter.cursor);
  if (after !== null) add('s.queue_rank > ?', after);
  const clause = where.length ? ` WHERE ${where.join(' AND ')}` : '';
  // One row beyond the page tells whether there is a next one.
  const rows = await db
    .prepare(`${SELECT_SHOWN_CELLS}${clause} ORDER BY s.queue_rank LIMIT ? OFFSET ?`)
    .bind(...params, filter.limit + 1, after === null ? filter.offset : 0)
    .all<{ cells: string }>();
  const page = rows.results.slice(0, filter.limit).map((r) => shownRow(r.cells));
  return {
    items: page.map(toSubmission),
    total,
    next_cursor: rows.results.length > filter.limit ? encodeCursor(page[page.length - 1].queue_rank) : null,
  };
}

// A short search with a filter joins each match to its submission to test the filter; for a common
// term that is tens of thousands of rows (50 ms at 100,000 submissions for a pair of characters in
// every id), so the count reads spans of rowids with the event loop free between them.
const ROWID_SPAN = 20_000;

/** `sql` (a COUNT over submission_grams `g` joined to submissions) over every span of rowids, summed. */
async function countInSpans(db: Database, sql: string, params: SqlValue[]): Promise<number> {
  const last = Number((await db.prepare('SELECT COALESCE(MAX(rowid), 0) AS n FROM submissions').first<{ n: number }>())?.n ?? 0);
  let n = 0;
  for (let from = 0; from <= last; from += ROWID_SPAN) {
    if (from > 0) await nextTurn();
    const span = await db
      .prepare(`${sql} AND g.submission_rowid >= ? AND g.submission_rowid < ?`)
      .bind(...params, from, from + ROWID_SPAN)
      .first<{ n: number }>();
    n += Number(span?.n ?? 0);
  }
  return n;
}

/**
 * The count (and, when few, the rowids) of the trigram matches that pass the filter: the matches'
 * rowids come from the trigram index in one read, and are joined to their submissions in pieces of
 * at most COMMON_TERM with the event loop free between them (FTS5 cannot read a span of rowids
 * without running the phrase match again: 39 -> 96 ms for a common term in spans of 20,000 rowids).
 */
async function countMatchesFiltered(db: Database, match: string, where: string[], params: SqlValue[]): Promise<{ n: number; rowids: string | null }> {
  const matched = await db
    .prepare('SELECT json_group_array(rowid) AS rowids FROM submissions_search WHERE submissions_search MATCH ?')
    .bind(match)
    .first<{ rowids: string }>();
  const all = JSON.parse(matched?.rowids ?? '[]') as number[];
  const kept: number[] = [];
  for (let at = 0; at < all.length; at += COMMON_TERM) {
    await nextTurn();
    const piece = await db
      .prepare(`SELECT json_group_array(s.rowid) AS rowids FROM json_each(?) j JOIN submissions s ON s.rowid = j.value WHERE ${where.join(' AND ')}`)
      .bind(JSON.stringify(all.slice(at, at + COMMON_TERM)), ...params)
      .first<{ rowids: string }>();
    kept.push(...(JSON.parse(piece?.rowids ?? '[]') as number[]));
  }
  return { n: kept.length, rowids: kept.length <= COMMON_TERM ? JSON.stringify(kept) : null };
}

/** Lowered as SQLite's lower() and LIKE fold case: ASCII letters only. */
const lowerAscii = (text: string) => text.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());

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
  const list = (Array.isArray(rows) ? rows : [rows]).map((s) => ({
    ...s,
    submitter: s.submitter ?? null,
    file_mtime_ms: s.file_mtime_ms ?? null,
    file_version: s.file_version ?? null,
  }));
  const field = (name: keyof SubmissionInput) => `json_extract(value, '$.${name}')`;
  const columns = ['id', 'title', 'file', 'origin', 'submitter', ...RECORDED_COLUMNS, 'file_mtime_ms', 'file_version'] as const;
  return db
    .prepare(
      `INSERT INTO submissions (${columns.join(', ')}, analysis_status, enrichment_status, created_at, updated_at)
       SELECT ${columns.map(field).join(', ')}, 'pending', 'pending', ?, ? FROM json_each(?) WHERE true
       ON CONFLICT (id) DO UPDATE SET title = excluded.title, file = excluded.file, origin = excluded.origin, submitter = excluded.submitter,
         width = excluded.width, height = excluded.height, submitted_at = excluded.submitted_at,
         submitted_at_epoch = excluded.submitted_at_epoch, format = excluded.format, bytes = excluded.bytes,
         sha256 = excluded.sha256, file_mtime_ms = excluded.file_mtime_ms, file_version = excluded.file_version,
         phash = NULL, fingerprints = NULL, faces = '[]', people = '[]', has_people = 0, thumb_path = NULL, analysis_status = 'pending',
         analysis_error = NULL, enrichment_status = 'pending', updated_at = excluded.updated_at`,
    )
    .bind(now, now, toJson(list));
}

/**
 * The new titles of existing submissions, set by a plain UPDATE before their upsert: an upsert's
 * DO UPDATE makes the search grams trigger's INSERT OR IGNORE abort on the grams an id and a title
 * share (SQLite lets the outer statement's conflict rule win), while a plain UPDATE keeps it.
 */
export function retitleSubmissionsStatement(db: Database, rows: Pick<SubmissionInput, 'id' | 'title'>[]) {
  return db
    .prepare(
      `UPDATE submissions SET title = n.title
       FROM (SELECT json_extract(value, '$.id') AS id, json_extract(value, '$.title') AS title FROM json_each(?)) AS n
       WHERE submissions.id = n.id AND submissions.title IS NOT n.title`,
    )
    .bind(toJson(rows.map(({ id, title }) => ({ id, title }))));
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
    .prepare(
      'UPDATE submissions SET title = ?, submitter = ?, submitted_at = ?, submitted_at_epoch = ?, bytes = ?, file_mtime_ms = ?, file_version = ?, updated_at = ? WHERE id = ?',
    )
    .bind(meta.title, meta.submitter, meta.submitted_at, meta.submitted_at_epoch, file.size, file.mtimeMs, file.version, now, id);
}

export interface AnalysisResult {
  phash: string;
  fingerprints: unknown;
  faces: FaceRecord[];
  people: PersonRecord[];
  thumb_path: string | null;
  /** Set when the image was analysed but a part of it (detection, the thumbnail) failed or was capped. */
  analysis_error?: string | null;
}

/**
 * Stores an analysis of the bytes whose hash the analysis started from, and answers the row as
 * stored (the comparison that follows reads it). When a reload recorded new bytes in the meantime,
 * nothing is stored (null): the analysis queued for the new bytes will be.
 */
export function saveAnalysisStatement(db: Database, id: string, analysedSha256: string | null, result: AnalysisResult, now: string): Statement {
  return db
    .prepare(
      `UPDATE submissions SET phash = ?, fingerprints = ?, faces = ?, people = ?, has_people = ?, thumb_path = ?,
         analysis_status = 'done', analysis_error = ?, updated_at = ? WHERE id = ? AND sha256 IS ? RETURNING *`,
    )
    .bind(
      result.phash,
      toJson(result.fingerprints),
      toJson(result.faces),
      toJson(result.people),
      result.faces.length + result.people.length > 0 ? 1 : 0,
      result.thumb_path,
      result.analysis_error ?? null,
      now,
      id,
      analysedSha256,
    );
}

/** Marks the analysis of those bytes failed, answering the row as stored, or null as saveAnalysisStatement does. */
export async function saveAnalysisFailure(db: Database, id: string, analysedSha256: string | null, reason: string, now: string): Promise<SubmissionRow | null> {
  return db
    .prepare(`UPDATE submissions SET analysis_status = 'failed', analysis_error = ?, updated_at = ? WHERE id = ? AND sha256 IS ? RETURNING *`)
    .bind(reason, now, id, analysedSha256)
    .first<SubmissionRow>();
}

/** The copy that was sent to web detection, kept as the record of what left the service. */
export async function saveDerivedPath(db: Database, id: string, derivedPath: string, now: string): Promise<void> {
  await db.prepare('UPDATE submissions SET derived_path = ?, derived_created_at = ? WHERE id = ?').bind(derivedPath, now, id).run();
}

export function enrichmentStatusStatement(db: Database, id: string, status: EnrichmentStatus, now: string) {
  return db.prepare('UPDATE submissions SET enrichment_status = ?, updated_at = ? WHERE id = ?').bind(status, now, id);
}

/** Marks an analysed submission's enrichment running; one not analysed is left as it is (its enrichment is skipped). */
export function enrichmentRunningStatement(db: Database, id: string, now: string) {
  return db
    .prepare(`UPDATE submissions SET enrichment_status = 'running', updated_at = ? WHERE id = ? AND analysis_status = 'done' AND phash IS NOT NULL`)
    .bind(now, id);
}

export async function setEnrichmentStatus(db: Database, id: string, status: EnrichmentStatus, now: string) {
  await enrichmentStatusStatement(db, id, status, now).run();
}

/**
 * Stores a given risk, as the seeds of tests and benches do; the service stores the risk computed
 * from the stored evidence by riskFromEvidenceStatement (lib/repo/risk.ts).
 */
export function saveRiskStatement(db: Database, id: string, risk: Risk, now: string) {
  return db
    .prepare('UPDATE submissions SET risk_score = ?, risk_level = ?, risk_signals = ?, updated_at = ? WHERE id = ?')
    .bind(risk.score, risk.level, toJson(risk.signals), now, id);
}

export function saveDecisionStatement(db: Database, id: string, decision: Decision, note: string | null, now: string) {
  return db.prepare('UPDATE submissions SET decision = ?, decision_note = ?, decided_at = ?, updated_at = ? WHERE id = ?').bind(decision, note, now, now, id);
}

export async function clearDerivedPath(db: Database, id: string) {
  await db.prepare('UPDATE submissions SET derived_path = NULL, derived_created_at = NULL WHERE id = ?').bind(id).run();
}
