import type { z } from 'zod';
import type { SubmissionReviewRecord } from '../api/records.js';
import { notFound } from '../http/errors.js';
import { listPageCaptureRows, toPageCapture } from '../repo/captures.js';
import { listEvidence, type Evidence } from '../repo/evidence.js';
import { getKnowledgeEntryForSubmission } from '../repo/knowledge.js';
import { getSubmission } from '../repo/submissions.js';
import { REVIEW_GROUPS } from '../vocabulary.js';
import type { Database } from '../ports.js';

/** What the review shows; `captures` holds every page capture of the case, oldest first, each naming its evidence. */
export type SubmissionReview = z.infer<typeof SubmissionReviewRecord>;
type ReviewGroup = SubmissionReview['groups'][number];

/** Groups in the contract's order (attention candidates first, set apart); empty groups are left out. */
export function groupEvidence(evidence: Evidence[]): ReviewGroup[] {
  return REVIEW_GROUPS.flatMap(({ key, label }) => {
    const ids = evidence.filter((e) => e.group === key).map((e) => e.id);
    return ids.length ? [{ key, label, evidence_ids: ids }] : [];
  });
}

export async function submissionReview(db: Database, submissionId: string): Promise<SubmissionReview> {
  const submission = await getSubmission(db, submissionId);
  if (!submission) throw notFound(`unknown submission: ${submissionId}`);
  const [evidence, knowledgeEntry, captures] = await Promise.all([
    listEvidence(db, submissionId),
    getKnowledgeEntryForSubmission(db, submissionId),
    listPageCaptureRows(db, submissionId),
  ]);
  return { submission, evidence, groups: groupEvidence(evidence), knowledge_entry: knowledgeEntry, captures: captures.map(toPageCapture) };
}
