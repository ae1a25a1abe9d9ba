import { z } from 'zod';
import { json, readBody } from '../lib/http/json.js';
import { setEvidenceStatus } from '../lib/review/evidence-status.js';
import { pathParam, type ParamRequest } from '../lib/http/params.js';
import { EVIDENCE_STATUSES } from '../lib/vocabulary.js';
import type { Env } from '../lib/ports.js';

export const EvidenceStatusBody = z.object({ status: z.enum(EVIDENCE_STATUSES) }).strict();

/** POST /api/evidence/{id}/status: the operator's mark and the submission's new risk. */
export async function handleEvidenceStatus(request: ParamRequest, env: Env): Promise<Response> {
  const id = pathParam(request, 'id', 'evidence');
  const body = await readBody(request, env.config.SVC_MAX_BODY_BYTES, EvidenceStatusBody);
  return json(await setEvidenceStatus(env, id, body.status));
}
