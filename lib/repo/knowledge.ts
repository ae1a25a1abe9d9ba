import type { z } from 'zod';
import type { KnowledgeEntryRecord } from '../api/records.js';
import type { Decision, KnowledgeState } from '../vocabulary.js';
import { fromJson, newId, toJson } from './json.js';
import type { Database, Statement } from '../ports.js';

export type KnowledgeEntry = z.infer<typeof KnowledgeEntryRecord>;

interface KnowledgeRow extends Omit<KnowledgeEntry, 'evidence_ids'> {
  evidence_ids: string;
  fingerprints: string | null;
}

const toEntry = (row: KnowledgeRow): KnowledgeEntry => ({
  id: row.id,
  submission_id: row.submission_id,
  phash: row.phash,
  evidence_ids: fromJson<string[]>(row.evidence_ids, []),
  decision: row.decision,
  state: row.state,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

export async function getKnowledgeEntry(db: Database, id: string): Promise<KnowledgeEntry | null> {
  const row = await db.prepare('SELECT * FROM knowledge_entries WHERE id = ?').bind(id).first<KnowledgeRow>();
  return row ? toEntry(row) : null;
}

export async function getKnowledgeEntryForSubmission(db: Database, submissionId: string): Promise<KnowledgeEntry | null> {
  const row = await db.prepare('SELECT * FROM knowledge_entries WHERE submission_id = ?').bind(submissionId).first<KnowledgeRow>();
  return row ? toEntry(row) : null;
}

export async function listKnowledge(db: Database, state?: KnowledgeState): Promise<KnowledgeEntry[]> {
  const rows = state
    ? await db.prepare('SELECT * FROM knowledge_entries WHERE state = ? ORDER BY updated_at DESC, id').bind(state).all<KnowledgeRow>()
    : await db.prepare('SELECT * FROM knowledge_entries ORDER BY updated_at DESC, id').all<KnowledgeRow>();
  return rows.results.map(toEntry);
}

export async function countKnowledgeByState(db: Database): Promise<Record<KnowledgeState, number>> {
  const rows = await db.prepare('SELECT state, COUNT(*) AS n FROM knowledge_entries GROUP BY state').all<{ state: KnowledgeState; n: number }>();
  const counts = { '주의 후보': 0, '확정 DB 편입': 0, '오탐 제외': 0 } as Record<KnowledgeState, number>;
  for (const r of rows.results) counts[r.state] = Number(r.n);
  return counts;
}

/**
 * One entry per submission: a later hold or reject updates the same entry (the unique
 * submission_id makes a duplicate impossible even when two decisions race).
 */
export function upsertAttentionCandidateStatement(
  db: Database,
  entry: { submission_id: string; phash: string; fingerprints: unknown; evidence_ids: string[]; decision: Decision },
  now: string,
) {
  return db
    .prepare(
      `INSERT INTO knowledge_entries (id, submission_id, phash, fingerprints, evidence_ids, decision, state, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, '주의 후보', ?, ?)
       ON CONFLICT (submission_id) DO UPDATE SET phash = excluded.phash, fingerprints = excluded.fingerprints,
         evidence_ids = excluded.evidence_ids, decision = excluded.decision, updated_at = excluded.updated_at`,
    )
    .bind(newId('ke'), entry.submission_id, entry.phash, toJson(entry.fingerprints), toJson(entry.evidence_ids), entry.decision, now, now);
}

export function setKnowledgeStateStatement(db: Database, id: string, state: KnowledgeState, now: string) {
  return db.prepare('UPDATE knowledge_entries SET state = ?, updated_at = ? WHERE id = ?').bind(state, now, id);
}

/** An entry used as a reference in internal similarity, as stored. */
export interface ReferenceEntryRow {
  id: string;
  submission_id: string;
  phash: string;
  fingerprints: string | null;
  state: KnowledgeState;
}

/** Entries used as references in internal similarity: candidates and the confirmed watchlist, never excluded ones. */
export function referenceEntriesStatement(db: Database): Statement {
  return db.prepare(`SELECT id, submission_id, phash, fingerprints, state FROM knowledge_entries WHERE state IN ('주의 후보', '확정 DB 편입')`);
}

export async function listReferenceEntries(db: Database): Promise<ReferenceEntryRow[]> {
  return (await referenceEntriesStatement(db).all<ReferenceEntryRow>()).results;
}

/** Moves an entry's state; a no-op (no new updated_at) when it is already there. */
export function moveKnowledgeStateStatement(db: Database, id: string, state: KnowledgeState, now: string) {
  return db.prepare('UPDATE knowledge_entries SET state = ?, updated_at = ? WHERE id = ? AND state <> ?').bind(state, now, id, state);
}
