import type { z } from 'zod';
import type { AuditEventRecord } from '../api/records.js';
import type { Actor } from '../auth/actor.js';
import type { Decision, EvidenceStatus, KnowledgeState } from '../vocabulary.js';
import { fromJson, toJson } from './json.js';
import type { Database } from '../ports.js';

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
  | 'retention.run'
  | 'submission.decision_change'
  | 'auth.login'
  | 'auth.login_failed'
  | 'auth.locked'
  | 'auth.logout'
  | 'auth.setup'
  | 'account.create'
  | 'account.update'
  | 'account.sessions_revoke'
  | 'token.create'
  | 'token.revoke'
  | 'evidence.capture'
  | 'submission.bundle'
  | 'caller.rate_limited'
  | 'backup.start';

/** Who did it: the account or token (id and name, never a secret), its role, and the client address. */
export type AuditActor = z.infer<typeof AuditEventRecord>['actor'];

/** The record, with `action` narrowed to the actions the service writes. */
export type AuditEvent = Omit<z.infer<typeof AuditEventRecord>, 'action'> & { action: AuditAction };

type AuditRow = Omit<AuditEvent, 'details' | 'actor'> & {
  details: string;
  actor_type: Actor['type'] | null;
  actor_id: string | null;
  actor_name: string | null;
  actor_role: AuditActor['role'];
  client: string | null;
};

/** The actor columns every audit insert ends with, in this order. */
const ACTOR_COLUMNS = 'actor_type, actor_id, actor_name, actor_role, client';
const actorValues = (actor: Actor) => [actor.type, actor.id, actor.name, actor.role, actor.client] as const;

export function auditStatement(
  db: Database,
  event: { action: AuditAction; target_type: string; target_id: string | null; details: Record<string, unknown> },
  now: string,
  actor: Actor,
) {
  return db
    .prepare(`INSERT INTO audit_events (at, action, target_type, target_id, details, ${ACTOR_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
    .bind(now, event.action, event.target_type, event.target_id, toJson(event.details), ...actorValues(actor));
}

const toEvent = ({ actor_type, actor_id, actor_name, actor_role, client, details, ...row }: AuditRow): AuditEvent => ({
  ...row,
  details: fromJson<Record<string, unknown>>(details, {}),
  // Events from before accounts existed were the service's own or an anonymous local caller's.
  actor: { type: actor_type ?? 'anonymous', id: actor_id, name: actor_name, role: actor_role, client },
});

/** Newest first; `before` pages back from an event id. */
export async function listAuditEvents(db: Database, limit: number, before?: number): Promise<AuditEvent[]> {
  const rows =
    before === undefined
      ? await db.prepare('SELECT * FROM audit_events ORDER BY id DESC LIMIT ?').bind(limit).all<AuditRow>()
      : await db.prepare('SELECT * FROM audit_events WHERE id < ? ORDER BY id DESC LIMIT ?').bind(before, limit).all<AuditRow>();
  return rows.results.map(toEvent);
}

/** Every audit event about a case: the submission, its evidence, its entry, searches made for it. */
export async function listCaseAuditEvents(db: Database, submissionId: string): Promise<AuditEvent[]> {
  const rows = await db
    .prepare(
      `SELECT * FROM audit_events
       WHERE (target_type = 'submission' AND target_id = ?)
          OR (target_type = 'evidence' AND target_id IN (SELECT id FROM evidence WHERE submission_id = ?))
          OR (target_type = 'knowledge_entry' AND target_id IN (SELECT id FROM knowledge_entries WHERE submission_id = ?))
          OR (target_type = 'provider' AND action = 'search.manual' AND json_extract(details, '$.submission_id') = ?)
       ORDER BY id`,
    )
    .bind(submissionId, submissionId, submissionId, submissionId)
    .all<AuditRow>();
  return rows.results.map(toEvent);
}

/*
 * Audit statements that read the value being replaced inside the batch: placed before the update,
 * they record the true `from` even when two operators act on the same record at once.
 */

export function auditEvidenceStatusStatement(db: Database, evidenceId: string, to: EvidenceStatus, now: string, actor: Actor) {
  return db
    .prepare(
      `INSERT INTO audit_events (at, action, target_type, target_id, details, ${ACTOR_COLUMNS})
       SELECT ?, 'evidence.status', 'evidence', id, json_object('submission_id', submission_id, 'from', status, 'to', ?), ?, ?, ?, ?, ?
       FROM evidence WHERE id = ?`,
    )
    .bind(now, to, ...actorValues(actor), evidenceId);
}

/** `knowledge_entry_id` is read after the entry upsert of the same batch, so place this after it. */
export function auditDecisionStatement(
  db: Database,
  submissionId: string,
  decision: { to: Decision; note: string | null; evidence_ids: string[]; knowledge_entry: boolean },
  now: string,
  actor: Actor,
) {
  // A decision that replaces another is a correction: its own action, with what it replaced.
  return db
    .prepare(
      `INSERT INTO audit_events (at, action, target_type, target_id, details, ${ACTOR_COLUMNS})
       SELECT ?, CASE WHEN s.decision IS NULL THEN 'submission.decision' ELSE 'submission.decision_change' END, 'submission', s.id,
         json_object('from', s.decision, 'from_note', s.decision_note, 'from_decided_at', s.decided_at, 'to', ?, 'note', ?,
           'evidence_ids', json(?), 'knowledge_entry_id',
           CASE WHEN ? THEN (SELECT k.id FROM knowledge_entries k WHERE k.submission_id = s.id) END), ?, ?, ?, ?, ?
       FROM submissions s WHERE s.id = ?`,
    )
    .bind(now, decision.to, decision.note, toJson(decision.evidence_ids), decision.knowledge_entry ? 1 : 0, ...actorValues(actor), submissionId);
}

/** Written only when the entry is not already in the target state: a repeated move records nothing. */
export function auditKnowledgeMoveStatement(
  db: Database,
  entryId: string,
  action: 'knowledge.promote' | 'knowledge.exclude',
  to: KnowledgeState,
  now: string,
  actor: Actor,
) {
  return db
    .prepare(
      `INSERT INTO audit_events (at, action, target_type, target_id, details, ${ACTOR_COLUMNS})
       SELECT ?, ?, 'knowledge_entry', id, json_object('submission_id', submission_id, 'from', state, 'to', ?), ?, ?, ?, ?, ?
       FROM knowledge_entries WHERE id = ? AND state <> ?`,
    )
    .bind(now, action, to, ...actorValues(actor), entryId, to);
}
