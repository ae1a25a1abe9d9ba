import { afterEach, describe, expect, it } from 'vitest';
import { consumeJobNotices, queueJobs, QUEUE_BATCH_LIMIT } from '../../lib/jobs/queue.js';
import { createTestEnv, type TestEnv } from '../helpers/env.js';
import { copyFixture } from '../helpers/fixtures.js';

/** The jobs port on Queues: notices in batches the platform takes, and a consumer that never loses a job. */
let env: TestEnv;
afterEach(async () => env?.dispose());

const message = () => {
  const m = { acked: false, retried: false, ack: () => void (m.acked = true), retry: () => void (m.retried = true) };
  return m;
};

describe('job notices on a queue', () => {
  it('sends one small notice per job, at most 100 to a batch', async () => {
    const batches: { body: unknown }[][] = [];
    await queueJobs({ sendBatch: async (messages) => void batches.push(messages) }).notify(250);
    expect(batches.map((b) => b.length)).toEqual([QUEUE_BATCH_LIMIT, QUEUE_BATCH_LIMIT, 50]);
    for (const body of batches.flat().map((m) => m.body)) expect(JSON.stringify(body).length).toBeLessThan(128 * 1024);
  });

  it('runs one job per notice, the batch at once, and acknowledges a notice that finds nothing', async () => {
    env = await createTestEnv();
    for (const name of ['camera.png', 'coffee.png']) copyFixture(name, env.paths.imagesDir);
    await env.call('POST', '/api/submissions/reload');
    const jobs = async () =>
      ((await (await env.call('GET', '/api/jobs')).json()).jobs as { type: string; status: string }[]).map((j) => [j.type, j.status]).sort();
    const [first, second, spare] = [message(), message(), message()];
    await consumeJobNotices(env, [first, second, spare]);
    expect([first, second, spare].map((m) => m.acked)).toEqual([true, true, true]);
    // Both analyses ran side by side; each queued its enrichment, which its own notice will run.
    expect(await jobs()).toEqual([
      ['analyse', 'done'],
      ['analyse', 'done'],
      ['enrich', 'queued'],
      ['enrich', 'queued'],
    ]);
    await consumeJobNotices(env, [message(), message()]);
    expect(await jobs()).toEqual([
      ['analyse', 'done'],
      ['analyse', 'done'],
      ['enrich', 'skipped'],
      ['enrich', 'skipped'],
    ]);
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
    await consumeJobNotices(broken, [notice]);
    expect(notice).toMatchObject({ acked: false, retried: true });
  });
});
