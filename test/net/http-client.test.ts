import type { LookupFunction } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
