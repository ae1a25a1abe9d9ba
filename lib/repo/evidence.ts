import type { z } from 'zod';
import type { EvidenceRecord } from '../api/records.js';
import type { ConfirmedGeometry } from '../images/geometry.js';
import type { EvidenceSource, EvidenceStatus, GroupKey } from '../vocabulary.js';
import {
  linkPagesStatements,
  listPagesOfEvidence,
  pagesByEvidence,
  pagesOfEvidenceStatement,
  pagesOfSubmissionStatement,
  type EvidencePage,
  type PageLink,
} from './evidence-pages.js';
import { rowsOf } from './columns.js';
import { fromJson, newId, toJson } from './json.js';
import { enrichmentRunningStatement, mediaUrl, submissionRowStatement, type SubmissionRow } from './submissions.js';
import type { Database, Statement } from '../ports.js';

/** Evidence as the API returns it (CONTRACT.md section 3): the record's own type. */
export type Evidence = z.infer<typeof EvidenceRecord>;

/** The part of each image that shows the other, found by the geometric check. */
export type MatchRegion = NonNullable<Evidence['match_region']>;

/**
 * The match columns of a copy confirmed by the geometric check (lib/images/geometry.ts) run with
 * the candidate as `query` and the submission as `reference`: named `geometric` (mirrored:
 * `hflip+geometric`), decided by the pixel agreement of the matched regions.
 */
export function geometricMatch(confirmed: ConfirmedGeometry): MatchFields {
  return { match_transform: confirmed.mirrored ? 'hflip+geometric' : 'geometric', match_similarity: confirmed.correlation, ...matchRegionFields(confirmed) };
}

/** How a copy matched, as evidence stores it. */
export type MatchFields = Pick<NewEvidence, 'match_transform' | 'match_similarity' | 'match_inliers' | 'match_region'>;

/** Where each image shows the other, from the same geometric check (no inlier count when the pixels alone confirmed the hashes' edit). */
export function matchRegionFields(confirmed: ConfirmedGeometry): Pick<MatchFields, 'match_inliers' | 'match_region'> {
  return {
    match_inliers: confirmed.inliers > 0 ? confirmed.inliers : null,
    match_region: {
      submission: { quad: confirmed.regionB, coverage: confirmed.coverageB },
      candidate: { quad: confirmed.regionA, coverage: confirmed.coverageA },
    },
  };
}

interface EvidenceRow {
  id: string;
  submission_id: string;
  source: EvidenceSource;
  kind: string;
  group_key: GroupKey;
  title: string | null;
  text: string | null;
  url: string | null;
  image_url: string | null;
  local_media_path: string | null;
  query: string | null;
  similarity: number | null;
  matched: number;
  match_transform: string | null;
  match_similarity: number | null;
  match_inliers: number | null;
  match_region: string | null;
  confidence: number | null;
  status: EvidenceStatus | null;
  supporting: number;
  face_crop: number;
  source_evidence_ids: string;
  source_urls: string;
  matched_submission_id: string | null;
  knowledge_entry_id: string | null;
  error_code: string | null;
  error_message: string | null;
  created_at: string;
  page_count: number | null;
}

/** What a collector hands over; everything but the source, kind and group is optional. */
export interface NewEvidence {
  source: EvidenceSource;
  kind: string;
  group: GroupKey;
  title?: string | null;
  text?: string | null;
  url?: string | null;
  image_url?: string | null;
  local_media_path?: string | null;
  query?: string | null;
  similarity?: number | null;
  matched?: boolean;
  match_transform?: string | null;
  match_similarity?: number | null;
  match_inliers?: number | null;
  match_region?: MatchRegion | null;
  confidence?: number | null;
  supporting?: boolean;
  face_crop?: boolean;
  source_evidence_ids?: string[];
  source_urls?: string[];
  matched_submission_id?: string | null;
  knowledge_entry_id?: string | null;
  error?: { code: string; message: string } | null;
  /** Pages to link to a verified match, in the provider's order, and how many it named in all. */
  pages?: PageLink[];
  page_count?: number | null;
}

const clamp01 = (n: number | null | undefined) => (n === null || n === undefined || !Number.isFinite(n) ? null : Math.min(1, Math.max(0, n)));

/**
 * Unmarked and `판단에 사용` evidence counts; supporting and failure evidence never does. The same
 * rule in SQL, over an evidence row, is COUNTS_TOWARD_SCORE (the risk is computed where it is stored).
 */
export function countsTowardScore(e: { group: GroupKey; supporting: boolean; face_crop: boolean; status: EvidenceStatus | null }): boolean {
  // Face-crop evidence is never a face score or a same-person judgement, so it never scores.
  if (e.supporting || e.face_crop || e.group === 'failures' || e.group === 'supporting') return false;
  return e.status === null || e.status === '판단에 사용';
}

/** countsTowardScore of an evidence row `e`, in SQL. */
export const COUNTS_TOWARD_SCORE = `(e.supporting = 0 AND e.face_crop = 0 AND e.group_key NOT IN ('failures', 'supporting')
  AND (e.status IS NULL OR e.status = '판단에 사용'))`;

/** A row with the pages linked to it (none when it has no entry). */
export function toEvidence(row: EvidenceRow, pages: Map<string, EvidencePage[]> = new Map()): Evidence {
  const base = {
    group: row.group_key,
    supporting: Boolean(row.supporting),
    face_crop: Boolean(row.face_crop),
    status: row.status,
  };
  return {
    // Each field named in one literal, as toSubmission does: spreads of picked columns are slow.
    id: row.id,
    submission_id: row.submission_id,
    source: row.source,
    kind: row.kind,
    title: row.title,
    text: row.text,
    url: row.url,
    image_url: row.image_url,
    query: row.query,
    similarity: row.similarity,
    confidence: row.confidence,
    status: row.status,
    match_transform: row.match_transform,
    match_similarity: row.match_similarity,
    match_inliers: row.match_inliers,
    matched_submission_id: row.matched_submission_id,
    knowledge_entry_id: row.knowledge_entry_id,
    created_at: row.created_at,
    group: row.group_key,
    local_media_url: row.local_media_path ? mediaUrl(row.local_media_path) : null,
    matched: Boolean(row.matched),
    match_region: fromJson<MatchRegion | null>(row.match_region, null),
    counts_toward_score: countsTowardScore(base),
    supporting: base.supporting,
    face_crop: base.face_crop,
    source_evidence_ids: fromJson<string[]>(row.source_evidence_ids, []),
    source_urls: fromJson<string[]>(row.source_urls, []),
    error: row.error_code ? { code: row.error_code, message: row.error_message ?? '' } : null,
    pages: pages.get(row.id) ?? [],
    page_count: Math.max(row.page_count ?? 0, pages.get(row.id)?.length ?? 0),
  };
}

/** match_transform, match_similarity, match_inliers, match_region: set only on a match. */
const matchColumns = (e: NewEvidence) =>
  e.matched
    ? [e.match_transform ?? 'identity', clamp01(e.match_similarity), e.match_inliers ?? null, e.match_region ? toJson(e.match_region) : null]
    : [null, null, null, null];

export function insertEvidenceStatement(db: Database, submissionId: string, e: NewEvidence, now: string, id = newId('ev')) {
  return db
    .prepare(
      `INSERT INTO evidence (id, submission_id, source, kind, group_key, title, text, url, image_url, local_media_path,
         local_media_created_at, query, similarity, matched, match_transform, match_similarity, match_inliers, match_region,
         confidence, supporting, face_crop, source_evidence_ids, source_urls, matched_submission_id, knowledge_entry_id,
         error_code, error_message, created_at, page_count)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .bind(
      id,
      submissionId,
      e.source,
      e.kind,
      e.group,
      e.title ?? null,
      e.text ?? null,
      e.url ?? null,
      e.image_url ?? null,
      e.local_media_path ?? null,
      // Only downloaded copies age out; a path into images/ shows another submission's own file.
      e.local_media_path?.startsWith('evidence/') ? now : null,
      e.query ?? null,
      clamp01(e.similarity),
      e.matched ? 1 : 0,
      ...matchColumns(e),
      clamp01(e.confidence),
      e.supporting || e.group === 'supporting' ? 1 : 0,
      e.face_crop ? 1 : 0,
      toJson(e.source_evidence_ids ?? []),
      toJson(e.source_urls ?? []),
      e.matched_submission_id ?? null,
      e.knowledge_entry_id ?? null,
      e.error?.code ?? null,
      e.error?.message ?? null,
      now,
      e.page_count ?? null,
    );
}

/** Stores the items and answers them as stored, in one round trip (one transaction). */
export async function addEvidence(db: Database, submissionId: string, items: NewEvidence[], now: string): Promise<Evidence[]> {
  if (items.length === 0) return [];
  const ids = items.map(() => newId('ev'));
  const writes = items.flatMap((e, i) => [
    insertEvidenceStatement(db, submissionId, e, now, ids[i]),
    ...linkPagesStatements(db, submissionId, ids[i], e.pages ?? []),
  ]);
  const results = await db.batch([...writes, ...evidenceByIdsStatements(db, ids)]);
  return evidenceByIds(ids, results.slice(writes.length));
}

/** The order the API shows a submission's evidence in (its groups in the console's order, then the closest first). */
export const GROUP_ORDER = `CASE group_key WHEN 'attention' THEN 0 WHEN 'watchlist' THEN 1 WHEN 'internal' THEN 2 WHEN 'rights' THEN 3
  WHEN 'web_match' THEN 4 WHEN 'web_related' THEN 5 WHEN 'supporting' THEN 6 ELSE 7 END`;

/** A submission's evidence rows in the order the API shows them; `evidenceOf` reads its answer. */
export function evidenceOfSubmissionStatement(db: Database, submissionId: string): Statement {
  return db.prepare(`SELECT * FROM evidence WHERE submission_id = ? ORDER BY ${GROUP_ORDER}, similarity DESC, created_at, id`).bind(submissionId);
}

/** The evidence an evidenceOfSubmissionStatement answered, with the pages given (none: the risk reads no pages). */
export const evidenceOf = (result: unknown, pages?: Map<string, EvidencePage[]>): Evidence[] =>
  rowsOf<EvidenceRow>(result).map((row) => toEvidence(row, pages));

/** A submission's evidence with its linked pages, read in one round trip. */
export async function listEvidence(db: Database, submissionId: string): Promise<Evidence[]> {
  const [rows, pages] = await db.batch([evidenceOfSubmissionStatement(db, submissionId), pagesOfSubmissionStatement(db, submissionId)]);
  return evidenceOf(rows, pagesByEvidence(pages));
}

/**
 * An enrichment's start in one round trip: the submission's enrichment marked running when it is
 * analysed, its row as it then stands (null when it is gone) and its evidence with the pages.
 */
export async function startEnrichment(db: Database, submissionId: string, now: string): Promise<{ row: SubmissionRow | null; evidence: Evidence[] }> {
  const [, row, rows, pages] = await db.batch([
    enrichmentRunningStatement(db, submissionId, now),
    submissionRowStatement(db, submissionId),
    evidenceOfSubmissionStatement(db, submissionId),
    pagesOfSubmissionStatement(db, submissionId),
  ]);
  return { row: rowsOf<SubmissionRow>(row)[0] ?? null, evidence: evidenceOf(rows, pagesByEvidence(pages)) };
}

export async function getEvidence(db: Database, id: string): Promise<Evidence | null> {
  const row = await db.prepare('SELECT * FROM evidence WHERE id = ?').bind(id).first<EvidenceRow>();
  return row ? toEvidence(row, await listPagesOfEvidence(db, [id])) : null;
}

// One JSON parameter, not one per id: D1 refuses statements with more than 100 bound parameters.
const evidenceByIdsStatements = (db: Database, ids: string[]) => [
  db.prepare('SELECT * FROM evidence WHERE id IN (SELECT value FROM json_each(?))').bind(toJson(ids)),
  pagesOfEvidenceStatement(db, ids),
];

/** The items evidenceByIdsStatements answered, in the order of `ids`. */
function evidenceByIds(ids: string[], [rows, pages]: unknown[]): Evidence[] {
  const linked = pagesByEvidence(pages);
  const byId = new Map(rowsOf<EvidenceRow>(rows).map((r) => [r.id, toEvidence(r, linked)]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

export async function getEvidenceByIds(db: Database, ids: string[]): Promise<Evidence[]> {
  if (ids.length === 0) return [];
  return evidenceByIds(ids, await db.batch(evidenceByIdsStatements(db, ids)));
}

export function setEvidenceStatusStatement(db: Database, id: string, status: EvidenceStatus) {
  return db.prepare('UPDATE evidence SET status = ? WHERE id = ?').bind(status, id);
}

/**
 * The statements that make a submission's attention and watchlist evidence `items` (its internal
 * matches come from its pairs: lib/repo/pairs.ts). A match found again (same group and entry) keeps
 * its id, its operator mark and its first-seen time, so decisions and knowledge entries that cite
 * it stay valid; a match no longer found goes.
 */
export async function referenceEvidenceStatements(db: Database, submissionId: string, items: NewEvidence[], now: string): Promise<Statement[]> {
  // Nothing found (the usual case, and every case without a watchlist): nothing to keep, so nothing to read first.
  if (items.length === 0) return [db.prepare(`DELETE FROM evidence WHERE submission_id = ? AND group_key IN ('attention', 'watchlist')`).bind(submissionId)];
  const old = await db
    .prepare(
      `SELECT id, group_key, matched_submission_id, knowledge_entry_id FROM evidence
       WHERE submission_id = ? AND group_key IN ('attention', 'watchlist')`,
    )
    .bind(submissionId)
    .all<{ id: string; group_key: string; matched_submission_id: string | null; knowledge_entry_id: string | null }>();
  const matchKey = (group: string, matched: string | null | undefined, entry: string | null | undefined) => `${group}|${matched ?? null}|${entry ?? null}`;
  const existing = new Map(old.results.map((r) => [matchKey(r.group_key, r.matched_submission_id, r.knowledge_entry_id), r.id]));
  const kept = new Set<string>();
  const statements: Statement[] = [];
  for (const e of items) {
    const id = existing.get(matchKey(e.group, e.matched_submission_id, e.knowledge_entry_id));
    if (id && !kept.has(id)) {
      kept.add(id);
      statements.push(
        db
          .prepare(
            `UPDATE evidence SET kind = ?, title = ?, local_media_path = ?, similarity = ?, matched = ?, match_transform = ?,
               match_similarity = ?, match_inliers = ?, match_region = ?, confidence = ? WHERE id = ?`,
          )
          .bind(e.kind, e.title ?? null, e.local_media_path ?? null, clamp01(e.similarity), e.matched ? 1 : 0, ...matchColumns(e), clamp01(e.confidence), id),
      );
    } else statements.push(insertEvidenceStatement(db, submissionId, e, now, newId('ev')));
  }
  for (const r of old.results) if (!kept.has(r.id)) statements.push(deleteEvidenceStatement(db, r.id));
  return statements;
}

const deleteEvidenceStatement = (db: Database, id: string) => db.prepare('DELETE FROM evidence WHERE id = ?').bind(id);

/**
 * A submission's rights evidence (group `rights`) becomes `found`, or none. The same finding again
 * keeps its row, so an operator's mark stays; any other goes.
 */
export async function replaceRightsEvidence(db: Database, submissionId: string, found: NewEvidence | null, now: string): Promise<void> {
  const statements = rightsEvidenceChanges(db, submissionId, rowsOf<RightsRow>(await rightsEvidenceStatement(db, submissionId).all()), found, now);
  if (statements.length) await db.batch(statements);
}

/** A submission's rights evidence as stored, as replaceRightsEvidence compares it. */
export interface RightsRow {
  id: string;
  kind: string;
  text: string | null;
}

export function rightsEvidenceStatement(db: Database, submissionId: string): Statement {
  return db.prepare("SELECT id, kind, text FROM evidence WHERE submission_id = ? AND group_key = 'rights'").bind(submissionId);
}

/** The writes that make the rights evidence `old` into `found` (none when it already is). */
export function rightsEvidenceChanges(db: Database, submissionId: string, old: RightsRow[], found: NewEvidence | null, now: string): Statement[] {
  const kept = found && old.find((r) => r.kind === found.kind && r.text === found.text);
  const statements = old.filter((r) => r !== kept).map((r) => deleteEvidenceStatement(db, r.id));
  if (found && !kept) statements.push(insertEvidenceStatement(db, submissionId, found, now));
  return statements;
}
