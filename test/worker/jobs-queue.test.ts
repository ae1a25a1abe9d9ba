import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { submissionKey } from '../../lib/blobs/keys.js';
import { STORAGE_RETRY_MS } from '../../lib/jobs/loops.js';
import { consumeJobNotices, queueJobs, QUEUE_BATCH_LIMIT } from '../../lib/jobs/queue.js';
import { createTestEnv, type TestEnv } from '../helpers/env.js';
import { fixturePath } from '../helpers/fixtures.js';
import { fillableDisk } from '../helpers/full-disk.js';

/** The jobs port on Queues: notices in batches the platform takes, and a consumer that never loses a job (both storages). */
let env: TestEnv;
afterEach(async () => env?.dispose());

const message = () => {
  const m = {
    acked: false,
    retried: false,
    delaySeconds: undefined as number | undefined,
    ack: () => void (m.acked = true),
    retry: (options?: { delaySeconds?: number }) => void Object.assign(m, { retried: true, delaySeconds: options?.delaySeconds }),
  };
  return m;
};

/** Puts a fixture where operators copy submissions: the images folder, or the R2 bucket's images/. */
const submit = (name: string) => env.blobs.put(submissionKey(`images/${name}`), readFileSync(fixturePath(name)));

describe('job notices on a queue', () => {
  it('sends one small notice per job, at most 100 to a batch', async () => {
    const batches: { body: unknown }[][] = [];
    await queueJobs({ sendBatch: async (messages) => void batches.push(messages) }).notify(250);
    expect(batches.map((b) => b.length)).toEqual([QUEUE_BATCH_LIMIT, QUEUE_BATCH_LIMIT, 50]);
    for (const body of batches.flat().map((m) => m.body)) expect(JSON.stringify(body).length).toBeLessThan(128 * 1024);
  });

  const jobs = async () =>
    ((await (await env.call('GET', '/api/jobs')).json()).jobs as { type: string; status: string }[]).map((j) => [j.type, j.status]).sort();

  it('runs one job per notice, the batch at once, when the invocation has no room for more, and acknowledges a notice that finds nothing', async () => {
    env = await createTestEnv();
    for (const name of ['camera.png', 'coffee.png']) await submit(name);
    await env.call('POST', '/api/submissions/reload');
    const [first, second, spare] = [message(), message(), message()];
    const noRoom = () => false;
    await consumeJobNotices(env, [first, second, spare], noRoom);
    expect([first, second, spare].map((m) => m.acked)).toEqual([true, true, true]);
    // Both analyses ran side by side; each queued its enrichment, which its own notice will run.
    expect(await jobs()).toEqual([
      ['analyse', 'done'],
      ['analyse', 'done'],
      ['enrich', 'queued'],
      ['enrich', 'queued'],
    ]);
    await consumeJobNotices(env, [message(), message()], noRoom);
    expect(await jobs()).toEqual([
      ['analyse', 'done'],
      ['analyse', 'done'],
      ['enrich', 'skipped'],
      ['enrich', 'skipped'],
    ]);
  });

  it('keeps claiming the next job in a slot while the invocation has room, so one notice runs what a reload queued and what its jobs queued', async () => {
    env = await createTestEnv();
    for (const name of ['camera.png', 'coffee.png', 'rocket.jpg']) await submit(name);
    await env.call('POST', '/api/submissions/reload');
    const [notice, late] = [message(), message()];
    let asked = 0;
    await consumeJobNotices(env, [notice], () => ++asked > 0);
    expect(notice).toMatchObject({ acked: true, retried: false });
    // Three analyses, then the three enrichments they queued, then nothing left to claim.
    expect(asked).toBe(6);
    expect(await jobs()).toEqual([
      ['analyse', 'done'],
      ['analyse', 'done'],
      ['analyse', 'done'],
      ['enrich', 'skipped'],
      ['enrich', 'skipped'],
      ['enrich', 'skipped'],
    ]);
    // The other jobs' notices arrive later and find nothing.
    await consumeJobNotices(env, [late], () => true);
    expect(late).toMatchObject({ acked: true, retried: false });
    expect((await jobs()).length).toBe(6);
  });

  it('retries a notice when storage fails, so the queue delivers it again (and at last to the dead-letter queue)', async () => {
    env = await createTestEnv();
    const broken = {
      ...env,
      db: {
        ...env.db,
        prepare: () => {
          throw new Error('D1 is unavailable');
        },
      },
    } as unknown as TestEnv;
    const notice = message();
    await consumeJobNotices(broken, [notice], () => true);
    expect(notice).toMatchObject({ acked: false, retried: true });
  });

  it('retries a notice whose job met a full disk after the storage wait, with the job back in the queue, and runs it once there is room', async () => {
    env = await createTestEnv();
    await submit('camera.png');
    await env.call('POST', '/api/submissions/reload');
    const disk = fillableDisk(env);
    disk.full = true;
    const notice = message();
    await consumeJobNotices(env, [notice], () => true);
    expect(notice).toMatchObject({ acked: false, retried: true, delaySeconds: STORAGE_RETRY_MS / 1000 });
    const analyses = async () => ((await (await env.call('GET', '/api/jobs')).json()).jobs as { type: string }[]).filter((j) => j.type === 'analyse');
    expect(await analyses()).toMatchObject([{ status: 'queued', attempts: 1 }]);
    expect((await analyses())[0]).toHaveProperty('error', expect.stringMatching(/^waiting for storage: ENOSPC/));

    disk.full = false;
    const again = message();
    await consumeJobNotices(env, [again], () => true);
    expect(again).toMatchObject({ acked: true, retried: false });
    expect(await analyses()).toMatchObject([{ status: 'done' }]);
  });
});
