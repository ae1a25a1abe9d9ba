import { describe, expect, it } from 'vitest';
import { createTestEnv, useTestEnv } from '../helpers/env.js';
import { ProviderRecord, SubmissionRecord } from './contract.js';
import { getSubmission, saveAnalysisStatement, type FaceRecord, type PersonRecord } from '../../lib/repo/submissions.js';
import { attentionMatch, body, PHASH, refusal, seedSubmission, webMatch, webRelated } from './seed.js';

const env = useTestEnv();

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
  it('answers {items, total, next_cursor}: undecided first, then risk high to low', async () => {
    await seedQueue();
    const answer = await body(env.call('GET', '/api/review-queue'));
    expect(Object.keys(answer).sort()).toEqual(['items', 'next_cursor', 'total']);
    expect(answer.next_cursor).toBeNull();
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
    expect(await q(`decision=${encodeURIComponent('반려')}`)).toEqual({ items: [], total: 0, next_cursor: null });
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
    expect(await page('offset=10')).toEqual({ items: [], total: 5, next_cursor: null });
    expect(ids(await page('limit=100000'))).toHaveLength(5);
  });

  it('pages with a cursor: each page starts where the last ended, to the end, whatever the filter', async () => {
    await seedQueue();
    const page = async (query: string) => body(env.call('GET', `/api/review-queue?${query}`));
    const seen: string[] = [];
    let answer = await page('limit=2');
    for (;;) {
      seen.push(...ids(answer));
      expect(answer.total).toBe(5);
      if (!answer.next_cursor) break;
      answer = await page(`limit=2&cursor=${answer.next_cursor}`);
    }
    expect(seen).toEqual(['both', 'match', 'related', 'none', 'decided']);
    const first = await page('limit=1&decision=undecided');
    expect(ids(await page(`limit=3&decision=undecided&cursor=${first.next_cursor}`))).toEqual(['match', 'related', 'none']);
  });

  it('a cursor stays right when rows change between pages: a row decided meanwhile moves to the decided part, no undecided row is skipped', async () => {
    await seedQueue();
    const first = await body(env.call('GET', '/api/review-queue?limit=2'));
    expect(ids(first)).toEqual(['both', 'match']);
    await body(env.call('POST', '/api/submissions/both/decision', { decision: '반려' }));
    const rest = await body(env.call('GET', `/api/review-queue?limit=10&cursor=${first.next_cursor}`));
    expect(ids(rest)).toEqual(['related', 'none', 'both', 'decided']);
  });

  it('searches any part of the id or the title, case-insensitive, with filters and paging', async () => {
    await seedQueue();
    const q = async (query: string) => body(env.call('GET', `/api/review-queue?${query}`));
    expect(ids(await q('q=match'))).toEqual(['match']);
    expect(ids(await q('q=TITLE%20OF%20RELATED'))).toEqual(['related']);
    expect(ids(await q('q=of%20'))).toEqual(['both', 'match', 'related', 'none', 'decided']);
    expect(await q('q=of%20&limit=2')).toMatchObject({ total: 5 });
    expect(ids(await q('q=of%20&decision=undecided&level=low'))).toEqual(['related', 'none']);
    // Two characters are below the trigram index and still found.
    expect(ids(await q('q=ch'))).toEqual(['match']);
    expect(ids(await q('q=%25'))).toEqual([]);
    expect(ids(await q('q=%22'))).toEqual([]);
    expect(await q('q=nothing%20like%20it')).toEqual({ items: [], total: 0, next_cursor: null });
    // A retitled submission is found by its new title only.
    await env.db.prepare("UPDATE submissions SET title = '새 제목의 사진' WHERE id = 'none'").run();
    expect(ids(await q(`q=${encodeURIComponent('제목의')}`))).toEqual(['none']);
    expect(ids(await q('q=title%20of%20none'))).toEqual([]);
    expect(ids(await q(`q=${encodeURIComponent('새')}`))).toEqual(['none']);
    expect(ids(await q('q=ne'))).toEqual(['none']);
    // A submission gone from the table is gone from the short search's index too.
    await env.db.prepare("DELETE FROM submissions WHERE id = 'none'").run();
    expect(await q(`q=${encodeURIComponent('새')}`)).toMatchObject({ items: [], total: 0 });
    expect(await env.db.prepare('SELECT COUNT(*) AS n FROM submission_grams WHERE submission_rowid NOT IN (SELECT rowid FROM submissions)').first()).toEqual({
      n: 0,
    });
  });

  it('filters by who the picture shows (a person box or a face), with exact totals, kept up to date by a new analysis', async () => {
    for (const id of ['nobody', 'face', 'person']) await seedSubmission(env, id);
    const analyse = (id: string, faces: FaceRecord[], people: PersonRecord[]) =>
      saveAnalysisStatement(
        env.db,
        id,
        'ab'.repeat(32),
        { phash: PHASH, fingerprints: { variants: [PHASH] }, faces, people, thumb_path: null },
        env.clock.now().toISOString(),
      ).run();
    await analyse('face', [{ box: { x: 1, y: 1, width: 30, height: 30 }, score: 0.9 }], []);
    await analyse('person', [], [{ box: { x: 1, y: 1, width: 30, height: 90 }, score: 0.6, face: null }]);
    const q = async (query: string) => body(env.call('GET', `/api/review-queue?${query}`));
    expect((await q('people=true')).total).toBe(2);
    expect(ids(await q('people=true')).sort()).toEqual(['face', 'person']);
    expect(await q('people=false')).toMatchObject({ total: 1, items: [{ id: 'nobody', people: [], faces: [] }] });
    expect((await q('people=true&decision=undecided')).total).toBe(2);
    await analyse('person', [], []);
    expect(ids(await q('people=true'))).toEqual(['face']);
    expect((await q('people=false')).total).toBe(2);
    expect((await env.call('GET', '/api/review-queue?people=maybe')).status).toBe(400);
  });

  it('filters by enrichment status and by attention match, kept up to date as evidence changes', async () => {
    await seedSubmission(env, 'plain');
    const [attention] = await seedSubmission(env, 'flagged', { evidence: [attentionMatch('ke_1')] });
    await env.db.prepare("UPDATE submissions SET enrichment_status = 'failed' WHERE id = 'plain'").run();
    const q = async (query: string) => body(env.call('GET', `/api/review-queue?${query}`));
    expect(ids(await q('attention=true'))).toEqual(['flagged']);
    expect(ids(await q('attention=false'))).toEqual(['plain']);
    expect(ids(await q('enrichment=failed'))).toEqual(['plain']);
    expect(ids(await q('enrichment=pending'))).toEqual(['flagged']);
    expect((await q('attention=true')).items[0]).toMatchObject({ attention_match: true, evidence_count: 1 });
    await body(env.call('POST', `/api/evidence/${attention.id}/status`, { status: '오탐' }));
    expect(ids(await q('attention=true'))).toEqual([]);
    expect((await q('q=flagged')).items[0]).toMatchObject({ attention_match: false, evidence_count: 1 });
  });

  it('each item is the whole submission record, value for value as the review detail reads it', async () => {
    await seedQueue();
    const now = env.clock.now().toISOString();
    // Cells that a JSON round trip could get wrong: quotes, a backslash, a line break, Korean and an
    // emoji in the title, a thumbnail path that needs escaping in its URL, faces, a note, an error.
    await saveAnalysisStatement(
      env.db,
      'match',
      'ab'.repeat(32),
      {
        phash: PHASH,
        fingerprints: { variants: [PHASH] },
        faces: [{ box: { x: 1.5, y: 2, width: 30, height: 40 }, score: 0.875 }],
        people: [{ box: { x: 0, y: 0, width: 40, height: 90 }, score: 0.5, face: 0 }],
        thumb_path: 'thumbs/사진 #1%.jpg',
      },
      now,
    ).run();
    await env.db.prepare(`UPDATE submissions SET title = ?, analysis_error = ? WHERE id = 'match'`).bind('"따옴표" \\ 줄\n바꿈 📷', 'decoder: <bad>').run();
    await body(env.call('POST', '/api/submissions/decided/decision', { decision: '반려', note: '출처 "불명"' }));
    // A JSON cell that does not parse reads as empty, in the list as in the detail.
    await env.db.prepare(`UPDATE submissions SET faces = 'not json' WHERE id = 'none'`).run();
    const answer = await body(env.call('GET', '/api/review-queue'));
    expect(ids(answer)).toEqual(['both', 'match', 'related', 'none', 'decided']);
    for (const item of answer.items) expect(item).toEqual(await getSubmission(env.db, item.id));
    const match = answer.items[1];
    expect(match).toMatchObject({
      title: '"따옴표" \\ 줄\n바꿈 📷',
      thumb_url: '/media/thumbs/%EC%82%AC%EC%A7%84%20%231%25.jpg',
      media_url: '/media/images/match.png',
    });
    expect(match.faces).toEqual([{ box: { x: 1.5, y: 2, width: 30, height: 40 }, score: 0.875 }]);
    expect(answer.items[3].faces).toEqual([]);
    expect(answer.items[4].decision).toMatchObject({ value: '반려', note: '출처 "불명"' });
  });

  it('refuses malformed paging and filters with 400', async () => {
    for (const query of [
      'limit=-1',
      'limit=0',
      'limit=abc',
      'limit=1.5',
      'limit=',
      'offset=-3',
      'offset=x',
      'decision=approved',
      'level=critical',
      'enrichment=finished',
      'attention=yes',
      'cursor=',
      'cursor=abc',
      `cursor=${Buffer.from('1099x').toString('base64url')}`,
      'q=',
      `q=${'x'.repeat(201)}`,
    ]) {
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
