import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useFakeProviders } from '../helpers/fake-world.js';
import { createTestEnv, type TestEnv } from '../helpers/env.js';
import { fillableDisk } from '../helpers/full-disk.js';
import { fixturePath, reencoded } from '../helpers/fixtures.js';
import { body, refusal, seedSubmission, snapshot, webMatch } from '../review/seed.js';

/**
 * A full disk as the blob port meets it: every write refused with ENOSPC while reads go on. Runs on
 * the data folder and, in the second run (vitest.d1-r2.config.ts), on R2. The same on a real small
 * filesystem, with the SQLite file filling too: test/foundation/full-disk.test.ts.
 */
const fakes = useFakeProviders({ resetEach: true });
let env: TestEnv;
let disk: { full: boolean };

beforeEach(async () => {
  env = await createTestEnv(fakes.settings);
  disk = fillableDisk(env);
});
afterEach(async () => env.dispose());

const review = async (id: string) => body(env.call('GET', `/api/submissions/${id}/review`));
const jobsOf = async (type: string) => (await body(env.call('GET', '/api/jobs'))).jobs.filter((j: { type: string }) => j.type === type);

async function reloadCamera() {
  await env.blobs.put('submissions/images/camera.png', readFileSync(fixturePath('camera.png')));
  expect((await body(env.call('POST', '/api/submissions/reload'))).imported).toEqual(['camera']);
}

describe('a full disk, through the storage port', () => {
  it('an analysis that meets it waits in the queue with the reason, reads go on, and it runs once there is room', async () => {
    await reloadCamera();
    disk.full = true;
    await expect(env.jobs.drain('analyse')).rejects.toThrow(/waits for storage/);
    const [job] = await jobsOf('analyse');
    expect(job).toMatchObject({ status: 'queued', submission_id: 'camera' });
    expect(job.error).toMatch(/^waiting for storage: ENOSPC: no space left on device/);
    expect((await review('camera')).submission.analysis_status).toBe('pending');
    expect((await body(env.call('GET', '/api/review-queue'))).items.map((i: { id: string }) => i.id)).toEqual(['camera']);

    disk.full = false;
    expect(await env.jobs.drain('analyse')).toBe(1);
    const analysed = (await review('camera')).submission;
    expect(analysed).toMatchObject({ analysis_status: 'done', analysis_error: null });
    expect((await jobsOf('analyse')).map((j: { status: string }) => j.status)).toEqual(['done']);
  });

  it('an enrichment that cannot keep a downloaded copy is not recorded as failed: it runs again whole once there is room', async () => {
    const copy = await reencoded('camera.png', 70);
    fakes.web.addImage('/copy.jpg', copy, 'image/jpeg');
    fakes.web.route('/article', { headers: { 'content-type': 'text/html' }, body: '<html><img src="/copy.jpg"></html>' });
    fakes.vision.detection = {
      pagesWithMatchingImages: [{ url: fakes.web.urlFor('/article'), pageTitle: 'A copy', fullMatchingImages: [{ url: fakes.web.urlFor('/copy.jpg') }] }],
    };
    await reloadCamera();
    await env.jobs.drain('analyse');
    disk.full = true;
    await expect(env.jobs.drain('enrich')).rejects.toThrow(/waits for storage/);
    const [waiting] = await jobsOf('enrich');
    expect(waiting).toMatchObject({ status: 'queued', error: expect.stringMatching(/^waiting for storage/) });
    expect((await review('camera')).evidence.filter((e: { group: string }) => e.group === 'failures')).toEqual([]);

    disk.full = false;
    await env.jobs.drain();
    const after = await review('camera');
    expect(after.submission.enrichment_status).toBe('done');
    const matches = after.evidence.filter((e: { group: string }) => e.group === 'web_match');
    expect(matches).toHaveLength(1);
    expect(matches[0].local_media_url).toMatch(/^\/media\/evidence\/camera\//);
    expect(after.evidence.filter((e: { kind: string }) => e.kind === 'enrichment_failed')).toEqual([]);
  });

  it('a page capture asked meanwhile answers 507 in the error shape and changes nothing; the same request works once there is room', async () => {
    fakes.web.route('/article', { headers: { 'content-type': 'text/html' }, body: '<html><p>the page</p></html>' });
    const [match] = await seedSubmission(env, 's1', { evidence: [{ ...webMatch(), url: fakes.web.urlFor('/article') }] });
    const before = await snapshot(env.db);
    disk.full = true;
    const message = await refusal(env.call('POST', `/api/evidence/${match.id}/capture`), 507, 'insufficient_storage');
    expect(message).toMatch(/storage is full/);
    expect(message).not.toMatch(/ENOSPC|\//);
    expect(await snapshot(env.db)).toEqual(before);

    disk.full = false;
    const answer = await body(env.call('POST', `/api/evidence/${match.id}/capture`));
    expect(answer.capture).toMatchObject({ http_status: 200, page_url: fakes.web.urlFor('/article') });
  });
});
