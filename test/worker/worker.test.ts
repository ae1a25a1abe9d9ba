import { readFileSync } from 'node:fs';
import type { Miniflare } from 'miniflare';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startImageService, type RunningImageService } from '../../image-service.js';
import { buildConfig } from '../../lib/config.js';
import { startLocalWorker } from '../../scripts/local-worker.js';
import { useFakeProviders } from '../helpers/fake-world.js';
import { fixturePath, reencoded } from '../helpers/fixtures.js';
import { until } from '../helpers/until.js';

/**
 * The Worker entry end to end under miniflare: the bundle wrangler would deploy, with local D1, R2
 * and a queue, the image service as its own HTTP server behind the IMAGES binding, and the
 * providers as the test fakes. Nothing of the Node service runs.
 */
const ADMIN = 'worker-admin-token-7c2e41';
const auth = { authorization: `Bearer ${ADMIN}` };

const fakes = useFakeProviders();
let mf: Miniflare;
let images: RunningImageService;
let imageCalls: string[];

beforeAll(async () => {
  fakes.web.addImage('/copy.jpg', await reencoded('camera.png', 60), 'image/jpeg');
  fakes.vision.detection = {
    pagesWithMatchingImages: [
      { url: fakes.web.urlFor('/article'), pageTitle: 'Cameraman - Photo Archive', fullMatchingImages: [{ url: fakes.web.urlFor('/copy.jpg') }] },
    ],
  };
  fakes.web.route('/article', {
    headers: { 'content-type': 'text/html' },
    body: '<html><head><title>Cameraman</title></head><body><img src="/copy.jpg"></body></html>',
  });
  fakes.llm.answer = (prompt) => `웹 페이지에서 같은 사진이 발견되었습니다 [${/"id":"(ev_[a-z0-9]+)"/.exec(prompt)?.[1] ?? 'none'}].`;
  images = await startImageService(buildConfig({}).config, 0);
  imageCalls = [];
  mf = await startLocalWorker({
    imageServiceUrl: images.url,
    onImageCall: (path) => imageCalls.push(path),
    bindings: { SVC_ADMIN_TOKEN: ADMIN, ...fakes.settings },
  });
}, 120_000);

afterAll(async () => {
  await mf?.dispose();
  await images?.stop();
});

const call = async (method: string, path: string, body?: unknown) => {
  const response = await mf.dispatchFetch(`http://localhost${path}`, {
    method,
    headers: { ...auth, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return response;
};
const json = async (method: string, path: string, body?: unknown) => {
  const response = await call(method, path, body);
  expect(response.status, `${method} ${path}`).toBeLessThan(300);
  return response.json() as Promise<any>;
};

/** The Worker's jobs run under miniflare beside the test: its state is read every 250 ms. */
const untilWorker = <T>(what: string, read: () => Promise<T>, done: (value: T) => boolean) => until(what, read, done, { everyMs: 250 });

describe('the Worker under miniflare (D1, R2, Queues, the image service)', () => {
  it('takes a submission from R2 through queued analysis and enrichment to a decision and the watchlist', async () => {
    const bucket = await mf.getR2Bucket('MEDIA');
    await bucket.put('submissions/images/camera.png', new Uint8Array(readFileSync(fixturePath('camera.png'))));
    const withExif = await sharp(readFileSync(fixturePath('rocket.jpg')))
      .withExif({ IFD0: { Copyright: 'owner-in-exif-4411' } })
      .jpeg()
      .toBuffer();
    await bucket.put('submissions/images/rocket.jpg', new Uint8Array(withExif));

    const report = await json('POST', '/api/submissions/reload');
    expect(report).toMatchObject({ imported: ['camera', 'rocket'], rejected: [], queued_jobs: 2 });
    expect((await json('POST', '/api/submissions/reload')).unchanged).toBe(2);

    const progress = await untilWorker(
      'the queued jobs',
      () => json('GET', '/api/jobs/progress'),
      (p) => p.types.every((t: { queued: number; running: number }) => t.queued === 0 && t.running === 0) && p.types[1].done + p.types[1].failed === 2,
    );
    expect(progress.types[0]).toMatchObject({ type: 'analyse', done: 2, failed: 0 });

    const review = await json('GET', '/api/submissions/camera/review');
    expect(review.submission).toMatchObject({ analysis_status: 'done', enrichment_status: 'done', thumb_url: '/media/thumbs/camera.jpg' });
    expect(review.submission.phash).toMatch(/^[0-9a-f]{16}$/);
    expect(review.evidence).toContainEqual(expect.objectContaining({ group: 'web_match', image_url: fakes.web.urlFor('/copy.jpg'), matched: true }));
    expect(review.captures).toHaveLength(1);
    expect(review.evidence.find((e: { kind: string }) => e.kind === 'summary')).toBeTruthy();
    expect(imageCalls).toEqual(expect.arrayContaining(['/v1/probe', '/v1/analyse', '/v1/derive', '/v1/fingerprints']));

    // What left for web detection is the derived copy, without the owner's EXIF.
    const sent = fakes.vision.sentImages();
    expect(sent.length).toBeGreaterThanOrEqual(2);
    for (const image of sent) expect(image.includes(Buffer.from('owner-in-exif-4411'))).toBe(false);

    const thumb = await call('GET', '/media/thumbs/camera.jpg');
    expect(thumb.status).toBe(200);
    expect(thumb.headers.get('content-type')).toBe('image/jpeg');
    expect(thumb.headers.get('content-security-policy')).toContain('sandbox');
    const { width, height } = await sharp(Buffer.from(await thumb.arrayBuffer())).metadata();
    expect(Math.max(width!, height!)).toBeLessThanOrEqual(320);

    const queue = await json('GET', '/api/review-queue');
    expect(queue.total).toBe(2);
    const decided = await json('POST', '/api/submissions/camera/decision', { decision: '반려', note: 'worker e2e' });
    expect(decided.submission.decision).toMatchObject({ value: '반려', note: 'worker e2e' });
    const entry = decided.knowledge_entry;
    expect(entry).toMatchObject({ state: '주의 후보' });
    await json('POST', `/api/knowledge/${entry.id}/promote-watchlist`);
    const watchlist = await json('GET', '/api/knowledge?state=확정 DB 편입');
    expect(watchlist.entries.map((e: { submission_id: string }) => e.submission_id)).toEqual(['camera']);

    const page = await mf.dispatchFetch('http://localhost/');
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<script');
  }, 120_000);

  it('requeues a job its consumer died in on the sweep trigger, and runs retention on the daily one', async () => {
    const db = (await mf.getD1Database('DB')) as unknown as {
      prepare(sql: string): { bind(...v: unknown[]): { run(): Promise<unknown>; first<T>(): Promise<T | null> } };
    };
    const long = '2026-01-01T00:00:00.000Z';
    // As if a consumer took rocket's enrichment and its invocation ended before the job did.
    await db.prepare(`UPDATE submissions SET enrichment_status = 'running' WHERE id = 'rocket'`).bind().run();
    await db
      .prepare(
        `INSERT INTO jobs (type, submission_id, status, attempts, payload, run_token, created_at, started_at) VALUES ('enrich', 'rocket', 'running', 1, '{}', 'lost', ?, ?)`,
      )
      .bind(long, long)
      .run();
    const worker = await mf.getWorker();
    await worker.scheduled({ cron: '*/5 * * * *' });
    const stale = () =>
      db.prepare(`SELECT status, attempts FROM jobs WHERE run_token IS NULL AND created_at = ?`).bind(long).first<{ status: string; attempts: number }>();
    expect(await untilWorker('the stale job to run again', stale, (job) => job?.status === 'done')).toMatchObject({ status: 'done', attempts: 2 });
    expect((await json('GET', '/api/submissions/rocket/review')).submission.enrichment_status).toBe('done');

    await worker.scheduled({ cron: '0 3 * * *' });
    const events = await json('GET', '/api/audit-events?limit=5');
    expect(events.events.map((e: { action: string }) => e.action)).toContain('retention.run');
  }, 60_000);

  it('answers bad input in the error shape and keeps going', async () => {
    const anonymous = await mf.dispatchFetch('http://localhost/api/review-queue');
    expect(anonymous.status).toBe(401);
    const unknown = await call('GET', '/api/submissions/nobody/review');
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('not_found');
    const bucket = await mf.getR2Bucket('MEDIA');
    await bucket.put('submissions/images/notes.jpg', 'this is text, not a picture');
    const report = await json('POST', '/api/submissions/reload');
    expect(report.rejected).toEqual([{ file: 'images/notes.jpg', id: 'notes', reason: 'not an image' }]);
    expect((await call('GET', '/health')).status).toBe(200);
  }, 60_000);

  it('reads in one reload only the new files that one invocation’s 1,000 subrequests allow, and the next reload goes on', async () => {
    const bucket = await mf.getR2Bucket('MEDIA');
    const names = Array.from({ length: 500 }, (_, i) => `submissions/images/t${String(i).padStart(3, '0')}.jpg`);
    // Files the image service refuses: no analysis follows, only the reads and probes are counted.
    for (const name of names) await bucket.put(name, `text ${name}, not a picture`);
    const probes = () => imageCalls.filter((path) => path === '/v1/probe').length;
    const before = probes();
    // 1,000 less the registry lookup, one listing page and a reserve of 10, at 2 a file (read, probe).
    const first = await json('POST', '/api/submissions/reload');
    expect(first).toMatchObject({ imported: [], remaining: 6 });
    expect(probes() - before).toBe(494);
    const second = await json('POST', '/api/submissions/reload');
    expect(second).toMatchObject({ imported: [], remaining: 0 });
    expect(probes() - before).toBe(500);
    // Every refusal is reported each time, the earlier ones from the record without a read: the
    // answer names the first 100, its kept report all of them.
    expect(second.rejected).toHaveLength(100);
    const kept = await json('GET', `/api/reloads/${second.report_id}?list=rejected&limit=5000`);
    expect(kept.items).toHaveLength(second.counts.rejected);
    expect(kept.items.filter((r: { reason: string }) => r.reason === 'not an image')).toHaveLength(501);
    for (const name of names) await bucket.delete(name);
  }, 120_000);
});
