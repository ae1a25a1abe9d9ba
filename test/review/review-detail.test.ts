import { describe, expect, it } from 'vitest';
import { useTestEnv } from '../helpers/env.js';
import { EvidenceRecord, KnowledgeEntryRecord, SubmissionRecord } from './contract.js';
import { attentionMatch, body, failure, refusal, seedSubmission, summary, webMatch, webRelated } from './seed.js';

const env = useTestEnv();

describe('GET /api/submissions/{id}/review', () => {
  it('answers {submission, evidence, groups, knowledge_entry} in the contract shapes, with the page captures beside them', async () => {
    await seedSubmission(env, 's1', { evidence: [webMatch(), failure()] });
    const answer = await body(env.call('GET', '/api/submissions/s1/review'));
    expect(Object.keys(answer).sort()).toEqual(['captures', 'evidence', 'groups', 'knowledge_entry', 'submission']);
    expect(answer.captures).toEqual([]);
    const submission = SubmissionRecord.parse(answer.submission);
    expect(submission).toMatchObject({
      id: 's1',
      title: 'title of s1',
      file: 'images/s1.png',
      media_url: '/media/images/s1.png',
      evidence_count: 2,
      attention_match: false,
    });
    expect(answer.evidence).toHaveLength(2);
    for (const e of answer.evidence) EvidenceRecord.parse(e);
    expect(answer.knowledge_entry).toBeNull();
  });

  it('shows only non-empty groups in the contract order with their labels', async () => {
    const [related, sum, match, fail] = await seedSubmission(env, 's1', {
      evidence: [webRelated(), summary([]), webMatch(), failure()],
    });
    const { groups } = await body(env.call('GET', '/api/submissions/s1/review'));
    expect(groups).toEqual([
      { key: 'web_match', label: '웹 일치', evidence_ids: [match.id] },
      { key: 'web_related', label: '웹 관련 근거', evidence_ids: [related.id] },
      { key: 'supporting', label: '보조 근거', evidence_ids: [sum.id] },
      { key: 'failures', label: '수집 실패', evidence_ids: [fail.id] },
    ]);
  });

  it('puts the 주의 후보 근거 group first when a later submission matches a candidate', async () => {
    await seedSubmission(env, 'original', { evidence: [webMatch()] });
    const entry = (await body(env.call('POST', '/api/submissions/original/decision', { decision: '반려' }))).knowledge_entry;
    const [match, attention] = await seedSubmission(env, 'later', { evidence: [webMatch(), attentionMatch(entry.id)] });
    const answer = await body(env.call('GET', '/api/submissions/later/review'));
    expect(answer.groups[0]).toEqual({ key: 'attention', label: '주의 후보 근거', evidence_ids: [attention.id] });
    expect(answer.groups.map((g: any) => g.key)).toEqual(['attention', 'web_match']);
    expect(answer.evidence.map((e: any) => e.id)).toEqual([attention.id, match.id]);
    expect(answer.evidence[0]).toMatchObject({ group: 'attention', source: 'watchlist', knowledge_entry_id: entry.id });
    // A high risk signal, and still no decision: the decision is never set automatically.
    expect(answer.submission).toMatchObject({ attention_match: true, decision: null });
    expect(answer.submission.risk.level).toBe('high');
    expect(answer.knowledge_entry).toBeNull();
  });

  it('carries the submission own knowledge entry once decided', async () => {
    await seedSubmission(env, 's1', { evidence: [webMatch()] });
    const decided = await body(env.call('POST', '/api/submissions/s1/decision', { decision: '보류' }));
    const answer = await body(env.call('GET', '/api/submissions/s1/review'));
    expect(KnowledgeEntryRecord.parse(answer.knowledge_entry)).toEqual(decided.knowledge_entry);
  });

  it('shows a submission without evidence with no groups', async () => {
    await seedSubmission(env, 'bare', { analysed: false });
    const answer = await body(env.call('GET', '/api/submissions/bare/review'));
    expect(answer.groups).toEqual([]);
    expect(answer.evidence).toEqual([]);
    expect(answer.submission).toMatchObject({ analysis_status: 'pending', phash: null });
  });

  it('answers 404 for an unknown submission, including ids needing escapes', async () => {
    expect(await refusal(env.call('GET', '/api/submissions/nobody/review'), 404, 'not_found')).toContain('nobody');
    await refusal(env.call('GET', `/api/submissions/${encodeURIComponent('사진 1')}/review`), 404, 'not_found');
    await refusal(env.call('GET', '/api/submissions/%ZZ/review'), 404, 'not_found');
  });

  it('finds a submission whose id needs escaping', async () => {
    await seedSubmission(env, '사진 1');
    const answer = await body(env.call('GET', `/api/submissions/${encodeURIComponent('사진 1')}/review`));
    expect(answer.submission.id).toBe('사진 1');
  });
});
