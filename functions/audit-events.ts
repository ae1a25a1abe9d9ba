import { z } from 'zod';
import { answer } from '../lib/api/answer.js';
import { AuditEventRecord } from '../lib/api/records.js';
import { readQuery } from '../lib/http/json.js';
import { listAuditEvents } from '../lib/repo/audit.js';
import { limitParam } from '../lib/review/query.js';
import type { Env } from '../lib/ports.js';
import { route } from './route.js';

export const AUDIT_PAGE_DEFAULT = 100;
export const AUDIT_PAGE_MAX = 1000;

export const AuditEventsQuery = z.object({
  limit: limitParam(AUDIT_PAGE_DEFAULT, AUDIT_PAGE_MAX),
  before: z.string().regex(/^\d+$/, 'must be an event id').transform(Number).pipe(z.number().int().min(1).max(Number.MAX_SAFE_INTEGER)).optional(),
});

const AuditEvents = answer('auditEvents', z.object({ events: z.array(AuditEventRecord) }));

/** GET /api/audit-events: newest first; `before` (an event id) pages back. */
export async function handleAuditEvents(request: Request, env: Env): Promise<Response> {
  const { limit, before } = readQuery(request, AuditEventsQuery);
  return AuditEvents.send({ events: await listAuditEvents(env.db, limit, before) });
}

export const auditEventsRoute = route('get', '/api/audit-events', 'operator', 'The audit log, newest first, with who acted', {
  query: AuditEventsQuery,
  answer: AuditEvents,
  handler: handleAuditEvents,
});
