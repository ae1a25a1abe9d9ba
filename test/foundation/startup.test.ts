import { afterEach, describe, expect, it } from 'vitest';
import { startingGate } from '../../lib/http/startup.js';
import { createTestEnv, type TestEnv } from '../helpers/env.js';
import { useTestServer } from '../helpers/server.js';

/**
 * The Node service's start-up window: it listens once its database is migrated, then picks up the
 * work a previous process left (server.ts, startWork); until that is done, reload and rerun answer
 * 503 with the reason, the rest is served, and /health says it is starting. The gate here is the
 * one server.ts opens; the Worker's window is test/worker/startup.test.ts.
 */
let env: TestEnv | undefined;
afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

const PICKING_UP = 'picking up the work a previous process left';

describe('the Node service while it picks up left work', () => {
  it('answers reload and rerun 503 with the reason and Retry-After, serves the rest, and opens when the work is picked up', async () => {
    env = await createTestEnv();
    const startup = startingGate(PICKING_UP);
    env.startup = startup;
    for (const [method, path] of [
      ['POST', '/api/submissions/reload'],
      ['POST', '/api/submissions/s1/rerun-enrichment'],
    ]) {
      const res = await env.call(method, path);
      expect(res.status, path).toBe(503);
      expect(res.headers.get('retry-after')).toBe('2');
      expect(await res.json()).toEqual({ error: { code: 'unavailable', message: `starting: ${PICKING_UP}; try again shortly` } });
    }
    expect((await env.call('GET', '/api/review-queue')).status).toBe(200);
    const health = await env.call('GET', '/health');
    expect(health.status).toBe(503);
    expect(await health.json()).toMatchObject({ status: 'starting', reason: PICKING_UP, db: 'ok' });

    startup.open();
    expect((await env.call('POST', '/api/submissions/reload')).status).toBe(200);
    expect(await (await env.call('GET', '/health')).json()).toMatchObject({ status: 'ok' });
  });
});

describe('the Node server once started', () => {
  const server = useTestServer({ seed: { images: { 'rocket.jpg': 'rocket.jpg' } } });

  it('has picked up the left work before startServer returns: reload and /health answer at once', async () => {
    expect(await (await server.fetch('/health')).json()).toMatchObject({ status: 'ok' });
    expect(await server.api('POST', '/api/submissions/reload')).toMatchObject({ imported: ['rocket'] });
  });
});
