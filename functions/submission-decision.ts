import { z } from 'zod';
import { json, readBody } from '../lib/http/json.js';
import { decideSubmission } from '../lib/review/decision.js';
import { pathParam, type ParamRequest } from '../lib/http/params.js';
import { DECISIONS } from '../lib/vocabulary.js';
import type { Env } from '../lib/ports.js';

export const DecisionBody = z
  .object({
    decision: z.enum(DECISIONS),
    note: z.string().max(2000).nullable().optional(),
    evidence_ids: z.array(z.string().min(1).max(200)).max(1000).optional(),
  })
  .strict();

/** POST /api/submissions/{id}/decision: 승인 creates no entry; 보류 and 반려 create or update one. */
export async function handleSubmissionDecision(request: ParamRequest, env: Env): Promise<Response> {
  const id = pathParam(request, 'id', 'submission');
  const body = await readBody(request, env.config.SVC_MAX_BODY_BYTES, DecisionBody);
  return json(await decideSubmission(env, id, body));
}
