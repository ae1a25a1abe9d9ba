import type { LookupFunction } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchEgress } from '../../lib/net/fetch-egress.js';
import { httpRequest } from '../../lib/net/http-client.js';
import { startFakeServer, type FakeServer } from '../fakes/server.js';

let server: FakeServer;

beforeAll(async () => {
  server = await startFakeServer(() => ({ body: 'hello' }));
});
afterAll(() => server.close());

describe('outbound request deadlines and limits', () => {
  it('gives up on a connection that never opens at the connect deadline, not the overall one', async () => {
    // A resolver that never answers stands in for a host that does not answer the handshake.
    const neverResolves: LookupFunction = () => undefined;
    const result = await httpRequest({
      url: new URL('http://llm.invalid:11434/api/generate'),
      method: 'POST',
      timeoutMs: 60_000,
      connectTimeoutMs: 150,
      maxBytes: 1024,
      lookup: neverResolves,
    });
    expect(result).toEqual({ ok: false, error: { code: 'connect_timeout', message: 'could not connect within 150 ms' } });
  });

  it('stops reading a body that passes the byte limit', async () => {
    server.respondOnce({ chunked: true, body: Buffer.alloc(100_000, 0x61) });
    const result = await httpRequest({ url: new URL(server.url), method: 'GET', timeoutMs: 5000, maxBytes: 10_000 });
    expect(result).toMatchObject({ ok: false, error: { code: 'too_large' } });
  });

  it('reports an answer cut off mid-body', async () => {
    server.respondOnce({ body: 'x'.repeat(1000), truncateAt: 100 });
    const result = await httpRequest({ url: new URL(server.url), method: 'GET', timeoutMs: 5000, maxBytes: 10_000 });
    expect(result).toMatchObject({ ok: false, error: { code: 'connection_closed' } });
  });

  it('returns status, headers and body of a complete answer', async () => {
    server.respondOnce({ status: 201, headers: { 'x-test': 'yes' }, body: 'made' });
    const result = await httpRequest({ url: new URL(server.url), method: 'GET', timeoutMs: 5000, maxBytes: 10_000 });
    expect(result.ok && [result.status, result.headers['x-test'], result.body.toString()]).toEqual([201, 'yes', 'made']);
  });
});

describe('the fetch adapter of the egress port (the Worker’s)', () => {
  const egress = fetchEgress();
  const get = (maxBytes = 10_000, timeoutMs = 5000) => egress({ url: new URL(server.url), method: 'GET', timeoutMs, maxBytes });

  it('returns status, lower-case headers and body, and sends a POST body as given', async () => {
    server.respondOnce({ status: 201, headers: { 'X-Test': 'yes' }, body: 'made' });
    const result = await egress({
      url: new URL(`${server.url}/in`),
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: Buffer.from('{"a":1}'),
      timeoutMs: 5000,
      maxBytes: 100,
    });
    expect(result.ok && [result.status, result.headers['x-test'], result.body.toString()]).toEqual([201, 'yes', 'made']);
    expect(server.requests.at(-1)).toMatchObject({ method: 'POST', path: '/in' });
    expect(server.requests.at(-1)!.body.toString()).toBe('{"a":1}');
  });

  it('stops reading a body that passes the byte limit, declared or chunked', async () => {
    server.respondOnce({ body: Buffer.alloc(100_000, 0x61) });
    expect(await get()).toMatchObject({ ok: false, error: { code: 'too_large' } });
    server.respondOnce({ chunked: true, body: Buffer.alloc(100_000, 0x61) });
    expect(await get()).toMatchObject({ ok: false, error: { code: 'too_large' } });
  });

  it('reports an answer cut off mid-body, and one that comes too late', async () => {
    server.respondOnce({ body: 'x'.repeat(1000), truncateAt: 100 });
    expect(await get()).toMatchObject({ ok: false, error: { code: 'connection_closed' } });
    server.respondOnce({ delayMs: 1000, body: 'late' });
    expect(await get(10_000, 200)).toEqual({ ok: false, error: { code: 'timeout', message: 'no complete answer within 200 ms' } });
  });

  it('hands a redirect back to the caller instead of following it', async () => {
    const before = server.requests.length;
    server.respondOnce({ status: 302, headers: { location: `${server.url}/next` }, body: '' });
    expect(await get()).toMatchObject({ ok: true, status: 302, headers: { location: `${server.url}/next` } });
    expect(server.requests.slice(before).map((r) => r.path)).toEqual(['/']);
  });

  it('refuses local names for a URL from the open web, without a request', async () => {
    const before = server.requests.length;
    const result = await egress({
      url: new URL(`http://localhost:${new URL(server.url).port}/`),
      method: 'GET',
      timeoutMs: 5000,
      maxBytes: 100,
      publicOnly: true,
    });
    expect(result).toMatchObject({ ok: false, error: { code: 'blocked_address' } });
    expect(server.requests.length).toBe(before);
  });
});
