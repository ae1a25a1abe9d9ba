import type { Database } from '../db/types.js';
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
