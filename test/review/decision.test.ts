import { describe, expect, it } from 'vitest';
import { useTestEnv } from '../helpers/env.js';
import { KnowledgeEntryRecord, SubmissionRecord } from './contract.js';
import { body, PHASH, refusal, seedSubmission, snapshot, webMatch, webRelated } from './seed.js';

const env = useTestEnv();

const decide = (id: string, sent: unknown) => env.call('POST', `/api/submissions/${encodeURIComponent(id)}/decision`, sent);
const audit = async (...actions: string[]) => (await body(env.call('GET', '/api/audit-events'))).events.filter((e: any) => actions.includes(e.action));

describe('POST /api/submissions/{id}/decision', () => {
  it('승인: approved, no candidate created, answer {submission, knowledge_entry: null}', async () => {
    await seedSubmission(env, 's1', { evidence: [webMatch()] });
    const answer = await body(decide('s1', { decision: '승인', note: 'licensed photo' }));
    expect(Object.keys(answer).sort()).toEqual(['knowledge_entry', 'submission']);
    expect(answer.knowledge_entry).toBeNull();
    const submission = SubmissionRecord.parse(answer.submission);
    expect(submission.decision).toEqual({ value: '승인', note: 'licensed photo', decided_at: env.clock.now().toISOString() });
    expect((await body(env.call('GET', '/api/knowledge'))).entries).toEqual([]);
  });

  for (const decision of ['보류', '반려'] as const) {
    it(`${decision}: creates a 주의 후보 entry from the fingerprint and the evidence marked 판단에 사용`, async () => {
      const [match, related] = await seedSubmission(env, 's1', { evidence: [webMatch(), webRelated()] });
      await body(env.call('POST', `/api/evidence/${match.id}/status`, { status: '판단에 사용' }));
      await body(env.call('POST', `/api/evidence/${related.id}/status`, { status: '무관' }));
      const answer = await body(decide('s1', { decision }));
      expect(answer.submission.decision).toMatchObject({ value: decision, note: null });
      const entry = KnowledgeEntryRecord.parse(answer.knowledge_entry);
      expect(entry).toEqual({
        id: expect.stringMatching(/^ke_/),
        submission_id: 's1',
        phash: PHASH,
        evidence_ids: [match.id],
        decision,
        state: '주의 후보',
        created_at: env.clock.now().toISOString(),
        updated_at: env.clock.now().toISOString(),
      });
      const review = await body(env.call('GET', '/api/submissions/s1/review'));
      expect(review.knowledge_entry).toEqual(entry);
      expect((await body(env.call('GET', '/api/knowledge'))).entries).toEqual([entry]);
    });
  }

  it('uses evidence_ids when sent, de-duplicated, instead of the marked evidence', async () => {
    const [match, related] = await seedSubmission(env, 's1', { evidence: [webMatch(), webRelated()] });
    await body(env.call('POST', `/api/evidence/${match.id}/status`, { status: '판단에 사용' }));
    const answer = await body(decide('s1', { decision: '반려', evidence_ids: [related.id, related.id] }));
    expect(answer.knowledge_entry.evidence_ids).toEqual([related.id]);
    const explicitNone = await body(decide('s1', { decision: '반려', evidence_ids: [] }));
    expect(explicitNone.knowledge_entry.evidence_ids).toEqual([]);
  });

  it('a later 보류/반려 updates the one entry, keeping its id and operator-set state; decisions may change', async () => {
    const [match] = await seedSubmission(env, 's1', { evidence: [webMatch()] });
    const first = (await body(decide('s1', { decision: '보류', note: 'checking' }))).knowledge_entry;
    await body(env.call('POST', `/api/knowledge/${first.id}/promote-watchlist`));
    env.clock.advance(60_000);
    const second = await body(decide('s1', { decision: '반려', note: 'confirmed copy', evidence_ids: [match.id] }));
    expect(second.knowledge_entry).toMatchObject({
      id: first.id,
      decision: '반려',
      state: '확정 DB 편입',
      evidence_ids: [match.id],
      created_at: first.created_at,
      updated_at: env.clock.now().toISOString(),
    });
    expect(second.submission.decision).toEqual({ value: '반려', note: 'confirmed copy', decided_at: env.clock.now().toISOString() });
    expect((await body(env.call('GET', '/api/knowledge'))).entries).toHaveLength(1);

    // Approving afterwards creates nothing and leaves the entry to promote/exclude.
    const third = await body(decide('s1', { decision: '승인' }));
    expect(third.knowledge_entry).toBeNull();
    expect(third.submission.decision).toMatchObject({ value: '승인', note: null });
    expect((await body(env.call('GET', '/api/knowledge'))).entries).toEqual([
      expect.objectContaining({ id: first.id, state: '확정 DB 편입', decision: '반려' }),
    ]);
  });

  it('writes an audit event per decision with from, to, note, evidence and entry id', async () => {
    const [match] = await seedSubmission(env, 's1', { evidence: [webMatch()] });
    await body(decide('s1', { decision: '승인' }));
    const held = await body(decide('s1', { decision: '보류', note: 'ask the applicant', evidence_ids: [match.id] }));
    const events = await audit('submission.decision', 'submission.decision_change');
    const first = events[1].at;
    // A later decision is a correction: its own action, with the decision it replaced.
    expect(events.map((e: any) => [e.action, e.target_type, e.target_id, e.details])).toEqual([
      [
        'submission.decision_change',
        'submission',
        's1',
        {
          from: '승인',
          from_note: null,
          from_decided_at: first,
          to: '보류',
          note: 'ask the applicant',
          evidence_ids: [match.id],
          knowledge_entry_id: held.knowledge_entry.id,
        },
      ],
      [
        'submission.decision',
        'submission',
        's1',
        { from: null, from_note: null, from_decided_at: null, to: '승인', note: null, evidence_ids: [], knowledge_entry_id: null },
      ],
    ]);
    expect(events[0].actor).toEqual({ type: 'admin_token', id: null, name: 'SVC_ADMIN_TOKEN', role: 'admin', client: null });
  });

  it('refuses 보류/반려 with 409 while the submission has no fingerprint, but allows 승인', async () => {
    await seedSubmission(env, 'pending', { analysed: false });
    const before = await snapshot(env.db);
    for (const decision of ['보류', '반려']) {
      const message = await refusal(decide('pending', { decision }), 409, 'conflict');
      expect(message).toMatch(/fingerprint/);
    }
    expect(await snapshot(env.db)).toEqual(before);
    const approved = await body(decide('pending', { decision: '승인' }));
    expect(approved.submission.decision.value).toBe('승인');
  });

  it('refuses evidence of another submission with 400 and changes nothing', async () => {
    await seedSubmission(env, 's1', { evidence: [webMatch()] });
    const [other] = await seedSubmission(env, 's2', { evidence: [webMatch()] });
    const before = await snapshot(env.db);
    const message = await refusal(decide('s1', { decision: '반려', evidence_ids: [other.id] }), 400, 'invalid_request');
    expect(message).toContain(other.id);
    await refusal(decide('s1', { decision: '승인', evidence_ids: ['ev_nowhere'] }), 400, 'invalid_request');
    expect(await snapshot(env.db)).toEqual(before);
  });

  it('refuses a decision outside the vocabulary and malformed bodies with 400, changing nothing', async () => {
    await seedSubmission(env, 's1', { evidence: [webMatch()] });
    const before = await snapshot(env.db);
    for (const sent of [
      { decision: 'approve' },
      { decision: null },
      {},
      { decision: '승인', note: 5 },
      { decision: '승인', note: 'x'.repeat(2001) },
      { decision: '보류', evidence_ids: 'ev_1' },
      { decision: '보류', evidence_ids: [1] },
      { decision: '보류', state: '확정 DB 편입' },
    ]) {
      await refusal(decide('s1', sent), 400, 'invalid_request');
    }
    expect(await snapshot(env.db)).toEqual(before);
  });

  it('answers 404 for an unknown submission', async () => {
    const before = await snapshot(env.db);
    expect(await refusal(decide('nobody', { decision: '승인' }), 404, 'not_found')).toContain('nobody');
    expect(await snapshot(env.db)).toEqual(before);
  });

  it('two operators deciding at once leave one consistent decision, one entry and two audit events', async () => {
    const [match, related] = await seedSubmission(env, 's1', { evidence: [webMatch(), webRelated()] });
    const [a, b] = await Promise.all([
      body(decide('s1', { decision: '보류', note: 'operator A', evidence_ids: [match.id] })),
      body(decide('s1', { decision: '반려', note: 'operator B', evidence_ids: [related.id] })),
    ]);
    expect(a.knowledge_entry.id).toBe(b.knowledge_entry.id);
    const review = await body(env.call('GET', '/api/submissions/s1/review'));
    const entries = (await body(env.call('GET', '/api/knowledge'))).entries;
    expect(entries).toHaveLength(1);
    const winner = review.submission.decision;
    // The submission and its entry tell the same story: the same operator's decision and evidence.
    expect(entries[0].decision).toBe(winner.value);
    expect(entries[0].evidence_ids).toEqual(winner.value === '보류' ? [match.id] : [related.id]);
    expect(winner.note).toBe(winner.value === '보류' ? 'operator A' : 'operator B');
    const events = await audit('submission.decision', 'submission.decision_change');
    expect(events.map((e: any) => e.action)).toEqual(['submission.decision_change', 'submission.decision']);
    // The later event's `from` is the earlier decision: the trail is a chain, not two "from null".
    expect(events[1].details.from).toBeNull();
    expect(events[0].details.from).toBe(events[1].details.to);
    expect(events[0].details.to).toBe(winner.value);
    expect(events.map((e: any) => e.details.knowledge_entry_id)).toEqual([entries[0].id, entries[0].id]);
  });
});
