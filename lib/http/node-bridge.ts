import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorResponse, invalid } from '../errors.js';

/** What a handler gets beside the request: the node objects, whose socket gives the caller's address. */
export interface NodeContext {
  req: IncomingMessage;
  res: ServerResponse;
}

export type FetchHandler = (request: Request, ctx: NodeContext) => Promise<Response>;

/** Reports an answer that failed: a handler that threw, or a body that failed while it was read. */
export type BridgeErrorLog = (message: string, error: unknown) => void;

/**
 * A node:http request listener for a fetch-style handler. The WHATWG Request carries only what the
 * router reads (method, URL, headers, and a body stream when the request has a body); the Response
 * goes out in one write when its body is one chunk (a string or bytes: Node then sets
 * Content-Length), else chunk by chunk at the pace the client reads.
 */
export function nodeListener(handle: FetchHandler, logError: BridgeErrorLog): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    respond(req, res, handle).catch((error) => {
      logError('the answer could not be sent', error);
      if (res.headersSent || res.destroyed) {
        // The answer has started: closing is the only way to tell the client it is incomplete.
        res.destroy();
        return;
      }
      for (const name of res.getHeaderNames()) res.removeHeader(name);
      send(errorResponse(error), req, res).catch(() => res.destroy());
    });
  };
}

async function respond(req: IncomingMessage, res: ServerResponse, handle: FetchHandler): Promise<void> {
  const request = toRequest(req);
  // A Request cannot hold a URL that does not parse (a malformed Host header becomes part of it).
  const response = request ? await handle(request, { req, res }) : errorResponse(invalid('the request URL or its Host header is not valid'));
  await send(response, req, res);
}

/** The request as the router sees it; null when its URL or a header cannot be a WHATWG Request's. */
function toRequest(req: IncomingMessage): Request | null {
  const url = `http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`;
  const headers = new Headers();
  const raw = req.rawHeaders;
  // An HTTP/1.1 request has a body exactly when it declares a length or a transfer coding.
  const hasBody = req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0';
  try {
    for (let i = 0; i < raw.length; i += 2) headers.append(raw[i], raw[i + 1]);
    if (!hasBody || req.method === 'GET' || req.method === 'HEAD') return new Request(url, { method: req.method, headers });
    return new Request(url, { method: req.method, headers, body: bodyStream(req), duplex: 'half' } as RequestInit);
  } catch {
    // The URL does not parse, or Node's parser let through a header value or method Fetch refuses.
    return null;
  }
}

/**
 * The node request's body as a ReadableStream that reads from the socket only while the reader
 * wants more. A client that goes away mid-body errors the stream; a reader that cancels (a body over
 * the limit) stops it, and Node discards the rest once the answer is sent.
 */
function bodyStream(req: IncomingMessage): ReadableStream<Uint8Array> {
  let settled = false;
  const detach = () => {
    settled = true;
    req.off('data', onData).off('end', onEnd).off('close', onClose);
  };
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const onData = (chunk: Buffer) => {
    controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    if ((controller.desiredSize ?? 0) <= 0) req.pause();
  };
  const onEnd = () => {
    detach();
    controller.close();
  };
  const onClose = () => {
    if (settled) return;
    detach();
    controller.error(new Error('the client closed the connection before the body ended'));
  };
  // Kept for the request's whole life: with a listener, Node reports the abort here instead of nowhere.
  req.on('error', onClose);
  return new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
        req.pause();
        req.on('data', onData).on('end', onEnd).on('close', onClose);
      },
      pull() {
        req.resume();
      },
      cancel() {
        detach();
        req.pause();
      },
    },
    { highWaterMark: 64 * 1024, size: (chunk) => chunk.byteLength },
  );
}

/** Writes the response: status, every header (Set-Cookie as its separate values) and the body. */
async function send(response: Response, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = response.body;
  if (res.destroyed) {
    await body?.cancel().catch(() => undefined);
    return;
  }
  res.statusCode = response.status;
  for (const [name, value] of response.headers) if (name !== 'set-cookie') res.setHeader(name, value);
  const cookies = response.headers.getSetCookie();
  if (cookies.length) res.setHeader('set-cookie', cookies);
  // HEAD gets the headers only; a streamed body is not produced for nobody.
  if (!body || req.method === 'HEAD') {
    res.end();
    await body?.cancel().catch(() => undefined);
    return;
  }
  const reader = body.getReader();
  // Stop producing as soon as the client is gone (an export of 100,000 rows, a large image).
  const onClose = () => {
    if (!res.writableFinished) reader.cancel(new Error('the client went away')).catch(() => undefined);
  };
  res.once('close', onClose);
  try {
    const first = await reader.read();
    if (first.done) return void res.end();
    const second = await reader.read();
    if (second.done) return void res.end(first.value);
    res.write(first.value);
    let next: ReadableStreamReadResult<Uint8Array> = second;
    while (!next.done && !res.destroyed) {
      if (!res.write(next.value)) await drained(res);
      next = await reader.read();
    }
    if (!res.destroyed) res.end();
  } catch (error) {
    if (!res.destroyed) throw error;
  } finally {
    res.off('close', onClose);
  }
}

/** Resolves when the response can take more, or is gone. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done).off('close', done);
      resolve();
    };
    res.on('drain', done).on('close', done);
  });
}
