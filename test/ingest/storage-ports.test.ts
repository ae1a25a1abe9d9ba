import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reload } from '../../lib/ingest/reload.js';
import { runRetention } from '../../lib/review/retention.js';
import { countedBlobStore, subrequestBudget } from '../../lib/net/subrequests.js';
import { OWED_PAGE } from '../../lib/repo/jobs.js';
import { saveDerivedPath } from '../../lib/repo/submissions.js';
import { createTestEnv, type TestEnv } from '../helpers/env.js';
import { fixturePath, reencoded } from '../helpers/fixtures.js';
import { until } from '../helpers/until.js';
import { body, seedSubmission, webMatch } from '../review/seed.js';

/**
 * Reload, the job loops, media serving and retention, with every image put and read through the
 * blob port only, so the same file runs on the SQLite file and data folder and, in the second run
 * (vitest.d1-r2.config.ts), on D1 and R2 as the Worker has them.
 */
let env: TestEnv;
beforeEach(async () => {
  env = await createTestEnv({ SVC_EVIDENCE_RETENTION_DAYS: '30' });
  // Stored objects carry the real time of their writing; retention compares it with the clock.
  env.clock.set(new Date().toISOString());
});
afterEach(async () => env.dispose());

const DAY = 24 * 60 * 60 * 1000;

interface Job {
  type: string;
  status: string;
  submission_id: string;
}

async function jobs(): Promise<Job[]> {
  return (await body(env.call('GET', '/api/jobs'))).jobs;
}

/** Waits for the running job loops to finish every analysis (a generous bound: they take well under a second each). */
const analysesFinished = (): Promise<Job[]> =>
  until('the job loops to finish every analysis', jobs, (all) => all.every((j) => j.type !== 'analyse' || j.status === 'done' || j.status === 'failed'));

async function internalMatches(id: string): Promise<string[]> {
  const review = await body(env.call('GET', `/api/submissions/${id}/review`));
  return review.evidence.filter((e: { group: string }) => e.group === 'internal').map((e: { matched_submission_id: string }) => e.matched_submission_id);
}

describe('submissions in blob storage', () => {
  it('reload imports the images and the registry, the job loops analyse them, and /media serves what was stored', async () => {
    const camera = readFileSync(fixturePath('camera.png'));
    await env.blobs.put('submissions/images/camera.png', camera);
    await env.blobs.put('submissions/images/camera_copy.jpg', await reencoded('camera.png', 70));
    await env.blobs.put('submissions/images/coffee.png', readFileSync(fixturePath('coffee.png')));
    const entry = { id: 'SUB-001', title: 'Coffee', file: 'images/coffee.png', width: 512, height: 512, submitted_at: '2026-03-01 09:30' };
    await env.blobs.put('submissions/submissions.json', Buffer.from(JSON.stringify([entry])));
    env.jobs.start();

    const report = await body(env.call('POST', '/api/submissions/reload'));
    expect(report.imported.sort()).toEqual(['SUB-001', 'camera', 'camera-copy']);
    expect(report).toMatchObject({ updated: [], unchanged: 0, rejected: [], queued_jobs: 3 });
    expect(
      (await analysesFinished())
        .filter((j) => j.type === 'analyse')
        .map((j) => [j.submission_id, j.status])
        .sort(),
    ).toEqual([
      ['SUB-001', 'done'],
      ['camera', 'done'],
      ['camera-copy', 'done'],
    ]);
    expect(await internalMatches('camera')).toEqual(['camera-copy']);
    expect(await internalMatches('camera-copy')).toEqual(['camera']);
    expect(await internalMatches('SUB-001')).toEqual([]);

    const image = await env.call('GET', '/media/images/camera.png');
    expect(image.status).toBe(200);
    expect(Buffer.from(await image.arrayBuffer()).equals(camera)).toBe(true);
    const { submission } = await body(env.call('GET', '/api/submissions/camera/review'));
    const thumb = await env.call('GET', submission.thumb_url);
    expect(thumb.status).toBe(200);
    expect(await sharp(Buffer.from(await thumb.arrayBuffer())).metadata()).toMatchObject({ format: 'jpeg', width: 320 });
    expect((await env.call('GET', '/media/images/missing.png')).status).toBe(404);

    expect(await body(env.call('POST', '/api/submissions/reload'))).toMatchObject({ imported: [], updated: [], unchanged: 3, queued_jobs: 0 });
    // New bytes under the same key: analysed again, and the match that no longer holds is gone.
    await env.blobs.put('submissions/images/camera_copy.jpg', readFileSync(fixturePath('rocket.jpg')));
    expect(await body(env.call('POST', '/api/submissions/reload'))).toMatchObject({ imported: [], updated: ['camera-copy'], queued_jobs: 1 });
    await analysesFinished();
    expect(await internalMatches('camera')).toEqual([]);
  });

  it('an image whose pixels stop half way fails its analysis with the reason, and the others are analysed', async () => {
    const whole = readFileSync(fixturePath('astronaut.png'));
    await env.blobs.put('submissions/images/coffee.png', readFileSync(fixturePath('coffee.png')));
    // The header reads as a PNG (so the reload takes it); the pixels stop half way.
    await env.blobs.put('submissions/images/broken.png', whole.subarray(0, whole.length >> 1));
    expect(await body(env.call('POST', '/api/submissions/reload'))).toMatchObject({ rejected: [], queued_jobs: 2 });
    await env.jobs.drain('analyse');
    const progress = await body(env.call('GET', '/api/jobs/progress'));
    expect(progress.types[0]).toMatchObject({ type: 'analyse', queued: 0, done: 1, failed: 1 });
    expect(progress.failures).toEqual([
      expect.objectContaining({
        type: 'analyse',
        submission_id: 'broken',
        error: expect.stringMatching(/^image could not be decoded: (.*libpng read error|the decoder gave no reason)/),
      }),
    ]);
    expect((await body(env.call('GET', '/api/submissions/coffee/review'))).submission).toMatchObject({ analysis_status: 'done' });
  });

  it('a reload reads what its subrequest budget allows and leaves the rest counted; a refused file is read once', async () => {
    const tiny = await sharp({ create: { width: 16, height: 16, channels: 3, background: '#7a5' } })
      .png()
      .toBuffer();
    for (let i = 0; i < 8; i++) await env.blobs.put(`submissions/images/p${i}.png`, Buffer.concat([tiny, Buffer.from([i])]));
    await env.blobs.put('submissions/images/a-notes.png', Buffer.from('this is text, not a picture'));
    // A budget of 20 subrequests: the listing and the registry lookup, a reserve of 10, and 2 per file read.
    const invocation = () => {
      const subrequests = subrequestBudget(20);
      return { ...env, blobs: countedBlobStore(env.blobs, subrequests), subrequests };
    };
    const first = await reload(invocation());
    expect(first).toMatchObject({ imported: ['p0', 'p1', 'p2'], rejected: [{ file: 'images/a-notes.png', reason: 'not an image' }], remaining: 5 });
    const second = await reload(invocation());
    expect(second).toMatchObject({
      imported: ['p3', 'p4', 'p5', 'p6'],
      unchanged: 3,
      rejected: [{ file: 'images/a-notes.png', reason: 'not an image' }],
      remaining: 1,
    });
    expect(await reload(invocation())).toMatchObject({ imported: ['p7'], unchanged: 7, remaining: 0 });
    expect(await env.db.prepare("SELECT COUNT(*) AS n FROM jobs WHERE type = 'analyse'").first()).toEqual({ n: 8 });
  });

  it('a full pass beside more refused files than it reads a page at a time refuses each again without reading it', async () => {
    const names = Array.from({ length: 2050 }, (_, i) => `note-${String(i).padStart(4, '0')}.png`);
    for (const [i, name] of names.entries()) await env.blobs.put(`submissions/images/${name}`, Buffer.from(`text, not a picture: ${i}`));
    expect((await reload(env)).counts.rejected).toBe(names.length);
    // A budget that reads no file: a refusal not found again among the kept ones would be read, or left for later.
    const subrequests = subrequestBudget(20);
    const again = await reload({ ...env, blobs: countedBlobStore(env.blobs, subrequests), subrequests });
    expect(again).toMatchObject({ counts: { imported: 0, updated: 0, rejected: names.length }, remaining: 0 });
  });

  it('a reload over more pending submissions than a page of owed work queues each its job exactly once', async () => {
    // Past one page for both kinds: analyses never finished (s…) and enrichments never queued (e…).
    const pending = OWED_PAGE + 700;
    const analysed = OWED_PAGE + 300;
    const now = env.clock.now().toISOString();
    const insert = (prefix: string, count: number, analysis: string) =>
      env.db
        .prepare(
          `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
           INSERT INTO submissions (id, title, file, origin, submitted_at, submitted_at_epoch, analysis_status, enrichment_status, created_at, updated_at)
           SELECT printf('${prefix}%05d', i), 'owed', printf('images/${prefix}%05d.png', i), 'registry', '2026-11-20 09:30', 0, ?, 'pending', ?, ? FROM n`,
        )
        .bind(count, analysis, now, now)
        .run();
    await insert('s', pending, 'pending');
    await insert('e', analysed, 'done');
    // Every tenth already has its job waiting, one on each side of the first page's end among them.
    await env.db
      .prepare(
        `INSERT INTO jobs (type, submission_id, status, payload, created_at)
         SELECT CASE substr(id, 1, 1) WHEN 's' THEN 'analyse' ELSE 'enrich' END, id, 'queued', '{}', ? FROM submissions
         WHERE CAST(substr(id, 2) AS INTEGER) % 10 = 0 OR CAST(substr(id, 2) AS INTEGER) IN (?, ?)`,
      )
      .bind(now, OWED_PAGE, OWED_PAGE + 1)
      .run();
    const waiting = await env.db.prepare('SELECT COUNT(*) AS n FROM jobs').first<{ n: number }>();

    const first = await reload(env);
    expect(first.queued_jobs).toBe(pending + analysed - waiting!.n);
    const jobsOf = (type: string) =>
      env.db
        .prepare('SELECT COUNT(*) AS jobs, COUNT(DISTINCT submission_id) AS submissions, MIN(submission_id) AS first FROM jobs WHERE type = ?')
        .bind(type)
        .first();
    expect(await jobsOf('analyse')).toEqual({ jobs: pending, submissions: pending, first: 's00001' });
    expect(await jobsOf('enrich')).toEqual({ jobs: analysed, submissions: analysed, first: 'e00001' });
    expect((await reload(env)).queued_jobs).toBe(0);
  });

  it('a reload sent the moment a burst of puts has landed imports every one of them', async () => {
    await env.blobs.put('submissions/images/first.png', readFileSync(fixturePath('coffee.png')));
    await reload(env);
    const tiny = await sharp({ create: { width: 16, height: 16, channels: 3, background: '#35a' } })
      .png()
      .toBuffer();
    const names = Array.from({ length: 40 }, (_, i) => `burst-${i}`);
    await Promise.all(names.map((name, i) => env.blobs.put(`submissions/images/${name}.png`, Buffer.concat([tiny, Buffer.from([i])]))));
    const report = await body(env.call('POST', '/api/submissions/reload'));
    expect(report.imported.sort()).toEqual(names.sort());
    expect(report).toMatchObject({ unchanged: 1, rejected: [], remaining: 0 });
  });
});

describe('retention on blob storage', () => {
  async function seedWithMedia(id: string) {
    await env.blobs.put(`derived/${id}.jpg`, Buffer.from('derived bytes'));
    await env.blobs.put(`evidence/${id}/result.jpg`, readFileSync(fixturePath('rocket.jpg')));
    await seedSubmission(env, id, { evidence: [{ ...webMatch(), local_media_path: `evidence/${id}/result.jpg` }] });
    await saveDerivedPath(env.db, id, `derived/${id}.jpg`, env.clock.now().toISOString());
  }

  it('deletes expired downloads, derived copies and old unreferenced objects, and nothing else', async () => {
    await seedWithMedia('old');
    env.clock.advance(20 * DAY);
    await seedWithMedia('fresh');
    await env.blobs.put('derived/crops/face-1.jpg', Buffer.from('a face crop'));
    await env.blobs.put('submissions/images/own.png', Buffer.from('a submitted image'));
    env.clock.advance(11 * DAY);

    expect(await body(env.call('POST', '/api/retention/run'))).toMatchObject({ evidence_images: 1, derived_images: 1, unreferenced_files: 1, failed_files: 0 });
    for (const key of ['evidence/old/result.jpg', 'derived/old.jpg', 'derived/crops/face-1.jpg']) expect(await env.blobs.head(key)).toBeNull();
    for (const key of ['evidence/fresh/result.jpg', 'derived/fresh.jpg', 'submissions/images/own.png']) expect(await env.blobs.head(key)).not.toBeNull();
    expect((await env.call('GET', '/media/evidence/old/result.jpg')).status).toBe(404);
    expect((await env.call('GET', '/media/evidence/fresh/result.jpg')).status).toBe(200);
    const review = await body(env.call('GET', '/api/submissions/old/review'));
    expect(review.evidence[0]).toMatchObject({ local_media_url: null, image_url: 'https://pages.example/photo.jpg' });
    expect(await runRetention(env)).toMatchObject({ evidence_images: 0, derived_images: 0, unreferenced_files: 0 });
  });
});
