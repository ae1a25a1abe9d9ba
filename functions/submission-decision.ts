import { z } from 'zod';
import { answer } from '../lib/api/answer.js';
import { KnowledgeEntryRecord, SubmissionRecord } from '../lib/api/records.js';
import { decideSubmission } from '../lib/review/decision.js';
import { DECISIONS } from '../lib/vocabulary.js';
import { recordChangeHandler, route } from './route.js';

export const DecisionBody = z
  .object({
    decision: z.enum(DECISIONS),
    note: z.string().max(2000).nullable().optional(),
    evidence_ids: z.array(z.string().min(1).max(200)).max(1000).optional(),
  })
  .strict();

const Decision = answer('decision', z.object({ submission: SubmissionRecord, knowledge_entry: KnowledgeEntryRecord.nullable() }));

/** POST /api/submissions/{id}/decision: 승인 creates no entry; 보류 and 반려 create or update one. */
export const handleSubmissionDecision = recordChangeHandler('submission', DecisionBody, Decision, decideSubmission);

export const submissionDecisionRoute = route('post', '/api/submissions/:id/decision', 'operator', 'Decide: 승인, 보류 or 반려', {
  body: DecisionBody,
  answer: Decision,
  handler: handleSubmissionDecision,
});
