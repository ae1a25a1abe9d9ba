import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { clientAddress } from '../../lib/auth/authenticate.js';
import { buildConfig } from '../../lib/config.js';
import { ServiceError } from '../../lib/errors.js';
import { nodeListener, type FetchHandler } from '../../lib/http/node-bridge.js';
import { createLogger } from '../../lib/log.js';
import { startServer, type RunningServer } from '../../server.js';

const MiB = 1024 * 1024;

let server: Server | undefined;
let handler: FetchHandler;
const logged: string[] = [];

/** A bare node:http server on 127.0.0.1 answering through the bridge with whatever `handler` is now. */
async function bridge(): Promise<string> {
  server = createServer(nodeListener((request, ctx) => handler(request, ctx), (message, error) => logged.push(`${message}: ${String(error)}`)));
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return `http://127.0.0.1:${port}`;
}

afterEach(async () => {
  logged.length = 0;
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

interface Answer {
  status: number;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

/** A request with node's client (fetch would merge Set-Cookie lines and hide the framing). */
function call(url: string, options: { method?: string; body?: Buffer | string; headers?: Record<string, string> } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: options.method ?? 'GET', headers: options.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** A body made on demand, 1 MiB a chunk, that counts how far it was read and whether it was cancelled. */
function meteredStream(chunks: number) {
  const state = { pulled: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (state.pulled === chunks) return controller.close();
      state.pulled++;
      controller.enqueue(new Uint8Array(MiB).fill(97));
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { state, stream };
}

const until = async (check: () => boolean, what: string) => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 25));
  if (!check()) throw new Error(`never happened: ${what}`);
};

describe('answers', () => {
  it('sends a one-piece body in one write with its length, and status and headers as given', async () => {
    handler = async () => new Response(JSON.stringify({ ok: '가나다' }), { status: 202, headers: { 'content-type': 'application/json; charset=utf-8', 'x-extra': 'yes' } });
    const answer = await call(await bridge());
    expect(answer.status).toBe(202);
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(answer.headers['x-extra']).toBe('yes');
    expect(answer.headers['content-length']).toBe(String(Buffer.byteLength('{"ok":"가나다"}')));
    expect(answer.headers['transfer-encoding']).toBeUndefined();
    expect(JSON.parse(answer.body.toString('utf8'))).toEqual({ ok: '가나다' });
  });

  it('keeps several Set-Cookie values apart', async () => {
    handler = async () => {
      const response = new Response('{}');
      response.headers.append('set-cookie', 'a=1; Path=/; HttpOnly');
      response.headers.append('set-cookie', 'b=2, with a comma; Path=/');
      return response;
    };
    expect((await call(await bridge())).headers['set-cookie']).toEqual(['a=1; Path=/; HttpOnly', 'b=2, with a comma; Path=/']);
  });

  it('answers HEAD with the headers only and does not produce a streamed body', async () => {
    const { state, stream } = meteredStream(50);
    handler = async () => new Response(stream, { headers: { 'content-type': 'text/csv' } });
    const answer = await call(await bridge(), { method: 'HEAD' });
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('text/csv');
    expect(answer.body.length).toBe(0);
    await until(() => state.cancelled, 'the body cancelled');
    expect(state.pulled).toBeLessThan(5);
  });

  it('streams a large body whole, and only as fast as the client reads it', async () => {
    const { state, stream } = meteredStream(64);
    handler = async () => new Response(stream, { headers: { 'content-type': 'application/octet-stream' } });
    const url = await bridge();
    let pulledWhilePaused = 0;
    const received = await new Promise<number>((resolve, reject) => {
      httpRequest(url, { agent: false }, (res) => {
        let bytes = 0;
        res.on('data', (c: Buffer) => (bytes += c.length));
        res.on('end', () => resolve(bytes));
        res.on('error', reject);
        // The client stops reading for a while: the bridge must stop pulling the body meanwhile.
        res.pause();
        setTimeout(() => {
          pulledWhilePaused = state.pulled;
          res.resume();
        }, 400);
      })
        .on('error', reject)
        .end();
    });
    expect(pulledWhilePaused).toBeGreaterThan(0);
    expect(pulledWhilePaused).toBeLessThan(16);
    expect(received).toBe(64 * MiB);
    expect(state.cancelled).toBe(false);
  });

  it('cancels the body when the client goes away mid-stream, and keeps serving', async () => {
    const { state, stream } = meteredStream(1000);
    handler = async () => new Response(stream);
    const url = await bridge();
    await new Promise<void>((resolve) => {
      const req = httpRequest(url, { agent: false }, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', () => undefined);
      req.end();
    });
    await until(() => state.cancelled, 'the body cancelled');
    expect(state.pulled).toBeLessThan(100);
    handler = async () => new Response('still here');
    expect((await call(url)).body.toString()).toBe('still here');
  });

  it('closes the connection when a body fails after it started, so the client sees it incomplete', async () => {
    let sent = 0;
    handler = async () =>
      new Response(
        new ReadableStream({
          pull(controller) {
            if (sent++ < 3) controller.enqueue(new TextEncoder().encode('row\n'));
            else controller.error(new Error('the database went away'));
          },
        }),
      );
    const url = await bridge();
    await expect(call(url)).rejects.toThrow(/aborted|socket hang up|ECONNRESET/);
    expect(logged).toEqual([expect.stringContaining('the database went away')]);
  });

  it('answers in the error shape when a body fails before its first byte', async () => {
    handler = async () =>
      new Response(
        new ReadableStream({
          pull(controller) {
            controller.error(new Error('no rows today'));
          },
        }),
        { headers: { 'content-type': 'text/csv', 'content-disposition': 'attachment' } },
      );
    const answer = await call(await bridge());
    expect(answer.status).toBe(500);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(answer.headers['content-disposition']).toBeUndefined();
    expect(JSON.parse(answer.body.toString())).toEqual({ error: { code: 'internal', message: 'internal error' } });
  });

  it('answers in the error shape when the handler throws, with no stack', async () => {
    handler = async () => {
      throw new ServiceError('conflict', 'already decided');
    };
    const url = await bridge();
    const known = await call(url);
    expect(known.status).toBe(409);
    expect(JSON.parse(known.body.toString())).toEqual({ error: { code: 'conflict', message: 'already decided' } });
    handler = async () => {
      throw new Error('a detail for the operator at /work/main/lib/x.ts:10');
    };
    const unknown = await call(url);
    expect(unknown.status).toBe(500);
    expect(JSON.parse(unknown.body.toString())).toEqual({ error: { code: 'internal', message: 'internal error' } });
    expect(logged.at(-1)).toContain('a detail for the operator');
  });

  it('refuses a Host header no URL can hold in the error shape', async () => {
    handler = async () => new Response('routed');
    const { port } = new URL(await bridge());
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => socket.write('GET / HTTP/1.1\r\nHost: a b\r\nConnection: close\r\n\r\n'));
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (c) => (text += c));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(raw.split('\r\n\r\n')[1])).toEqual({ error: { code: 'invalid_request', message: expect.any(String) } });
  });
});

describe('requests', () => {
  it('gives the handler method, URL, headers and the caller\'s address', async () => {
    let seen: Record<string, unknown> = {};
    handler = async (request, ctx) => {
      seen = { method: request.method, url: request.url, header: request.headers.get('x-case'), body: request.body, address: clientAddress(ctx) };
      return new Response(null, { status: 204 });
    };
    const url = await bridge();
    expect((await call(`${url}/api/review-queue?q=${encodeURIComponent('야경')}&level=high`, { headers: { 'X-Case': 'A b' } })).status).toBe(204);
    expect(seen).toEqual({ method: 'GET', url: `${url}/api/review-queue?q=%EC%95%BC%EA%B2%BD&level=high`, header: 'A b', body: null, address: '127.0.0.1' });
  });

  it('hands a large body over whole, declared or chunked', async () => {
    handler = async (request) => new Response(String((await request.arrayBuffer()).byteLength));
    const url = await bridge();
    const big = Buffer.alloc(24 * MiB, 7);
    expect((await call(url, { method: 'POST', body: big })).body.toString()).toBe(String(big.length));
    const chunked = await new Promise<string>((resolve, reject) => {
      const req = httpRequest(url, { method: 'POST', agent: false, headers: { 'transfer-encoding': 'chunked' } }, (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve(text));
      });
      req.on('error', reject);
      for (let i = 0; i < 10; i++) req.write(Buffer.alloc(MiB, i));
      req.end();
    });
    expect(chunked).toBe(String(10 * MiB));
  });

  it('reads an upload from the socket only as fast as the handler takes it', async () => {
    let readWhileWaiting = 0;
    handler = async (request, ctx) => {
      const reader = request.body!.getReader();
      await reader.read();
      await new Promise((r) => setTimeout(r, 400));
      readWhileWaiting = ctx.req.socket.bytesRead;
      await reader.cancel();
      return new Response('enough');
    };
    const answer = await call(await bridge(), { method: 'POST', body: Buffer.alloc(64 * MiB, 1) });
    expect(answer.body.toString()).toBe('enough');
    expect(readWhileWaiting).toBeGreaterThan(0);
    expect(readWhileWaiting).toBeLessThan(32 * MiB);
  });

  it('a handler that stops reading a body over its limit still gets its answer to the client', async () => {
    handler = async (request) => {
      const reader = request.body!.getReader();
      await reader.read();
      await reader.cancel();
      return new Response(JSON.stringify({ error: { code: 'payload_too_large', message: 'too big' } }), { status: 413 });
    };
    const url = await bridge();
    const answer = await call(url, { method: 'POST', body: Buffer.alloc(8 * MiB, 1) });
    expect(answer.status).toBe(413);
    handler = async () => new Response('next');
    expect((await call(url)).body.toString()).toBe('next');
  });

  it('errors the body stream when the client leaves mid-upload, and keeps serving', async () => {
    let outcome: string | undefined;
    handler = async (request) => {
      try {
        await request.arrayBuffer();
        outcome = 'read to the end';
      } catch (error) {
        outcome = `failed: ${String(error)}`;
      }
      return new Response('done');
    };
    const url = await bridge();
    await new Promise<void>((resolve) => {
      const req = httpRequest(url, { method: 'POST', agent: false, headers: { 'content-length': String(10 * MiB) } });
      req.on('error', () => resolve());
      req.write(Buffer.alloc(MiB), () => setTimeout(() => req.destroy(), 50));
    });
    await until(() => outcome !== undefined, 'the handler finished');
    expect(outcome).toMatch(/^failed/);
    expect((await call(url)).body.toString()).toBe('done');
  });
});

describe('the service through the bridge', () => {
  let dataDir: string;
  let running: RunningServer;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'svc-bridge-'));
    const { config } = buildConfig({ SVC_DATA_DIR: dataDir, SVC_PORT: '0' });
    running = await startServer(config, { log: createLogger(config, { silent: true }) });
  });

  afterAll(async () => {
    await running.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('creates the first administrator from a loopback caller and signs them in with a cookie', async () => {
    const answer = await call(`${running.url}/api/auth/setup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin-park', password: 'a long enough passphrase' }),
    });
    expect(answer.status).toBe(200);
    expect(answer.headers['set-cookie']).toEqual([expect.stringMatching(/^svc_session=sess_/)]);
    const session = await call(`${running.url}/api/auth/session`, { headers: { cookie: answer.headers['set-cookie']![0].split(';')[0] } });
    expect(JSON.parse(session.body.toString())).toMatchObject({ signed_in: true, actor: { name: 'admin-park', role: 'admin' } });
  });
});
