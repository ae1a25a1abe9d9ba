import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../helpers/env.js';
import { ProviderRecord, SubmissionRecord } from './contract.js';
import { body, refusal, seedSubmission, webMatch, webRelated } from './seed.js';

let env: TestEnv;
beforeEach(async () => {
  env = await createTestEnv();
});
afterEach(async () => env.dispose());

/** Five submissions: risk 0, 10, 45, 55 and 55 (the last one decided). */
async function seedQueue() {
  await seedSubmission(env, 'none');
  await seedSubmission(env, 'related', { evidence: [webRelated()] });
  await seedSubmission(env, 'match', { evidence: [webMatch()] });
  await seedSubmission(env, 'both', { evidence: [webMatch(), webRelated()] });
  await seedSubmission(env, 'decided', { evidence: [webMatch(), webRelated()] });
  await body(env.call('POST', '/api/submissions/decided/decision', { decision: '승인' }));
}
const ids = (answer: { items: { id: string }[] }) => answer.items.map((s) => s.id);

describe('GET /api/review-queue', () => {
  it('answers {items, total}: undecided first, then risk high to low', async () => {
    await seedQueue();
    const answer = await body(env.call('GET', '/api/review-queue'));
    expect(Object.keys(answer).sort()).toEqual(['items', 'total']);
    for (const s of answer.items) SubmissionRecord.parse(s);
    expect(ids(answer)).toEqual(['both', 'match', 'related', 'none', 'decided']);
    expect(answer.items.map((s: any) => s.risk.score)).toEqual([55, 45, 10, 0, 55]);
    expect(answer.total).toBe(5);
  });

  it('filters by decision (including undecided) and by level; total counts the filter', async () => {
    await seedQueue();
    const q = async (query: string) => body(env.call('GET', `/api/review-queue?${query}`));
    expect(await q('decision=undecided')).toMatchObject({ total: 4 });
    expect(ids(await q(`decision=${encodeURIComponent('승인')}`))).toEqual(['decided']);
    expect(await q(`decision=${encodeURIComponent('반려')}`)).toEqual({ items: [], total: 0 });
    expect(ids(await q('level=medium'))).toEqual(['both', 'match', 'decided']);
    expect(ids(await q('level=medium&decision=undecided'))).toEqual(['both', 'match']);
    expect(ids(await q('level=low'))).toEqual(['related', 'none']);
  });

  it('pages with limit and offset; a limit above 200 is clamped', async () => {
    await seedQueue();
    const page = async (query: string) => body(env.call('GET', `/api/review-queue?${query}`));
    expect(await page('limit=2')).toMatchObject({ total: 5 });
    expect(ids(await page('limit=2'))).toEqual(['both', 'match']);
    expect(ids(await page('limit=2&offset=2'))).toEqual(['related', 'none']);
    expect(ids(await page('limit=2&offset=4'))).toEqual(['decided']);
    expect(await page('offset=10')).toEqual({ items: [], total: 5 });
    expect(ids(await page('limit=100000'))).toHaveLength(5);
  });

  it('refuses malformed paging and filters with 400', async () => {
    for (const query of ['limit=-1', 'limit=0', 'limit=abc', 'limit=1.5', 'limit=', 'offset=-3', 'offset=x', 'decision=approved', 'level=critical']) {
      await refusal(env.call('GET', `/api/review-queue?${query}`), 400, 'invalid_request');
    }
  });
});

describe('GET /api/bootstrap', () => {
  it('answers {version, queue, providers, knowledge_counts, limits, statuses, decisions}', async () => {
    await seedQueue();
    const answer = await body(env.call('GET', '/api/bootstrap'));
    for (const key of ['version', 'queue', 'providers', 'knowledge_counts', 'limits', 'statuses', 'decisions']) expect(answer).toHaveProperty(key);
    expect(answer.version).toBe('0.1.0');
    expect(answer.queue).toEqual(await body(env.call('GET', '/api/review-queue')));
    expect(answer.providers.map((p: any) => ProviderRecord.parse(p).id)).toEqual(['regional', 'global_vision', 'global_search', 'local_llm']);
    expect(answer.knowledge_counts).toEqual({ '주의 후보': 0, '확정 DB 편입': 0, '오탐 제외': 0 });
    expect(answer.statuses).toEqual(['판단에 사용', '무관', '오탐', '보류']);
    expect(answer.decisions).toEqual(['승인', '보류', '반려']);
    expect(answer.limits).toMatchObject({
      SVC_EVIDENCE_RETENTION_DAYS: 90,
      SVC_SEARCH_RESULT_SIMILARITY_THRESHOLD: 0.9,
      REGIONAL_SEARCH_DISPLAY: 10,
      SVC_TIMEZONE: 'Asia/Seoul',
    });
  });

  it('shows effective settings: a clamped value as clamped, a malformed one as its default', async () => {
    const custom = await createTestEnv({ REGIONAL_SEARCH_PAGES: '50', SVC_AUTO_REGIONAL_QUERY_LIMIT: 'lots' });
    try {
      const { limits } = await body(custom.call('GET', '/api/bootstrap'));
      expect(limits).toMatchObject({ REGIONAL_SEARCH_PAGES: 10, SVC_AUTO_REGIONAL_QUERY_LIMIT: 3 });
    } finally {
      await custom.dispose();
    }
  });
});
