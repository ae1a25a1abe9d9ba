import { z } from 'zod';
import { answer } from '../lib/api/answer.js';
import { EvidenceRecord, SubmissionRecord } from '../lib/api/records.js';
import { setEvidenceStatus } from '../lib/review/evidence-status.js';
import { EVIDENCE_STATUSES } from '../lib/vocabulary.js';
import { recordChangeHandler, route } from './route.js';

export const EvidenceStatusBody = z.object({ status: z.enum(EVIDENCE_STATUSES) }).strict();

const EvidenceStatus = answer('evidenceStatus', z.object({ evidence: EvidenceRecord, submission: SubmissionRecord }));

/** POST /api/evidence/{id}/status: the operator's mark and the submission's new risk. */
export const handleEvidenceStatus = recordChangeHandler('evidence', EvidenceStatusBody, EvidenceStatus, (env, id, body) =>
  setEvidenceStatus(env, id, body.status),
);

export const evidenceStatusRoute = route('post', '/api/evidence/:id/status', 'operator', 'Mark evidence: 판단에 사용, 무관, 오탐 or 보류', {
  body: EvidenceStatusBody,
  answer: EvidenceStatus,
  handler: handleEvidenceStatus,
});
