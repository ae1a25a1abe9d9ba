import { z } from 'zod';
import { answer } from '../lib/api/answer.js';
import { EvidenceRecord, SubmissionRecord } from '../lib/api/records.js';
import { readBody } from '../lib/http/json.js';
import { setEvidenceStatus } from '../lib/review/evidence-status.js';
import { pathParam, type ParamRequest } from '../lib/http/params.js';
import { EVIDENCE_STATUSES } from '../lib/vocabulary.js';
import type { Env } from '../lib/ports.js';
import { route } from './route.js';

export const EvidenceStatusBody = z.object({ status: z.enum(EVIDENCE_STATUSES) }).strict();

const EvidenceStatus = answer('evidenceStatus', z.object({ evidence: EvidenceRecord, submission: SubmissionRecord }));

/** POST /api/evidence/{id}/status: the operator's mark and the submission's new risk. */
export async function handleEvidenceStatus(request: ParamRequest, env: Env): Promise<Response> {
  const id = pathParam(request, 'id', 'evidence');
  const body = await readBody(request, env.config.SVC_MAX_BODY_BYTES, EvidenceStatusBody);
  return EvidenceStatus.send(await setEvidenceStatus(env, id, body.status));
}

export const evidenceStatusRoute = route('post', '/api/evidence/:id/status', 'operator', 'Mark evidence: 판단에 사용, 무관, 오탐 or 보류', {
  body: EvidenceStatusBody,
  answer: EvidenceStatus,
  handler: handleEvidenceStatus,
});
