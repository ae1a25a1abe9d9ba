import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { listAll } from '../../lib/blobs/types.js';
import { createEnv, type OwnedEnv } from '../../lib/env.js';
import { createLogger } from '../../lib/log.js';
import { createRouter } from '../../functions/router.js';
import { d1r2Storage, stopD1r2 } from '../helpers/d1-r2.js';
import { TEST_ADMIN_TOKEN, testConfig } from '../helpers/env.js';
import { reencoded } from '../helpers/fixtures.js';

/**
 * The Worker deployment's backup (docs/operations.md): D1 Time Travel or `wrangler d1 export` for
 * the database, and a copy of the R2 bucket checked against its listing, whose ETag of each object
 * is the MD5 of its bytes. On D1 and R2 under miniflare: the listing's sums, and the admin route,
 * which says where that is documented instead of queuing a backup it cannot make.
 */

const dataDir = mkdtempSync(join(tmpdir(), 'svc-worker-backup-'));
let env: OwnedEnv;

beforeAll(async () => {
  const config = testConfig({ SVC_DATA_DIR: dataDir, SVC_ADMIN_TOKEN: TEST_ADMIN_TOKEN });
  env = await createEnv(config, { storage: await d1r2Storage(), log: createLogger(config, { silent: true }) });
});
afterAll(async () => {
  await env.close();
  await stopD1r2();
  rmSync(dataDir, { recursive: true, force: true });
});

it('lists every R2 object with the MD5 of its bytes, the sum a copy of the bucket is checked against', async () => {
  const stored = new Map<string, Buffer>([
    ['submissions/images/a.jpg', await reencoded('camera.png', 80)],
    ['evidence/a/0f0f.jpg', await reencoded('rocket.jpg', 70)],
    ['thumbs/a.jpg', await reencoded('camera.png', 50)],
  ]);
  for (const [key, bytes] of stored) await env.blobs.put(key, bytes);
  const listed = new Map<string, { size: number; version: string }>();
  for (const area of ['submissions/', 'evidence/', 'thumbs/']) for await (const o of listAll(env.blobs, area)) listed.set(o.key, o);
  expect([...listed.keys()].sort()).toEqual([...stored.keys()].sort());
  for (const [key, bytes] of stored) {
    expect(listed.get(key)).toMatchObject({ size: bytes.length, version: createHash('md5').update(bytes).digest('hex') });
  }
});

it('answers POST /api/admin/backup with 409 and where the Worker’s backups are documented, and queues nothing', async () => {
  const router = createRouter();
  const call = (method: string, path: string) =>
    router.fetch(new Request(`http://127.0.0.1${path}`, { method, headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } }) as never, env);
  const res = await call('POST', '/api/admin/backup');
  expect(res.status).toBe(409);
  expect((await res.json()).error.message).toMatch(/D1 Time Travel .*docs\/operations\.md/);
  expect(await (await call('GET', '/api/admin/backups')).json()).toEqual({ backups: [], available: false });
});
