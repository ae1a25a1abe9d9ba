import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { runAnalyseJob } from '../../lib/matching/analysis.js';
import { listJobs } from '../../lib/repo/jobs.js';
import { createTestEnv, type TestEnv } from '../helpers/env.js';
import { copyFixture, fixturePath, reencoded } from '../helpers/fixtures.js';

let env: TestEnv;
afterEach(async () => env?.dispose());

async function reloadTwins(): Promise<void> {
  env = await createTestEnv();
  copyFixture('camera.png', env.paths.imagesDir, 'first.png');
  writeFileSync(join(env.paths.imagesDir, 'second.jpg'), await reencoded('camera.png', 70));
  copyFixture('coffee.png', env.paths.imagesDir, 'other.png');
  const report = await (await env.call('POST', '/api/submissions/reload')).json();
  expect(report).toMatchObject({ imported: ['first', 'other', 'second'], queued_jobs: 3 });
}

async function analyseJobOf(id: string) {
  return (await listJobs(env.db)).find((j) => j.type === 'analyse' && j.submission_id === id)!;
}

async function internalMatches(id: string): Promise<string[]> {
  const review = await (await env.call('GET', `/api/submissions/${id}/review`)).json();
  return review.evidence.filter((e: { group: string }) => e.group === 'internal').map((e: { matched_submission_id: string }) => e.matched_submission_id);
}

describe('analysis as queued work', () => {
  const orders: [string, (jobs: Awaited<ReturnType<typeof analyseJobOf>>[]) => Promise<unknown>][] = [
    [
      'first, then second',
      async ([a, b, c]) => {
        for (const job of [a, b, c]) await runAnalyseJob(env, job);
      },
    ],
    [
      'second, then first',
      async ([a, b, c]) => {
        for (const job of [b, c, a]) await runAnalyseJob(env, job);
      },
    ],
    ['all at once', async (jobs) => Promise.all(jobs.map((job) => runAnalyseJob(env, job)))],
  ];

  it.each(orders)('two copies of a photo show their internal match on both sides, whatever the completion order: %s', async (_order, run) => {
    await reloadTwins();
    await run(await Promise.all(['first', 'second', 'other'].map(analyseJobOf)));
    expect(await internalMatches('first')).toEqual(['second']);
    expect(await internalMatches('second')).toEqual(['first']);
    expect(await internalMatches('other')).toEqual([]);
  });

  it('running an analysis job again (as after a crash) stores nothing twice and queues one enrichment', async () => {
    await reloadTwins();
    const job = await analyseJobOf('first');
    await env.jobs.drain('analyse');
    const before = await (await env.call('GET', '/api/submissions/first/review')).json();
    expect(await runAnalyseJob(env, job)).toEqual({ status: 'done' });
    const after = await (await env.call('GET', '/api/submissions/first/review')).json();
    expect(after.evidence.map((e: { id: string }) => e.id)).toEqual(before.evidence.map((e: { id: string }) => e.id));
    expect(after.submission.phash).toBe(before.submission.phash);
    const enrich = (await listJobs(env.db)).filter((j) => j.type === 'enrich' && j.submission_id === 'first');
    expect(enrich).toHaveLength(1);
  });

  it('reports progress per job type, and each failed analysis with its reason', async () => {
    env = await createTestEnv();
    copyFixture('camera.png', env.paths.imagesDir);
    copyFixture('coffee.png', env.paths.imagesDir);
    const whole = readFileSync(fixturePath('astronaut.png'));
    // The header reads as a PNG (so the reload takes it); the pixels stop half way.
    writeFileSync(join(env.paths.imagesDir, 'broken.png'), whole.subarray(0, whole.length >> 1));
    await env.call('POST', '/api/submissions/reload');
    const waiting = await (await env.call('GET', '/api/jobs/progress')).json();
    expect(waiting.active).toBe(true);
    expect(waiting.types).toEqual([
      expect.objectContaining({ type: 'analyse', queued: 3, running: 0, done: 0, failed: 0 }),
      expect.objectContaining({ type: 'enrich', queued: 0, running: 0, done: 0 }),
      expect.objectContaining({ type: 'index', queued: 0, running: 0, done: 0 }),
      expect.objectContaining({ type: 'backup', queued: 0, running: 0, done: 0 }),
    ]);
    env.clock.advance(1000);
    await env.jobs.drain('analyse');
    const progress = await (await env.call('GET', '/api/jobs/progress')).json();
    expect(progress.types[0]).toMatchObject({ type: 'analyse', queued: 0, running: 0, done: 2, failed: 1, eta_s: null });
    expect(progress.types[0].rate_per_s).toBeCloseTo(3 / 60, 2);
    // Every analysis, failed ones too, queues its enrichment (which then says it was skipped).
    expect(progress.types[1]).toMatchObject({ type: 'enrich', queued: 3, eta_s: null });
    expect(progress.failures).toEqual([
      expect.objectContaining({
        type: 'analyse',
        submission_id: 'broken',
        error: expect.stringMatching(/^image could not be decoded: (.*libpng read error|the decoder gave no reason)/),
      }),
    ]);
    const bootstrap = await (await env.call('GET', '/api/bootstrap')).json();
    expect(bootstrap.progress).toEqual(progress);
    const broken = await (await env.call('GET', '/api/submissions/broken/review')).json();
    expect(broken.submission).toMatchObject({ analysis_status: 'failed', analysis_error: progress.failures[0].error });
    // A minute after the run, a type at rest shows nothing.
    env.clock.advance(61_000);
    await env.jobs.drain('enrich');
    env.clock.advance(61_000);
    expect(await (await env.call('GET', '/api/jobs/progress')).json()).toMatchObject({
      active: false,
      failures: [],
      types: Array.from({ length: 4 }, () => expect.objectContaining({ done: 0 })),
    });
  });

  it('an analysis the image service fails once (a 500 under load) runs again and is analysed, without a reload', async () => {
    env = await createTestEnv();
    copyFixture('camera.png', env.paths.imagesDir);
    const analyse = env.images.analyse.bind(env.images);
    let calls = 0;
    env.images.analyse = async (bytes) => {
      calls++;
      if (calls === 1) throw new Error('image service: the image service answered HTTP 500');
      return analyse(bytes);
    };
    await env.call('POST', '/api/submissions/reload');
    await env.jobs.drain('analyse');
    expect(await analyseJobOf('camera')).toMatchObject({ status: 'done', attempts: 2, error: null });
    expect((await (await env.call('GET', '/api/submissions/camera/review')).json()).submission).toMatchObject({ analysis_status: 'done' });
  });

  it('an analysis that keeps failing for a reason outside the image (the image service out of reach) fails after three tries, leaves the submission pending, and the next reload analyses it', async () => {
    env = await createTestEnv();
    copyFixture('camera.png', env.paths.imagesDir);
    const analyse = env.images.analyse.bind(env.images);
    env.images.analyse = async () => {
      throw new Error('image service: connect ECONNREFUSED 127.0.0.1:9501');
    };
    await env.call('POST', '/api/submissions/reload');
    await env.jobs.drain('analyse');
    const progress = await (await env.call('GET', '/api/jobs/progress')).json();
    expect(progress.failures).toEqual([
      expect.objectContaining({ type: 'analyse', submission_id: 'camera', error: 'image service: connect ECONNREFUSED 127.0.0.1:9501' }),
    ]);
    expect(await analyseJobOf('camera')).toMatchObject({ status: 'failed', attempts: 3 });
    expect((await (await env.call('GET', '/api/submissions/camera/review')).json()).submission).toMatchObject({
      analysis_status: 'pending',
      analysis_error: null,
    });

    env.images.analyse = analyse;
    expect(await (await env.call('POST', '/api/submissions/reload')).json()).toMatchObject({ unchanged: 1, queued_jobs: 1 });
    await env.jobs.drain('analyse');
    expect((await (await env.call('GET', '/api/submissions/camera/review')).json()).submission).toMatchObject({
      analysis_status: 'done',
      analysis_error: null,
    });
  });

  it('makes a thumbnail of at most 320 px, served under /media/thumbs with the media rules', async () => {
    env = await createTestEnv();
    writeFileSync(
      join(env.paths.imagesDir, 'wide.jpg'),
      await sharp(fixturePath('rocket.jpg')).resize(1600, 1000, { fit: 'fill' }).withMetadata({ orientation: 6 }).jpeg().toBuffer(),
    );
    await env.call('POST', '/api/submissions/reload');
    await env.jobs.drain('analyse');
    const { submission } = await (await env.call('GET', '/api/submissions/wide/review')).json();
    expect(submission.thumb_url).toBe('/media/thumbs/wide.jpg');
    const res = await env.call('GET', submission.thumb_url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/jpeg');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-security-policy')).toContain('sandbox');
    const bytes = Buffer.from(await res.arrayBuffer());
    // Upright per the EXIF orientation (the original is 1600x1000 turned a quarter), and no metadata.
    const thumb = await sharp(bytes).metadata();
    expect(thumb).toMatchObject({ width: 200, height: 320 });
    expect(thumb.orientation).toBeUndefined();
    expect(thumb.exif).toBeUndefined();
    expect(bytes.length).toBeLessThan(30_000);
    const queue = await (await env.call('GET', '/api/review-queue')).json();
    expect(queue.items[0].thumb_url).toBe('/media/thumbs/wide.jpg');
    expect((await env.call('GET', '/media/thumbs/..%2Fsvc.sqlite3')).status).toBe(404);
  });
});
