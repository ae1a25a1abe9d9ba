import type { KnowledgeState } from '../vocabulary.js';
import type { Database } from '../ports.js';

/** The pages the decision and watchlist exports read (the exports themselves: lib/review/exports.ts). */

/** A type, not an interface: the export streams it as a plain record of cells. */
export type DecisionExportRow = {
  id: string;
  title: string;
  decision: string;
  note: string | null;
  decided_at: string;
  risk_score: number | null;
  risk_level: string | null;
  evidence_count: number;
  /** Evidence an operator marked as used for the decision. */
  evidence_used: number;
  web_matches: number;
  attention_match: boolean;
};

/** Decided submissions, the latest decision first, after the `(decided_at, id)` cursor when given. */
export async function listDecisionPage(db: Database, after: [string, string] | null, limit: number): Promise<DecisionExportRow[]> {
  const rows = await db
    .prepare(
      `SELECT s.id, s.title, s.decision, s.decision_note AS note, s.decided_at, s.risk_score, s.risk_level, s.evidence_count,
         (SELECT COUNT(*) FROM evidence e WHERE e.submission_id = s.id AND e.status = '판단에 사용') AS evidence_used,
         (SELECT COUNT(*) FROM evidence e WHERE e.submission_id = s.id AND e.group_key = 'web_match') AS web_matches,
         s.attention_match
       FROM submissions s WHERE s.decision IS NOT NULL${after ? ' AND (s.decided_at, s.id) < (?, ?)' : ''}
       ORDER BY s.decided_at DESC, s.id DESC LIMIT ?`,
    )
    .bind(...(after ?? []), limit)
    .all<Omit<DecisionExportRow, 'attention_match'> & { attention_match: number }>();
  return rows.results.map((row) => ({ ...row, attention_match: Boolean(row.attention_match) }));
}

export type WatchlistExportRow = {
  id: string;
  submission_id: string;
  title: string;
  state: KnowledgeState;
  decision: string | null;
  phash: string;
  created_at: string;
  updated_at: string;
};

/** Knowledge entries (or those in one state) by id, after the id `after`. */
export async function listWatchlistPage(db: Database, state: KnowledgeState | undefined, after: string, limit: number): Promise<WatchlistExportRow[]> {
  const rows = await db
    .prepare(
      `SELECT k.id, k.submission_id, s.title, k.state, k.decision, k.phash, k.created_at, k.updated_at
       FROM knowledge_entries k JOIN submissions s ON s.id = k.submission_id
       WHERE k.id > ?${state ? ' AND k.state = ?' : ''} ORDER BY k.id LIMIT ?`,
    )
    .bind(after, ...(state ? [state] : []), limit)
    .all<WatchlistExportRow>();
  return rows.results;
}
