import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';

/**
 * A scriptable local HTTP server for tests: listens on 127.0.0.1 on a free port, records every
 * request, and answers with whatever the test scripted (status, body, delay, a slow or cut-off
 * body, a closed socket) or else with the fake's default answer.
 */

export interface RecordedRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
  /** Arrival order across every fake in the process, to check the order of calls to several providers. */
  sequence: number;
}

let arrivals = 0;

export interface FakeResponse {
  status?: number;
  headers?: Record<string, string>;
  /** Sent as application/json. */
  json?: unknown;
  body?: string | Buffer;
  /** Wait this long before the status line. */
  delayMs?: number;
  /** Send the body in small pieces, one every `dripMs`. */
  dripMs?: number;
  /** Declare the whole length but send only this many bytes, then close the connection. */
  truncateAt?: number;
  /** Close the connection without answering. */
  destroy?: boolean;
  /** Send no Content-Length (chunked), so the client only learns the size while reading. */
  chunked?: boolean;
}

export type Responder = FakeResponse | ((request: RecordedRequest) => FakeResponse | Promise<FakeResponse>);

export interface FakeServer {
  /** Base address, e.g. http://127.0.0.1:40123 */
  url: string;
  /** Every request received, oldest first (the most recent MAX_RECORDED_REQUESTS). */
  requests: RecordedRequest[];
  /** Answer every following request this way (until `reset`). */
  respondWith(responder: Responder): void;
  /** Answer the next request this way; queued ones go before `respondWith`. */
  respondOnce(responder: Responder): void;
  /** Drops scripted answers and recorded requests; the fake's data (results, detection, answer) stays. */
  reset(): void;
  close(): Promise<void>;
}

/** Bounds that keep a misbehaving client in a test from filling memory. */
export const MAX_RECORDED_REQUESTS = 1000;
const MAX_REQUEST_BODY_BYTES = 64 * 1024 * 1024;
const DRIP_CHUNK_BYTES = 16;

function parseJson(body: Buffer): unknown {
  if (body.length === 0) return undefined;
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}

const sleep = (ms: number, timers: Set<NodeJS.Timeout>) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      resolve();
    }, ms);
    timers.add(timer);
  });

export async function startFakeServer(defaultResponder: (request: RecordedRequest) => FakeResponse | Promise<FakeResponse>): Promise<FakeServer> {
  const requests: RecordedRequest[] = [];
  const queued: Responder[] = [];
  let standing: Responder | undefined;
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let closing = false;

  async function answer(response: http.ServerResponse, scripted: FakeResponse) {
    if (scripted.delayMs) await sleep(scripted.delayMs, timers);
    if (closing || response.destroyed) return;
    if (scripted.destroy) {
      response.socket?.destroy();
      return;
    }
    const headers: Record<string, string> = { ...scripted.headers };
    let body: Buffer;
    if (scripted.json !== undefined) {
      body = Buffer.from(JSON.stringify(scripted.json), 'utf8');
      headers['content-type'] ??= 'application/json; charset=UTF-8';
    } else {
      body = Buffer.isBuffer(scripted.body) ? scripted.body : Buffer.from(scripted.body ?? '', 'utf8');
    }
    if (!scripted.chunked) headers['content-length'] ??= String(body.length);
    response.writeHead(scripted.status ?? 200, headers);
    if (scripted.truncateAt !== undefined) {
      response.write(body.subarray(0, scripted.truncateAt));
      // Let the partial body reach the client before the connection drops.
      await sleep(20, timers);
      response.socket?.destroy();
      return;
    }
    if (scripted.dripMs) {
      for (let offset = 0; offset < body.length; offset += DRIP_CHUNK_BYTES) {
        if (closing || response.destroyed) return;
        response.write(body.subarray(offset, offset + DRIP_CHUNK_BYTES));
        await sleep(scripted.dripMs, timers);
      }
      response.end();
      return;
    }
    response.end(body);
  }

  const server = http.createServer((request, response) => {
    // A client that gives up (a timeout under test) resets the connection; that is expected here.
    request.on('error', () => undefined);
    response.on('error', () => undefined);
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_REQUEST_BODY_BYTES) chunks.push(chunk);
    });
    request.on('end', () => {
      const url = new URL(request.url ?? '/', 'http://fake.invalid');
      const body = Buffer.concat(chunks);
      const recorded: RecordedRequest = {
        method: request.method ?? 'GET',
        path: decodeURIComponent(url.pathname),
        query: Object.fromEntries(url.searchParams),
        headers: request.headers,
        body,
        json: parseJson(body),
        sequence: ++arrivals,
      };
      requests.push(recorded);
      if (requests.length > MAX_RECORDED_REQUESTS) requests.shift();
      if (size > MAX_REQUEST_BODY_BYTES) {
        void answer(response, { status: 413, json: { error: 'request body too large for the fake' } });
        return;
      }
      const responder = queued.shift() ?? standing ?? defaultResponder;
      Promise.resolve(typeof responder === 'function' ? responder(recorded) : responder)
        .then((scripted) => answer(response, scripted))
        .catch(() => {
          if (!response.headersSent) response.writeHead(500).end();
        });
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    respondWith(responder) {
      standing = responder;
    },
    respondOnce(responder) {
      queued.push(responder);
    },
    reset() {
      standing = undefined;
      queued.length = 0;
      requests.length = 0;
    },
    close() {
      closing = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
