import type { Database } from '../db/types.js';
import type { Decision, EvidenceStatus, KnowledgeState } from '../vocabulary.js';
import { fromJson, toJson } from './json.js';

export type AuditAction =
  | 'submission.reload'
  | 'submission.rerun'
  | 'evidence.status'
  | 'submission.decision'
  | 'knowledge.promote'
  | 'knowledge.exclude'
  | 'provider.switch'
  | 'provider.emergency_disable'
  | 'search.manual'
  | 'retention.run';

export interface AuditEvent {
  id: number;
  at: string;
  action: AuditAction;
  target_type: string;
  target_id: string | null;
  details: Record<string, unknown>;
}

export function auditStatement(
  db: Database,
  event: { action: AuditAction; target_type: string; target_id: string | null; details: Record<string, unknown> },
  now: string,
) {
  return db
    .prepare('INSERT INTO audit_events (at, action, target_type, target_id, details) VALUES (?, ?, ?, ?, ?)')
    .bind(now, event.action, event.target_type, event.target_id, toJson(event.details));
}

/** Newest first; `before` pages back from an event id. */
export async function listAuditEvents(db: Database, limit: number, before?: number): Promise<AuditEvent[]> {
  const rows =
    before === undefined
      ? await db.prepare('SELECT * FROM audit_events ORDER BY id DESC LIMIT ?').bind(limit).all<AuditEvent & { details: string }>()
      : await db
          .prepare('SELECT * FROM audit_events WHERE id < ? ORDER BY id DESC LIMIT ?')
          .bind(before, limit)
          .all<AuditEvent & { details: string }>();
  return rows.results.map((r) => ({ ...r, details: fromJson<Record<string, unknown>>(r.details, {}) }));
}

/*
 * Audit statements that read the value being replaced inside the batch: placed before the update,
 * they record the true `from` even when two operators act on the same record at once.
 */

export function auditEvidenceStatusStatement(db: Database, evidenceId: string, to: EvidenceStatus, now: string) {
  return db
    .prepare(
      `INSERT INTO audit_events (at, action, target_type, target_id, details)
       SELECT ?, 'evidence.status', 'evidence', id, json_object('submission_id', submission_id, 'from', status, 'to', ?)
       FROM evidence WHERE id = ?`,
    )
    .bind(now, to, evidenceId);
}

/** `knowledge_entry_id` is read after the entry upsert of the same batch, so place this after it. */
export function auditDecisionStatement(
  db: Database,
  submissionId: string,
  decision: { to: Decision; note: string | null; evidence_ids: string[]; knowledge_entry: boolean },
  now: string,
) {
  return db
    .prepare(
      `INSERT INTO audit_events (at, action, target_type, target_id, details)
       SELECT ?, 'submission.decision', 'submission', s.id,
         json_object('from', s.decision, 'to', ?, 'note', ?, 'evidence_ids', json(?), 'knowledge_entry_id',
           CASE WHEN ? THEN (SELECT k.id FROM knowledge_entries k WHERE k.submission_id = s.id) END)
       FROM submissions s WHERE s.id = ?`,
    )
    .bind(now, decision.to, decision.note, toJson(decision.evidence_ids), decision.knowledge_entry ? 1 : 0, submissionId);
}

/** Written only when the entry is not already in the target state: a repeated move records nothing. */
export function auditKnowledgeMoveStatement(
  db: Database,
  entryId: string,
  action: 'knowledge.promote' | 'knowledge.exclude',
  to: KnowledgeState,
  now: string,
) {
  return db
    .prepare(
      `INSERT INTO audit_events (at, action, target_type, target_id, details)
       SELECT ?, ?, 'knowledge_entry', id, json_object('submission_id', submission_id, 'from', state, 'to', ?)
       FROM knowledge_entries WHERE id = ? AND state <> ?`,
    )
    .bind(now, action, to, entryId, to);
}
