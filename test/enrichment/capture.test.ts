import { createHash } from 'node:crypto';
import { existsSync, readFileSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MEDIA_HEADERS } from '../../lib/http/media.js';
import type { PageCaptureRow } from '../../lib/repo/captures.js';
import type { Evidence } from '../../lib/repo/evidence.js';
import { imageSearchItem } from '../fakes/index.js';
import { useFakeProviders } from '../helpers/fake-world.js';
import { createTestEnv, type TestEnv } from '../helpers/env.js';
import { copyFixture, reencoded } from '../helpers/fixtures.js';
import { seedSubmission } from '../review/seed.js';

const fakes = useFakeProviders({ resetEach: true });
let env: TestEnv;
let copy: Buffer;

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const DAY = 24 * 60 * 60 * 1000;
const ARTICLE = '<!doctype html><html><head><title>Cameraman</title><script>alert(1)</script></head><body><img src="/copy.jpg"> 사진 기사</body></html>';
const PAGE_HEADERS = { 'content-type': 'text/html; charset=utf-8', date: 'Tue, 01 Sep 2026 10:00:00 GMT', 'last-modified': 'Mon, 31 Aug 2026 08:30:00 GMT' };

beforeAll(async () => {
  copy = await reencoded('camera.png', 60);
});

beforeEach(() => {
  fakes.web.addImage('/copy.jpg', copy, 'image/jpeg');
  fakes.web.addRedirect('/article', fakes.web.urlFor('/article-final'), 301);
  fakes.web.route('/article-final', { headers: PAGE_HEADERS, body: ARTICLE });
  fakes.web.route('/gone', { status: 404, headers: { 'content-type': 'text/html' }, body: 'no' });
  fakes.vision.detection = {
    pagesWithMatchingImages: [
      { url: fakes.web.urlFor('/article'), pageTitle: 'Cameraman - Photo Archive', fullMatchingImages: [{ url: fakes.web.urlFor('/copy.jpg') }] },
      { url: fakes.web.urlFor('/gone'), pageTitle: 'A removed post', fullMatchingImages: [{ url: fakes.web.urlFor('/copy.jpg?second') }] },
    ],
  };
  fakes.llm.answer = (prompt) => `웹 페이지에서 같은 사진이 발견되었습니다 [${/"id":"(ev_[a-z0-9]+)"/.exec(prompt)?.[1] ?? 'none'}].`;
});
afterEach(async () => env?.dispose());

const settings = (overrides: Record<string, string> = {}) => ({
  ...fakes.settings,
  ...overrides,
});

async function enrichCamera() {
  env = await createTestEnv(settings());
  copyFixture('camera.png', env.paths.imagesDir);
  await env.call('POST', '/api/submissions/reload');
  await env.jobs.drain();
  return (await env.call('GET', '/api/submissions/camera/review')).json() as Promise<{ submission: { enrichment_status: string }; evidence: Evidence[] }>;
}

const captures = async () => (await env.db.prepare('SELECT * FROM page_captures ORDER BY fetched_at, id').all<PageCaptureRow>()).results;

describe('page capture in enrichment', () => {
  it('keeps the page of every verified web match as fetched, with where it ended, what the server said and its hash', async () => {
    const review = await enrichCamera();
    expect(review.submission.enrichment_status).toBe('done');
    const article = review.evidence.find((e) => e.group === 'web_match' && e.url === fakes.web.urlFor('/article'))!;
    expect(article).toBeDefined();

    const [capture, ...others] = await captures();
    expect(others).toHaveLength(0);
    expect(capture).toMatchObject({
      evidence_id: article.id,
      submission_id: 'camera',
      page_url: fakes.web.urlFor('/article'),
      final_url: fakes.web.urlFor('/article-final'),
      http_status: 200,
      content_type: 'text/html; charset=utf-8',
      date_header: PAGE_HEADERS.date,
      last_modified: PAGE_HEADERS['last-modified'],
      bytes: Buffer.byteLength(ARTICLE),
      sha256: sha256(ARTICLE),
      image_sha256: sha256(copy),
      fetched_at: '2026-11-21T03:00:00.000Z',
    });
    const stored = readFileSync(join(env.dataDir, capture.media_path!));
    expect(stored.toString('utf8')).toBe(ARTICLE);
    expect(sha256(stored)).toBe(capture.sha256);
    // The matched image's own download is what image_sha256 names.
    expect(sha256(readFileSync(join(env.dataDir, article.local_media_url!.slice('/media/'.length))))).toBe(capture.image_sha256);
  });

  it('turns a page that cannot be fetched into failure evidence and goes on', async () => {
    const review = await enrichCamera();
    const gone = review.evidence.find((e) => e.group === 'web_match' && e.url === fakes.web.urlFor('/gone'))!;
    const failure = review.evidence.find((e) => e.kind === 'page_capture_failed')!;
    expect(failure).toMatchObject({
      group: 'failures',
      source: 'global_vision',
      url: fakes.web.urlFor('/gone'),
      source_evidence_ids: [gone.id],
      counts_toward_score: false,
    });
    expect(failure.error).toEqual({ code: 'http_error', message: 'the server answered HTTP 404' });
    expect(review.submission.enrichment_status).toBe('done');
    // The other page was kept and the summary was still written after the failure.
    expect(await captures()).toHaveLength(1);
    expect(review.evidence.some((e) => e.kind === 'summary')).toBe(true);
    // A rerun adds no second failure for the same page.
    await env.call('POST', '/api/submissions/camera/rerun-enrichment', {});
    const again = (await (await env.call('GET', '/api/submissions/camera/review')).json()) as { evidence: Evidence[] };
    expect(again.evidence.filter((e) => e.kind === 'page_capture_failed')).toHaveLength(1);
  });

  it('serves a capture only as sandboxed plain text, never as a page', async () => {
    await enrichCamera();
    const [capture] = await captures();
    const response = await env.call('GET', `/api/captures/${capture.id}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(response.headers.get('content-security-policy')).toBe(MEDIA_HEADERS['content-security-policy']);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Buffer.from(await response.arrayBuffer()).toString('utf8')).toBe(ARTICLE);

    const unknown = await env.call('GET', '/api/captures/pc_nothing');
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-security-policy')).toBe(MEDIA_HEADERS['content-security-policy']);
    expect(await unknown.json()).toEqual({ error: { code: 'not_found', message: 'no such page capture' } });
    expect((await env.call('GET', `/api/captures/${capture.id}`, undefined, { authorization: '' })).status).toBe(401);
  });
});

describe('page capture on request', () => {
  it('captures any web evidence with a page, audits who asked, and refuses what has no page', async () => {
    const review = await enrichCamera();
    const related = review.evidence.find((e) => e.kind === 'page_with_matching_image' && e.url === fakes.web.urlFor('/article'))!;
    const response = await env.call('POST', `/api/evidence/${related.id}/capture`);
    expect(response.status).toBe(200);
    const answer = await response.json();
    expect(answer.evidence_added).toEqual([]);
    expect(answer.capture).toMatchObject({
      evidence_id: related.id,
      final_url: fakes.web.urlFor('/article-final'),
      http_status: 200,
      sha256: sha256(ARTICLE),
      media_url: `/api/captures/${answer.capture.id}`,
    });
    const [event] = (await (await env.call('GET', '/api/audit-events?limit=1')).json()).events;
    expect(event).toMatchObject({
      action: 'evidence.capture',
      target_type: 'evidence',
      target_id: related.id,
      details: { submission_id: 'camera', capture_id: answer.capture.id, sha256: sha256(ARTICLE) },
    });
    expect(event.actor.type).toBe('admin_token');

    const summary = review.evidence.find((e) => e.kind === 'summary')!;
    const refused = await env.call('POST', `/api/evidence/${summary.id}/capture`);
    expect(refused.status).toBe(409);
    expect((await refused.json()).error.code).toBe('conflict');
    const unknown = await env.call('POST', '/api/evidence/ev_nothing/capture');
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error).toEqual({ code: 'not_found', message: 'unknown evidence: ev_nothing' });
  });

  it('stores a failed capture as failure evidence and loses nothing stored', async () => {
    const review = await enrichCamera();
    const related = review.evidence.find((e) => e.kind === 'page_with_matching_image' && e.url === fakes.web.urlFor('/article'))!;
    const before = await captures();
    fakes.web.route('/article-final', { status: 503, body: 'down' });
    const answer = await (await env.call('POST', `/api/evidence/${related.id}/capture`)).json();
    expect(answer.capture).toBeNull();
    expect(answer.evidence_added).toHaveLength(1);
    expect(answer.evidence_added[0]).toMatchObject({
      kind: 'page_capture_failed',
      group: 'failures',
      source_evidence_ids: [related.id],
      error: { code: 'http_error' },
    });
    expect(await captures()).toEqual(before);
    expect(readFileSync(join(env.dataDir, before[0].media_path!), 'utf8')).toBe(ARTICLE);
    const after = (await (await env.call('GET', '/api/submissions/camera/review')).json()) as { evidence: Evidence[] };
    expect(after.evidence).toHaveLength(review.evidence.length + 1);
  });

  it('captures the page of a match an operator found by manual search, and records a failed one', async () => {
    await enrichCamera();
    const before = (await captures()).length;
    fakes.search.results.image = [
      imageSearchItem('hand found', fakes.web.urlFor('/copy.jpg'), fakes.web.urlFor('/article')),
      imageSearchItem('gone', fakes.web.urlFor('/copy.jpg?gone'), fakes.web.urlFor('/gone')),
    ];
    const body = await (
      await env.call('POST', '/api/search/manual', { provider: 'global_search', query: 'cameraman', type: 'image', submission_id: 'camera' })
    ).json();
    const found = body.evidence.find((e: Evidence) => e.title === 'hand found');
    expect(found).toMatchObject({ group: 'web_match', url: fakes.web.urlFor('/article') });
    const kept = (await captures()).filter((c) => c.evidence_id === found.id);
    expect(kept).toHaveLength(1);
    expect(kept[0]).toMatchObject({ final_url: fakes.web.urlFor('/article-final'), http_status: 200, sha256: sha256(ARTICLE) });
    expect(await captures()).toHaveLength(before + 1);
    const review = await (await env.call('GET', '/api/submissions/camera/review')).json();
    expect(review.captures.map((c: { id: string }) => c.id)).toEqual((await captures()).map((c) => c.id));
    expect(review.captures.find((c: { evidence_id: string }) => c.evidence_id === found.id)).toMatchObject({
      sha256: sha256(ARTICLE),
      media_url: `/api/captures/${kept[0].id}`,
    });
    const gone = body.evidence.find((e: Evidence) => e.title === 'gone');
    expect(body.evidence).toContainEqual(expect.objectContaining({ kind: 'page_capture_failed', group: 'failures', source_evidence_ids: [gone.id] }));
  });

  it('keeps the download rules: private addresses refused, the size cap enforced', async () => {
    env = await createTestEnv(settings({ SVC_ALLOW_PRIVATE_DOWNLOADS: 'false' }));
    const [local] = await seedSubmission(env, 'seeded', {
      evidence: [{ source: 'global_search', kind: 'web_result', group: 'web_related', title: 'inside', url: fakes.web.urlFor('/article') }],
    });
    const blocked = await (await env.call('POST', `/api/evidence/${local.id}/capture`)).json();
    expect(blocked.capture).toBeNull();
    expect(blocked.evidence_added[0].error.code).toBe('blocked_address');
    expect(fakes.web.requests).toHaveLength(0);
    await env.dispose();

    env = await createTestEnv(settings({ SVC_DOWNLOAD_MAX_BYTES: '2048' }));
    fakes.web.route('/big', { headers: { 'content-type': 'text/html' }, body: `<p>${'x'.repeat(10_000)}</p>` });
    const [big] = await seedSubmission(env, 'seeded', {
      evidence: [{ source: 'regional', kind: 'blog_result', group: 'web_related', title: 'big', url: fakes.web.urlFor('/big') }],
    });
    const tooLarge = await (await env.call('POST', `/api/evidence/${big.id}/capture`)).json();
    expect(tooLarge.evidence_added[0].error.code).toBe('too_large');
    expect(await captures()).toEqual([]);
  });
});

describe('retention of page captures', () => {
  it('deletes old captures of undecided cases and keeps those of decided cases until the case goes', async () => {
    env = await createTestEnv(settings({ SVC_EVIDENCE_RETENTION_DAYS: '30' }));
    const page = { source: 'global_search' as const, kind: 'web_result', group: 'web_related' as const, title: 'page', url: fakes.web.urlFor('/article') };
    const [open] = await seedSubmission(env, 'open', { evidence: [page] });
    const [decided] = await seedSubmission(env, 'decided', { evidence: [page] });
    const openCapture = (await (await env.call('POST', `/api/evidence/${open.id}/capture`)).json()).capture;
    const decidedCapture = (await (await env.call('POST', `/api/evidence/${decided.id}/capture`)).json()).capture;
    expect((await env.call('POST', '/api/submissions/decided/decision', { decision: '승인' })).status).toBe(200);
    env.clock.advance(31 * DAY);
    // Both files are old on disk too, so the sweep of unreferenced files would take them if it could.
    const rows = await captures();
    const files = Object.fromEntries(rows.map((r) => [r.id, join(env.dataDir, r.media_path!)]));
    const old = new Date(env.clock.now().getTime() - 31 * DAY);
    for (const file of Object.values(files)) utimesSync(file, old, old);

    expect((await env.call('POST', '/api/retention/run')).status).toBe(200);
    const after = Object.fromEntries((await captures()).map((r) => [r.id, r]));
    expect(after[openCapture.id]).toMatchObject({ media_path: null, sha256: sha256(ARTICLE), final_url: fakes.web.urlFor('/article-final') });
    expect(existsSync(files[openCapture.id])).toBe(false);
    expect(after[decidedCapture.id].media_path).not.toBeNull();
    expect(existsSync(files[decidedCapture.id])).toBe(true);
    expect((await env.call('GET', `/api/captures/${openCapture.id}`)).status).toBe(404);
    expect((await env.call('GET', `/api/captures/${decidedCapture.id}`)).status).toBe(200);
    const [event] = (await (await env.call('GET', '/api/audit-events?limit=1')).json()).events;
    expect(event).toMatchObject({ action: 'retention.run', details: { page_captures: 1 } });
  });
});
