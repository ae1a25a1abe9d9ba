import { describe, expect, it } from 'vitest';
import { useTestEnv } from '../helpers/env.js';
import { KnowledgeEntryRecord } from './contract.js';
import { body, refusal, seedSubmission, snapshot, webMatch } from './seed.js';

const env = useTestEnv();

async function candidate(id: string, decision: '보류' | '반려' = '보류') {
  await seedSubmission(env, id, { evidence: [webMatch()] });
  return (await body(env.call('POST', `/api/submissions/${id}/decision`, { decision }))).knowledge_entry;
}
const promote = (id: string) => env.call('POST', `/api/knowledge/${encodeURIComponent(id)}/promote-watchlist`);
const exclude = (id: string) => env.call('POST', `/api/knowledge/${encodeURIComponent(id)}/exclude-watchlist`);
const events = async () => (await body(env.call('GET', '/api/audit-events'))).events.filter((e: any) => e.action.startsWith('knowledge.'));

describe('knowledge entries: list, promote, exclude', () => {
  it('promote moves 주의 후보 to 확정 DB 편입 and answers {entry}', async () => {
    const entry = await candidate('s1');
    env.clock.advance(1000);
    const answer = await body(promote(entry.id));
    expect(Object.keys(answer)).toEqual(['entry']);
    expect(KnowledgeEntryRecord.parse(answer.entry)).toEqual({ ...entry, state: '확정 DB 편입', updated_at: env.clock.now().toISOString() });
  });

  it('exclude moves 주의 후보 to 오탐 제외 and answers {entry}', async () => {
    const entry = await candidate('s1');
    const answer = await body(exclude(entry.id));
    expect(KnowledgeEntryRecord.parse(answer.entry)).toMatchObject({ id: entry.id, state: '오탐 제외' });
  });

  it('corrects a mistake either way: confirmed can be excluded and excluded can be promoted', async () => {
    const entry = await candidate('s1');
    expect((await body(promote(entry.id))).entry.state).toBe('확정 DB 편입');
    expect((await body(exclude(entry.id))).entry.state).toBe('오탐 제외');
    expect((await body(promote(entry.id))).entry.state).toBe('확정 DB 편입');
    expect((await events()).map((e: any) => [e.action, e.target_type, e.target_id, e.details])).toEqual([
      ['knowledge.promote', 'knowledge_entry', entry.id, { submission_id: 's1', from: '오탐 제외', to: '확정 DB 편입' }],
      ['knowledge.exclude', 'knowledge_entry', entry.id, { submission_id: 's1', from: '확정 DB 편입', to: '오탐 제외' }],
      ['knowledge.promote', 'knowledge_entry', entry.id, { submission_id: 's1', from: '주의 후보', to: '확정 DB 편입' }],
    ]);
  });

  it('repeating a move is idempotent: same answer, no new audit event, updated_at kept', async () => {
    const entry = await candidate('s1');
    const first = (await body(promote(entry.id))).entry;
    env.clock.advance(5000);
    const again = (await body(promote(entry.id))).entry;
    expect(again).toEqual(first);
    await body(exclude(entry.id));
    const excluded = (await body(exclude(entry.id))).entry;
    expect(excluded.state).toBe('오탐 제외');
    expect((await events()).map((e: any) => e.action)).toEqual(['knowledge.exclude', 'knowledge.promote']);
  });

  it('two operators promoting at once write one audit event', async () => {
    const entry = await candidate('s1');
    const answers = await Promise.all([body(promote(entry.id)), body(promote(entry.id))]);
    expect(answers.map((a) => a.entry.state)).toEqual(['확정 DB 편입', '확정 DB 편입']);
    expect(await events()).toHaveLength(1);
  });

  it('GET /api/knowledge lists entries, newest change first, and filters by state', async () => {
    const a = await candidate('a', '보류');
    env.clock.advance(1000);
    const b = await candidate('b', '반려');
    env.clock.advance(1000);
    const c = await candidate('c', '보류');
    env.clock.advance(1000);
    await body(promote(a.id));
    env.clock.advance(1000);
    await body(exclude(b.id));
    const all = (await body(env.call('GET', '/api/knowledge'))).entries;
    expect(Object.keys(await body(env.call('GET', '/api/knowledge')))).toEqual(['entries']);
    for (const e of all) KnowledgeEntryRecord.parse(e);
    expect(all.map((e: any) => [e.id, e.state])).toEqual([
      [b.id, '오탐 제외'],
      [a.id, '확정 DB 편입'],
      [c.id, '주의 후보'],
    ]);
    const q = (state: string) => env.call('GET', `/api/knowledge?state=${encodeURIComponent(state)}`);
    expect((await body(q('주의 후보'))).entries.map((e: any) => e.id)).toEqual([c.id]);
    expect((await body(q('확정 DB 편입'))).entries.map((e: any) => e.id)).toEqual([a.id]);
    expect((await body(q('오탐 제외'))).entries.map((e: any) => e.id)).toEqual([b.id]);
    await refusal(q('confirmed'), 400, 'invalid_request');
  });

  it('answers 404 for an unknown entry, changing nothing', async () => {
    await candidate('s1');
    const before = await snapshot(env.db);
    expect(await refusal(promote('ke_missing'), 404, 'not_found')).toContain('ke_missing');
    await refusal(exclude('ke_missing'), 404, 'not_found');
    expect(await snapshot(env.db)).toEqual(before);
  });

  it('decision and bootstrap counts follow the moves', async () => {
    const a = await candidate('a');
    await candidate('b');
    await body(promote(a.id));
    const boot = await body(env.call('GET', '/api/bootstrap'));
    expect(boot.knowledge_counts).toEqual({ '주의 후보': 1, '확정 DB 편입': 1, '오탐 제외': 0 });
  });
});
