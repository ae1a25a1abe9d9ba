import { notFound } from '../http/errors.js';
import { listPageCaptureRows, toPageCapture, type PageCapture } from '../repo/captures.js';
import { listEvidence, type Evidence } from '../repo/evidence.js';
import { getKnowledgeEntryForSubmission, type KnowledgeEntry } from '../repo/knowledge.js';
import { getSubmission, type Submission } from '../repo/submissions.js';
import { REVIEW_GROUPS, type GroupKey } from '../vocabulary.js';
import type { Database } from '../ports.js';

export interface ReviewGroup {
  key: GroupKey;
  label: string;
  evidence_ids: string[];
}

export interface SubmissionReview {
  submission: Submission;
  evidence: Evidence[];
  groups: ReviewGroup[];
  knowledge_entry: KnowledgeEntry | null;
  /** Every page capture of the case, oldest first; each names its evidence. */
  captures: PageCapture[];
}

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
