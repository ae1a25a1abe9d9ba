import type { Evidence } from '../repo/evidence.js';
import { evidenceOf, evidenceOfSubmissionStatement } from '../repo/evidence.js';
import { rowsOf } from '../repo/columns.js';
import {
  detectedBoxesStatement,
  saveRiskStatement,
  type DetectedBoxes,
  type FaceRecord,
  type PersonRecord,
  type Risk,
  type RiskSignal,
} from '../repo/submissions.js';
import { fromJson } from '../repo/json.js';
import { serialized } from '../db/serial.js';
import type { GroupKey, RiskLevel } from '../vocabulary.js';
import type { Database, Statement } from '../ports.js';

/** The kind of the rights evidence when the file names someone other than the submitter. */
export const RIGHTS_MISMATCH_KIND = 'rights_metadata_mismatch';
export const RIGHTS_KIND = 'rights_metadata';

/**
 * The risk score: deterministic, 0-100. Each kind of counting evidence adds one signal with a
 * fixed weight (the sum is capped at 100). Only evidence that counts toward the score is used
 * (unmarked or `판단에 사용`); supporting summaries and failure records add nothing. A match with an
 * attention candidate or the confirmed watchlist makes the level high whatever the score.
 */
const SIGNALS: { code: string; label: string; weight: number; applies: (e: Evidence) => boolean }[] = [
  { code: 'watchlist_match', label: '확정 DB 일치', weight: 70, applies: (e) => e.group === 'watchlist' && e.matched },
  { code: 'attention_match', label: '주의 후보 일치', weight: 60, applies: (e) => e.group === 'attention' && e.matched },
  { code: 'web_match', label: '웹 일치 (pHash 검증)', weight: 45, applies: (e) => e.group === 'web_match' && e.matched },
  { code: 'internal_match', label: '내부 유사 제출물', weight: 25, applies: (e) => e.group === 'internal' && e.matched },
  // The file names a creator or copyright holder other than the submitter. Alone it is medium (30),
  // never high: such fields are often stale or name an employee or agency rather than the rights
  // holder, so it asks for a look; with any match (internal 25, web 45) it adds up quickly.
  { code: 'rights_metadata_mismatch', label: '파일 권리 표기 불일치', weight: 30, applies: (e) => e.group === 'rights' && e.kind === RIGHTS_MISMATCH_KIND },
  { code: 'web_related', label: '웹 관련 근거', weight: 10, applies: (e) => e.group === 'web_related' },
];

const HIGH_GROUPS: GroupKey[] = ['watchlist', 'attention'];

/** Who the picture shows, as analysis found them: a portrait-rights question whatever the evidence. */
export interface PictureShows {
  faces: number;
  /** Person boxes with no face found inside (seen from behind, in profile, too small). */
  facelessPeople: number;
}

export const SHOWS_NOBODY: PictureShows = { faces: 0, facelessPeople: 0 };

// A face makes a picture a portrait-rights question; a person whose face was not found (from
// behind, far away) still is, less surely. Alone either stays low: they ask for a look at the
// release, and add up with a match (internal 25 + face 10 is medium).
const PICTURE_SIGNALS: { code: string; label: string; weight: number; applies: (shows: PictureShows) => boolean }[] = [
  { code: 'faces', label: '얼굴 포함 (초상권)', weight: 10, applies: (shows) => shows.faces > 0 },
  { code: 'people', label: '인물 포함 (얼굴 미검출)', weight: 5, applies: (shows) => shows.facelessPeople > 0 },
];

/** What a stored submission's analysis found (nobody for a submission that is gone). */
export async function pictureShows(db: Database, submissionId: string): Promise<PictureShows> {
  return showsOf(await detectedBoxesStatement(db, submissionId).first<DetectedBoxes>());
}

function showsOf(row: DetectedBoxes | null | undefined): PictureShows {
  if (!row) return SHOWS_NOBODY;
  const people = fromJson<PersonRecord[]>(row.people, []);
  return { faces: fromJson<FaceRecord[]>(row.faces, []).length, facelessPeople: people.filter((person) => person.face === null).length };
}

export function computeRisk(evidence: Evidence[], shows: PictureShows): Risk {
  const counting = evidence.filter((e) => e.counts_toward_score);
  const signals: RiskSignal[] = [];
  for (const s of SIGNALS) {
    const ids = counting.filter(s.applies).map((e) => e.id);
    if (ids.length) signals.push({ code: s.code, label: s.label, weight: s.weight, evidence_ids: ids });
  }
  for (const s of PICTURE_SIGNALS) if (s.applies(shows)) signals.push({ code: s.code, label: s.label, weight: s.weight, evidence_ids: [] });
  const score = Math.min(
    100,
    signals.reduce((sum, s) => sum + s.weight, 0),
  );
  const high = counting.some((e) => HIGH_GROUPS.includes(e.group) && e.matched);
  const level: RiskLevel = high || score >= 60 ? 'high' : score >= 30 ? 'medium' : 'low';
  return { score, level, signals };
}

/** Serialises every read-compute-write of one submission's risk, so a stale result never lands last. */
export function withRiskLock<T>(submissionId: string, fn: () => Promise<T>): Promise<T> {
  return serialized(`risk|${submissionId}`, fn);
}

/**
 * Recomputes and stores a submission's risk from its stored evidence, after `writes` (the evidence
 * or status changes that call for it): the writes and the reads go as one batch, the risk as the
 * next, so on D1 a recompute is two round trips whatever it follows.
 */
export async function recomputeRisk(db: Database, submissionId: string, now: string, writes: Statement[] = []): Promise<Risk> {
  return withRiskLock(submissionId, async () => {
    const results = await db.batch([...writes, evidenceOfSubmissionStatement(db, submissionId), detectedBoxesStatement(db, submissionId)]);
    const [evidence, boxes] = results.slice(writes.length);
    const risk = computeRisk(evidenceOf(evidence), showsOf(rowsOf<DetectedBoxes>(boxes)[0]));
    await saveRiskStatement(db, submissionId, risk, now).run();
    return risk;
  });
}
