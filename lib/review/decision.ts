import { conflict, invalid, notFound } from '../http/errors.js';
import { auditDecisionStatement } from '../repo/audit.js';
import { listEvidence } from '../repo/evidence.js';
import { fromJson } from '../repo/json.js';
import { getKnowledgeEntryForSubmission, upsertAttentionCandidateStatement, type KnowledgeEntry } from '../repo/knowledge.js';
import { getSubmission, getSubmissionRow, saveDecisionStatement, type Submission } from '../repo/submissions.js';
import type { Decision } from '../vocabulary.js';
import type { Env } from '../ports.js';

export interface DecisionInput {
  decision: Decision;
  note?: string | null;
  evidence_ids?: string[];
}

/**
 * Sets a submission's case decision; only an operator ever calls this. A hold or reject ties the
 * image fingerprint to the selected evidence in the submission's one attention candidate (created,
 * or updated in place on a later hold/reject, keeping whatever state operators moved it to).
 * Approval creates nothing and leaves an existing entry as it is: entries change state only through
 * promote/exclude. A decision may be changed later; every change is audited with its `from`.
 */
export async function decideSubmission(
  env: Env,
  submissionId: string,
  input: DecisionInput,
): Promise<{ submission: Submission; knowledge_entry: KnowledgeEntry | null }> {
  const { db } = env;
  const row = await getSubmissionRow(db, submissionId);
  if (!row) throw notFound(`unknown submission: ${submissionId}`);
  const evidence = await listEvidence(db, submissionId);
  let selected: string[];
  if (input.evidence_ids) {
    const own = new Set(evidence.map((e) => e.id));
    const foreign = input.evidence_ids.filter((id) => !own.has(id));
    if (foreign.length) throw invalid(`evidence_ids: not evidence of submission ${submissionId}: ${foreign.join(', ')}`);
    selected = [...new Set(input.evidence_ids)];
  } else {
    selected = evidence.filter((e) => e.status === '판단에 사용').map((e) => e.id);
  }
  const createsEntry = input.decision !== '승인';
  if (createsEntry && !row.phash) {
    throw conflict(`submission ${submissionId} has no image fingerprint yet (analysis ${row.analysis_status}); ${input.decision} needs one`);
  }
  const note = input.note ?? null;
  const now = env.clock.now().toISOString();
  const statements = [];
  if (createsEntry) {
    statements.push(
      upsertAttentionCandidateStatement(
        db,
        { submission_id: submissionId, phash: row.phash!, fingerprints: fromJson(row.fingerprints, null), evidence_ids: selected, decision: input.decision },
        now,
      ),
    );
  }
  statements.push(
    auditDecisionStatement(db, submissionId, { to: input.decision, note, evidence_ids: selected, knowledge_entry: createsEntry }, now, env.actor),
    saveDecisionStatement(db, submissionId, input.decision, note, now),
  );
  await db.batch(statements);
  const [submission, entry] = await Promise.all([getSubmission(db, submissionId), createsEntry ? getKnowledgeEntryForSubmission(db, submissionId) : null]);
  return { submission: submission!, knowledge_entry: entry };
}
