import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { submissionKey } from '../../lib/blobs/keys.js';
import { handleJobsProgress } from '../../functions/jobs-progress.js';
import { JOB_HANDLERS } from '../../lib/jobs/handlers.js';
import { runNextJob } from '../../lib/jobs/loops.js';
import type { JobType } from '../../lib/repo/jobs.js';
import { createTestEnv, type TestEnv } from '../helpers/env.js';
import { countedDatabase, type DatabaseTally } from '../helpers/counted-db.js';
import { fixturePath, reencoded } from '../helpers/fixtures.js';

/**
 * On D1 every statement the Worker sends, or batch of them, is a round trip to D1's own process
 * (6-25 ms each on a loaded machine), so the queued work's round trips set how fast the Worker
 * analyses (docs/decisions/0045-one-round-trip-per-step.md). The counts are the same on both
 * storages; the second run (vitest.d1-r2.config.ts) makes them on D1.
 */
let env: TestEnv;
afterEach(async () => env?.dispose());

/** Runs the next job of a type on the counted database: whose it was, and what it sent. */
async function counted(type: JobType): Promise<{ submission: string | null; tally: DatabaseTally }> {
  const db = countedDatabase(env.db);
  let submission: string | null = null;
  const ran = await runNextJob({ ...env, db }, type, (jobEnv, job) => {
    submission = job.submission_id;
    return JOB_HANDLERS[type](jobEnv, job);
  });
  expect(ran).toBe(true);
  return { submission, tally: db.tally };
}

const internalMatches = async (id: string) =>
  (await (await env.call('GET', `/api/submissions/${id}/review`)).json()).evidence
    .filter((e: { group: string }) => e.group === 'internal')
    .map((e: { matched_submission_id: string }) => e.matched_submission_id);

describe('round trips to the database', () => {
  it('an analysis makes at most 14, 16 when it finds a copy, and an enrichment 14, each with its claim and its end', async () => {
    env = await createTestEnv();
    await env.blobs.put(submissionKey('images/camera.png'), readFileSync(fixturePath('camera.png')));
    await env.blobs.put(submissionKey('images/camera-copy.jpg'), await reencoded('camera.png', 70));
    await env.blobs.put(submissionKey('images/coffee.png'), readFileSync(fixturePath('coffee.png')));
    expect(await (await env.call('POST', '/api/submissions/reload')).json()).toMatchObject({ queued_jobs: 3 });

    const analyses = new Map<string | null, DatabaseTally>();
    for (let i = 0; i < 3; i++) {
      const { submission, tally } = await counted('analyse');
      analyses.set(submission, tally);
    }
    // The original is analysed after its copy: its comparison finds the copy, and refreshes the copy's evidence too.
    expect([...analyses.keys()]).toEqual(['camera-copy', 'camera', 'coffee']);
    expect(analyses.get('camera-copy')!.roundTrips).toBeLessThanOrEqual(14);
    expect(analyses.get('camera')!.roundTrips).toBeLessThanOrEqual(16);
    expect(analyses.get('coffee')!.roundTrips).toBeLessThanOrEqual(14);
    expect(await internalMatches('camera')).toEqual(['camera-copy']);
    expect(await internalMatches('camera-copy')).toEqual(['camera']);

    const enrichment = await counted('enrich');
    expect(enrichment.tally.roundTrips).toBeLessThanOrEqual(14);
    const review = await (await env.call('GET', `/api/submissions/${enrichment.submission}/review`)).json();
    expect(review.submission.enrichment_status).toBe('done');
  });

  it('the progress of the work in flight answers in 2, as the console polls it while jobs run', async () => {
    env = await createTestEnv();
    await env.blobs.put(submissionKey('images/camera.png'), readFileSync(fixturePath('camera.png')));
    await env.blobs.put(submissionKey('images/coffee.png'), readFileSync(fixturePath('coffee.png')));
    await env.call('POST', '/api/submissions/reload');
    await counted('analyse');
    const db = countedDatabase(env.db);
    const progress = await (await handleJobsProgress(new Request('http://svc/api/jobs/progress'), { ...env, db })).json();
    expect(db.tally.roundTrips).toBe(2);
    expect(progress.types.find((t: { type: string }) => t.type === 'analyse')).toMatchObject({ queued: 1, running: 0, done: 1 });
    expect(progress.types.find((t: { type: string }) => t.type === 'enrich')).toMatchObject({ queued: 1, done: 0 });
  });
});
