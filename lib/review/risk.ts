import { riskFromEvidenceStatement, savedRisk, type RiskRules } from '../repo/risk.js';
import type { Risk } from '../repo/submissions.js';
import type { Database, Statement } from '../ports.js';

/** The kind of the rights evidence when the file names someone other than the submitter. */
export const RIGHTS_MISMATCH_KIND = 'rights_metadata_mismatch';
export const RIGHTS_KIND = 'rights_metadata';

/**
 * The risk score: deterministic, 0-100. Each kind of counting evidence adds one signal with a
 * fixed weight (the sum is capped at 100). Only evidence that counts toward the score is used
 * (unmarked or `판단에 사용`); supporting summaries and failure records add nothing. A match with an
 * attention candidate or the confirmed watchlist makes the level high whatever the score.
 * The rules are data: the statement that stores the risk computes it from them (lib/repo/risk.ts).
 */
const RULES: RiskRules = {
  evidence: [
    { code: 'watchlist_match', label: '확정 DB 일치', weight: 70, group: 'watchlist', matched: true },
    { code: 'attention_match', label: '주의 후보 일치', weight: 60, group: 'attention', matched: true },
    { code: 'web_match', label: '웹 일치 (pHash 검증)', weight: 45, group: 'web_match', matched: true },
    { code: 'internal_match', label: '내부 유사 제출물', weight: 25, group: 'internal', matched: true },
    // The file names a creator or copyright holder other than the submitter. Alone it is medium (30),
    // never high: such fields are often stale or name an employee or agency rather than the rights
    // holder, so it asks for a look; with any match (internal 25, web 45) it adds up quickly.
    { code: 'rights_metadata_mismatch', label: '파일 권리 표기 불일치', weight: 30, group: 'rights', kind: RIGHTS_MISMATCH_KIND },
    { code: 'web_related', label: '웹 관련 근거', weight: 10, group: 'web_related' },
  ],
  // A face makes a picture a portrait-rights question; a person whose face was not found (from
  // behind, far away) still is, less surely. Alone either stays low: they ask for a look at the
  // release, and add up with a match (internal 25 + face 10 is medium).
  picture: [
    { code: 'faces', label: '얼굴 포함 (초상권)', weight: 10, shows: 'faces' },
    { code: 'people', label: '인물 포함 (얼굴 미검출)', weight: 5, shows: 'faceless_people' },
  ],
  highGroups: ['watchlist', 'attention'],
  high: 60,
  medium: 30,
};

/**
 * The statement that computes a submission's risk from its stored evidence and analysis and stores
 * it: put in the batch of the writes that call for it, the risk stored is that of the evidence
 * stored, with no lock, whichever process writes last (decision 0051).
 */
export function recomputeRiskStatement(db: Database, submissionId: string, now: string): Statement {
  return riskFromEvidenceStatement(db, submissionId, RULES, now);
}

/**
 * Recomputes and stores a submission's risk after `writes` (the evidence or status changes that
 * call for it), in one batch: on D1, one round trip. The risk stored; none for a submission that is gone.
 */
export async function recomputeRisk(db: Database, submissionId: string, now: string, writes: Statement[] = []): Promise<Risk | null> {
  const results = await db.batch([...writes, recomputeRiskStatement(db, submissionId, now)]);
  return savedRisk(results[writes.length]);
}
