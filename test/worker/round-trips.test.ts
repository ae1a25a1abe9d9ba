import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { submissionKey } from '../../lib/blobs/keys.js';
import { handleJobsProgress } from '../../functions/jobs-progress.js';
import { JOB_HANDLERS } from '../../lib/jobs/handlers.js';
import { jobSlot, type JobSlot } from '../../lib/jobs/loops.js';
import { JOB_TYPES } from '../../lib/repo/jobs.js';
import { createTestEnv, type TestEnv } from '../helpers/env.js';
import { countedBlobStore } from '../helpers/counted-blobs.js';
import { countedDatabase, type DatabaseTally } from '../helpers/counted-db.js';
import { fixturePath, reencoded } from '../helpers/fixtures.js';

/**
 * On D1 every statement the Worker sends, or batch of them, is a round trip to D1's own process
 * (6-25 ms each on a loaded machine), so the queued work's round trips set how fast the Worker
 * analyses (docs/decisions/0045-one-round-trip-per-step.md, 0054, 0056). The counts are the same on both
 * storages; the second run (vitest.d1-r2.config.ts) makes them on D1. Jobs run as the Worker's
 * consumer runs them, one after another in a slot: a job's claim carries the end of the job before.
 */
let env: TestEnv;
afterEach(async () => env?.dispose());

interface Step {
  type: string;
  submission: string | null;
  tally: DatabaseTally;
  /** The keys the job read whole from the blob store. */
  reads: string[];
}

/** A consumer's slot on the counted database and blob store; `step` runs its next job and answers what that job sent and read. */
function countedSlot(): { step(): Promise<Step>; slot: JobSlot; db: ReturnType<typeof countedDatabase> } {
  const db = countedDatabase(env.db);
  const blobs = countedBlobStore(env.blobs);
  let ran: Omit<Step, 'tally' | 'reads'> | null = null;
  const slot = jobSlot({ ...env, db, blobs }, JOB_TYPES, (job) => (jobEnv, claimed) => {
    ran = { type: job.type, submission: job.submission_id };
    return JOB_HANDLERS[job.type](jobEnv, claimed);
  });
  return {
    slot,
    db,
    async step() {
      db.reset();
      blobs.reset();
      ran = null;
      expect(await slot.next()).toBe(true);
      return { ...ran!, tally: { ...db.tally, sql: [...db.tally.sql] }, reads: [...blobs.gets] };
    },
  };
}

const internalMatches = async (id: string) =>
  (await (await env.call('GET', `/api/submissions/${id}/review`)).json()).evidence
    .filter((e: { group: string }) => e.group === 'internal')
    .map((e: { matched_submission_id: string }) => e.matched_submission_id);

describe('round trips to the database', () => {
  it('an analysis makes at most 5, 6 when it finds a copy, and an enrichment with no provider that finds nothing 4, claim included; each reads its file at most once', async () => {
    env = await createTestEnv();
    await env.blobs.put(submissionKey('images/camera.png'), readFileSync(fixturePath('camera.png')));
    await env.blobs.put(submissionKey('images/camera-copy.jpg'), await reencoded('camera.png', 70));
    await env.blobs.put(submissionKey('images/coffee.png'), readFileSync(fixturePath('coffee.png')));
    expect(await (await env.call('POST', '/api/submissions/reload')).json()).toMatchObject({ queued_jobs: 3 });

    const { step, slot, db } = countedSlot();
    const analyses = new Map<string | null, Step>();
    for (let i = 0; i < 3; i++) {
      const analysis = await step();
      analyses.set(analysis.submission, analysis);
    }
    // The original is analysed after its copy: its comparison finds the copy, and refreshes the copy's evidence too.
    expect([...analyses.keys()]).toEqual(['camera-copy', 'camera', 'coffee']);
    expect(analyses.get('camera-copy')!.tally.roundTrips).toBeLessThanOrEqual(5);
    expect(analyses.get('camera')!.tally.roundTrips).toBeLessThanOrEqual(6);
    expect(analyses.get('coffee')!.tally.roundTrips).toBeLessThanOrEqual(5);
    for (const [id, analysis] of analyses) expect(analysis.reads).toEqual([submissionKey(`images/${id}.${id === 'camera-copy' ? 'jpg' : 'png'}`)]);
    expect(await internalMatches('camera')).toEqual(['camera-copy']);
    expect(await internalMatches('camera-copy')).toEqual(['camera']);

    // Analysis first, then the enrichments, each claimed by one statement whatever the type.
    const enrichments = [await step(), await step(), await step()];
    expect(enrichments.map((e) => [e.type, e.submission])).toEqual([
      ['enrich', 'camera-copy'],
      ['enrich', 'camera'],
      ['enrich', 'coffee'],
    ]);
    // No provider is set up and nothing is matched on the web: nothing needs the picture's bytes.
    expect(enrichments.map((e) => e.reads)).toEqual([[], [], []]);
    // coffee matches nothing, so has nothing for the language model to summarise; the copies' internal match
    // is summarised, its request (to no language model here) passing the provider's gate and quota.
    expect(enrichments[2].tally.roundTrips).toBeLessThanOrEqual(4);
    for (const e of enrichments.slice(0, 2)) expect(e.tally.roundTrips).toBeLessThanOrEqual(11);
    // The last end is recorded when the slot stops: after its empty claim, or by close.
    db.reset();
    expect(await slot.next()).toBe(false);
    await slot.close();
    expect(db.tally.roundTrips).toBe(1);
    // The copies' summaries went out (to no language model: a failure), coffee's enrichment had nothing to ask.
    const statuses = async (id: string) => (await (await env.call('GET', `/api/submissions/${id}/review`)).json()).submission.enrichment_status;
    expect([await statuses('camera-copy'), await statuses('camera'), await statuses('coffee')]).toEqual(['done', 'done', 'skipped']);
    const jobs = await (await env.call('GET', '/api/jobs')).json();
    expect(jobs.jobs.map((j: { type: string; status: string }) => `${j.type} ${j.status}`).sort()).toEqual([
      ...Array(3).fill('analyse done'),
      'enrich done',
      'enrich done',
      'enrich skipped',
    ]);
  });

  it('the progress of the work in flight answers in 2, as the console polls it while jobs run', async () => {
    env = await createTestEnv();
    await env.blobs.put(submissionKey('images/camera.png'), readFileSync(fixturePath('camera.png')));
    await env.blobs.put(submissionKey('images/coffee.png'), readFileSync(fixturePath('coffee.png')));
    await env.call('POST', '/api/submissions/reload');
    const { step, slot } = countedSlot();
    await step();
    await slot.close();
    const db = countedDatabase(env.db);
    const progress = await (await handleJobsProgress(new Request('http://svc/api/jobs/progress'), { ...env, db })).json();
    expect(db.tally.roundTrips).toBe(2);
    expect(progress.types.find((t: { type: string }) => t.type === 'analyse')).toMatchObject({ queued: 1, running: 0, done: 1 });
    expect(progress.types.find((t: { type: string }) => t.type === 'enrich')).toMatchObject({ queued: 1, done: 0 });
  });
});
