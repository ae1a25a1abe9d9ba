import type { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, migrationFiles } from '../../lib/db/migrate.js';
import type { Database } from '../../lib/ports.js';
import { startLocalWorker } from '../../scripts/local-worker.js';

/**
 * The Worker's start-up window under miniflare: a D1 not yet migrated (as `npm run dev:worker`
 * answers before it has applied the migrations, or a deployment whose migrations were not applied),
 * then `npm run dev:worker`'s copy of the data folder's images into the bucket (its STARTUP binding).
 * Before, these answered 500 "internal error" (no such table).
 */
const ADMIN = 'worker-startup-token-3f9a';
let mf: Miniflare;
let copying: string | null = 'copying images into the bucket (3 of 10)';

beforeAll(async () => {
  mf = await startLocalWorker({
    // Nothing here decodes pixels: a reload of an empty bucket never calls the image service.
    imageServiceUrl: 'http://127.0.0.1:9',
    bindings: { SVC_ADMIN_TOKEN: ADMIN },
    migrate: false,
    startup: () => copying,
  });
}, 120_000);
afterAll(async () => mf?.dispose());

const call = (method: string, path: string) => mf.dispatchFetch(`http://localhost${path}`, { method, headers: { authorization: `Bearer ${ADMIN}` } });

async function expectStarting(response: Awaited<ReturnType<typeof call>>, reason: string) {
  expect(response.status).toBe(503);
  expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
  const body = (await response.json()) as { error: { code: string; message: string } };
  expect(body.error).toEqual({ code: 'unavailable', message: expect.stringContaining(`starting: ${reason}`) });
}

describe('the Worker while it starts', () => {
  it('answers 503 with the reason, never 500, until D1 holds every migration; /health says it is starting', async () => {
    const total = migrationFiles().length;
    const notMigrated = `the database is not migrated yet (0 of ${total} migrations applied)`;
    await expectStarting(await call('GET', '/api/review-queue'), notMigrated);
    await expectStarting(await call('POST', '/api/submissions/reload'), notMigrated);
    const health = await call('GET', '/health');
    expect(health.status).toBe(503);
    expect(await health.json()).toMatchObject({ status: 'starting', reason: notMigrated, db: 'ok' });
    // The console's files need no database: the page loads and shows what the API says.
    expect((await mf.dispatchFetch('http://localhost/')).status).toBe(200);

    await migrate((await mf.getD1Database('DB')) as unknown as Database);
    expect((await call('GET', '/api/review-queue')).status).toBe(200);
  });

  it('answers a reload 503 with the copy progress while the images are copied, and reads the bucket once the copy is done', async () => {
    await expectStarting(await call('POST', '/api/submissions/reload'), 'copying images into the bucket (3 of 10)');
    expect(await (await call('GET', '/health')).json()).toMatchObject({ status: 'starting', reason: 'copying images into the bucket (3 of 10)' });
    // What needs only the database is served meanwhile.
    expect((await call('GET', '/api/jobs')).status).toBe(200);

    copying = null;
    const reload = await call('POST', '/api/submissions/reload');
    expect(reload.status).toBe(200);
    expect(await reload.json()).toMatchObject({ imported: [], rejected: [] });
    const health = await call('GET', '/health');
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok' });
  });
});
