import { mkdirSync, symlinkSync, writeFileSync, copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestEnv, TEST_ADMIN_TOKEN, type TestEnv } from '../helpers/env.js';

const FIXTURES = join(import.meta.dirname, '..', '..', '..', 'shared', 'fixtures', 'images');
const MEDIA_CSP = "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; sandbox";

let env: TestEnv;
beforeEach(async () => {
  env = await createTestEnv({ SVC_MAX_BODY_BYTES: '2048' });
});
afterEach(async () => env.dispose());

async function expectError(res: Response, status: number, code: string) {
  expect(res.status).toBe(status);
  const body = await res.json();
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(JSON.stringify(body)).not.toMatch(/at .*\.ts:\d+/);
}

describe('bad request bodies', () => {
  it('refuses malformed JSON with 400', async () => {
    await expectError(await env.call('PATCH', '/api/providers/regional', '{"enabled": tru'), 400, 'invalid_request');
  });

  it('refuses a wrong content type with 415', async () => {
    await expectError(
      await env.call('PATCH', '/api/providers/regional', 'enabled=false', { 'content-type': 'application/x-www-form-urlencoded' }),
      415,
      'unsupported_media_type',
    );
  });

  it('refuses a body over the limit with 413, declared or streamed', async () => {
    const big = JSON.stringify({ enabled: false, pad: 'x'.repeat(5000) });
    await expectError(await env.call('PATCH', '/api/providers/regional', big), 413, 'payload_too_large');
    const stream = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode(big));
        c.close();
      },
    });
    const { createRouter } = await import('../../functions/router.js');
    const res = await createRouter().fetch(
      new Request('http://127.0.0.1/api/providers/regional', {
        method: 'PATCH',
        body: stream,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
        duplex: 'half',
      } as RequestInit) as never,
      env,
    );
    await expectError(res, 413, 'payload_too_large');
  });

  it('refuses a body of the wrong shape and changes nothing', async () => {
    await expectError(await env.call('PATCH', '/api/providers/regional', { enabled: 'no' }), 400, 'invalid_request');
    const row = await env.db.prepare("SELECT switched_on FROM providers WHERE id = 'regional'").first<{ switched_on: number }>();
    expect(row?.switched_on).toBe(1);
  });

  it('gives 404 for an unknown provider and keeps the switch in the database', async () => {
    await expectError(await env.call('PATCH', '/api/providers/nope', { enabled: false }), 404, 'not_found');
    const res = await env.call('PATCH', '/api/providers/global_search', { enabled: false });
    expect(res.status).toBe(200);
    expect((await res.json()).provider).toMatchObject({ id: 'global_search', switched_on: false, enabled: false });
  });

  it('answers an unexpected failure with 500 and no stack', async () => {
    env.db.close();
    await expectError(await env.call('PATCH', '/api/providers/regional', { enabled: false }), 500, 'internal');
  });
});

describe('GET /media', () => {
  beforeEach(() => {
    copyFileSync(join(FIXTURES, 'rocket.jpg'), join(env.paths.imagesDir, 'rocket.jpg'));
    copyFileSync(join(FIXTURES, 'camera.png'), join(env.paths.imagesDir, 'photo.jpg'));
    writeFileSync(join(env.paths.imagesDir, 'evil.svg'), '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
    writeFileSync(join(env.dataDir, 'secret.txt'), 'top secret');
    symlinkSync(join(env.dataDir, 'secret.txt'), join(env.paths.imagesDir, 'link.jpg'));
    symlinkSync(join(env.paths.imagesDir, 'rocket.jpg'), join(env.paths.imagesDir, 'inside.jpg'));
    mkdirSync(join(env.paths.evidenceDir, 's1'), { recursive: true });
    copyFileSync(join(FIXTURES, 'rocket.jpg'), join(env.paths.evidenceDir, 's1', 'a.jpg'));
  });

  it('serves a stored image with its real type and the sandbox headers', async () => {
    const res = await env.call('GET', '/media/images/rocket.jpg');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/jpeg');
    expect(res.headers.get('content-security-policy')).toBe(MEDIA_CSP);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(1000);
    expect((await env.call('GET', '/media/evidence/s1/a.jpg')).status).toBe(200);
    expect((await env.call('GET', '/media/images/inside.jpg')).status).toBe(200);
  });

  it('takes the type from the bytes, not the name', async () => {
    const res = await env.call('GET', '/media/images/photo.jpg');
    expect(res.headers.get('content-type')).toBe('image/png');
  });

  it('serves SVG sandboxed so its script cannot run', async () => {
    const res = await env.call('GET', '/media/images/evil.svg');
    expect(res.headers.get('content-type')).toBe('image/svg+xml');
    expect(res.headers.get('content-security-policy')).toContain('sandbox');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
  });

  const refused = [
    '/media/images/../secret.txt',
    '/media/images/%2e%2e/secret.txt',
    '/media/images/..%2fsecret.txt',
    '/media/images/%2E%2E%2Fsecret.txt',
    '/media/images/..%5csecret.txt',
    '/media/images/..\\secret.txt',
    '/media/images/rocket.jpg%00.png',
    '/media/images//etc/passwd',
    '/media/%2fetc%2fpasswd',
    '/media/etc/passwd',
    '/media/images/link.jpg',
    '/media/images/missing.jpg',
    '/media/svc.sqlite3',
    '/media/images',
  ];
  it.each(refused)('refuses %s with 404, the sandbox headers and no file bytes', async (path) => {
    const res = await env.call('GET', path);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-security-policy')).toBe(MEDIA_CSP);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await res.text()).not.toContain('top secret');
  });
});

describe('the console', () => {
  it('serves the page at / and nothing outside static/', async () => {
    const res = await env.call('GET', '/');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect((await env.call('GET', '/../package.json')).status).toBe(404);
    expect((await env.call('GET', '/%2e%2e/package.json')).status).toBe(404);
    expect((await env.call('GET', '/svc.sqlite3')).status).toBe(404);
  });
});
