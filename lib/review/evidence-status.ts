import { notFound } from '../http/errors.js';
import { auditEvidenceStatusStatement } from '../repo/audit.js';
import { getEvidence, setEvidenceStatusStatement, type Evidence } from '../repo/evidence.js';
import { getSubmission, type Submission } from '../repo/submissions.js';
import { recomputeRiskStatement } from './risk.js';
import type { EvidenceStatus } from '../vocabulary.js';
import type { Env } from '../ports.js';

/**
 * Records an operator's status on one evidence item and, in the same transaction, the risk it
 * leads to. It never touches the knowledge store: only a hold or reject decision creates a candidate.
 */
export async function setEvidenceStatus(env: Env, evidenceId: string, status: EvidenceStatus): Promise<{ evidence: Evidence; submission: Submission }> {
  const { db } = env;
  const target = await getEvidence(db, evidenceId);
  if (!target) throw notFound(`unknown evidence: ${evidenceId}`);
  const now = env.clock.now().toISOString();
  await db.batch([
    auditEvidenceStatusStatement(db, evidenceId, status, now, env.actor),
    setEvidenceStatusStatement(db, evidenceId, status),
    recomputeRiskStatement(db, target.submission_id, now),
  ]);
  const [evidence, submission] = await Promise.all([getEvidence(db, evidenceId), getSubmission(db, target.submission_id)]);
  return { evidence: evidence!, submission: submission! };
}
