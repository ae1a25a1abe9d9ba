import { describe, expect, it } from 'vitest';
import { useTestEnv } from '../helpers/env.js';
import { EvidenceRecord, SubmissionRecord } from './contract.js';
import { body, failure, refusal, seedSubmission, snapshot, summary, webMatch, webRelated } from './seed.js';

const env = useTestEnv();

const setStatus = (id: string, status: unknown) => env.call('POST', `/api/evidence/${encodeURIComponent(id)}/status`, { status });

describe('POST /api/evidence/{id}/status', () => {
  it('answers {evidence, submission} in the contract shapes with the new risk', async () => {
    const [match, related] = await seedSubmission(env, 's1', { evidence: [webMatch(), webRelated()] });
    const before = await body(env.call('GET', '/api/submissions/s1/review'));
    expect(before.submission.risk).toMatchObject({ score: 55, level: 'medium' });

    const answer = await body(setStatus(match.id, '오탐'));
    expect(Object.keys(answer).sort()).toEqual(['evidence', 'submission']);
    const evidence = EvidenceRecord.parse(answer.evidence);
    const submission = SubmissionRecord.parse(answer.submission);
    expect(evidence).toMatchObject({ id: match.id, status: '오탐', counts_toward_score: false });
    expect(submission.id).toBe('s1');
    // The web match no longer counts: only the related page's signal is left.
    expect(submission.risk).toEqual({
      score: 10,
      level: 'low',
      signals: [{ code: 'web_related', label: '웹 관련 근거', weight: 10, evidence_ids: [related.id] }],
    });
  });

  it('moves between all four statuses; 판단에 사용 counts again, 무관/오탐/보류 take it out', async () => {
    const [match] = await seedSubmission(env, 's1', { evidence: [webMatch()] });
    const expected = { '판단에 사용': [true, 45], 무관: [false, 0], 오탐: [false, 0], 보류: [false, 0] } as const;
    for (const status of ['무관', '판단에 사용', '오탐', '판단에 사용', '보류', '보류'] as const) {
      const answer = await body(setStatus(match.id, status));
      expect(answer.evidence.status).toBe(status);
      expect(answer.evidence.counts_toward_score).toBe(expected[status][0]);
      expect(answer.submission.risk.score).toBe(expected[status][1]);
    }
    const review = await body(env.call('GET', '/api/submissions/s1/review'));
    expect(review.evidence[0].status).toBe('보류');
    expect(review.submission.risk.score).toBe(0);
  });

  it('records the status on supporting and failure evidence without ever counting it', async () => {
    const [fail] = await seedSubmission(env, 's1', { evidence: [failure()] });
    const [sum] = await seedSubmission(env, 's2', { evidence: [summary([])] });
    for (const id of [fail.id, sum.id]) {
      const answer = await body(setStatus(id, '판단에 사용'));
      expect(answer.evidence).toMatchObject({ status: '판단에 사용', counts_toward_score: false });
      expect(answer.submission.risk.score).toBe(0);
    }
  });

  it('never creates a knowledge entry and never sets the decision', async () => {
    const [match] = await seedSubmission(env, 's1', { evidence: [webMatch()] });
    for (const status of ['판단에 사용', '보류', '오탐'] as const) await body(setStatus(match.id, status));
    expect((await body(env.call('GET', '/api/knowledge'))).entries).toEqual([]);
    const review = await body(env.call('GET', '/api/submissions/s1/review'));
    expect(review.knowledge_entry).toBeNull();
    expect(review.submission.decision).toBeNull();
  });

  it('writes an audit event with from and to', async () => {
    const [match] = await seedSubmission(env, 's1', { evidence: [webMatch()] });
    await body(setStatus(match.id, '무관'));
    await body(setStatus(match.id, '판단에 사용'));
    const { events } = await body(env.call('GET', '/api/audit-events'));
    expect(events.map((e: any) => [e.action, e.target_type, e.target_id, e.details])).toEqual([
      ['evidence.status', 'evidence', match.id, { submission_id: 's1', from: '무관', to: '판단에 사용' }],
      ['evidence.status', 'evidence', match.id, { submission_id: 's1', from: null, to: '무관' }],
    ]);
  });

  it('refuses a status outside the vocabulary, a missing status and extra fields with 400, changing nothing', async () => {
    const [match] = await seedSubmission(env, 's1', { evidence: [webMatch()] });
    const before = await snapshot(env.db);
    for (const sent of [{ status: 'used' }, { status: null }, { status: '' }, {}, { status: '무관', extra: 1 }, { status: ['무관'] }]) {
      const message = await refusal(env.call('POST', `/api/evidence/${match.id}/status`, sent), 400, 'invalid_request');
      expect(message).toMatch(/status|extra|unrecognized/i);
    }
    await refusal(env.call('POST', `/api/evidence/${match.id}/status`, '{"status":'), 400, 'invalid_request');
    expect(await snapshot(env.db)).toEqual(before);
  });

  it('answers 404 for unknown evidence, changing nothing', async () => {
    await seedSubmission(env, 's1', { evidence: [webMatch()] });
    const before = await snapshot(env.db);
    const message = await refusal(setStatus('ev_missing', '무관'), 404, 'not_found');
    expect(message).toContain('ev_missing');
    await refusal(env.call('POST', '/api/evidence/%E0%A4%A/status', { status: '무관' }), 404, 'not_found');
    expect(await snapshot(env.db)).toEqual(before);
  });
});
