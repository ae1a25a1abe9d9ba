import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.js';

const running = useTestServer();
const port = () => Number(new URL(running.url).port);

/** Sends bytes exactly as given (fetch would refuse to) and reads the whole answer. */
function rawRequest(text: string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port(), '127.0.0.1', () => socket.write(text));
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => (answer += chunk));
    socket.on('error', reject);
    socket.setTimeout(5000, () => socket.destroy(new Error(`no answer to ${JSON.stringify(text.slice(0, 40))}`)));
    socket.on('close', () => {
      const [head, ...rest] = answer.split('\r\n\r\n');
      let body = rest.join('\r\n\r\n');
      // A chunked answer: keep only the chunk data.
      if (/transfer-encoding: chunked/i.test(head))
        body = body
          .split('\r\n')
          .filter((_, i) => i % 2 === 1)
          .join('');
      resolve({ status: Number(head.split(' ')[1]), headers: head, body });
    });
  });
}

function expectContractError(answer: { status: number; headers: string; body: string }, status: number, code: string) {
  expect(answer.status).toBe(status);
  expect(answer.headers).toMatch(/content-type: application\/json/i);
  const parsed = JSON.parse(answer.body);
  expect(parsed).toEqual({ error: { code, message: expect.any(String) } });
  expect(answer.body).not.toMatch(/\bat \S|node_modules|\.ts\b|\/work\/|file:/);
}

describe('requests the router never sees in a usable form', () => {
  it.each(['[::1', 'a b', '127.0.0.1:99999', '%00', 'exa mple.com:80'])(
    'a malformed Host header %j gets a 400 with the error shape, no stack',
    async (host) => {
      const answer = await rawRequest(`GET /health HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      expectContractError(answer, 400, 'invalid_request');
    },
  );

  it('the same malformed Host on an API route and on media is refused the same way', async () => {
    expectContractError(await rawRequest('POST /api/submissions/reload HTTP/1.1\r\nHost: [::1\r\nConnection: close\r\n\r\n'), 400, 'invalid_request');
    expectContractError(await rawRequest('GET /media/images/x.png HTTP/1.1\r\nHost: a b\r\nConnection: close\r\n\r\n'), 400, 'invalid_request');
  });

  it('a method HTTP does not know gets the error shape, not a bare 400', async () => {
    expectContractError(await rawRequest('BREW /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'), 400, 'invalid_request');
  });

  it('a known method without a route is a 404 in the error shape', async () => {
    expectContractError(await rawRequest('PUT /health HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n'), 404, 'not_found');
  });

  it('a body whose chunked framing is broken gets the error shape', async () => {
    const answer = await rawRequest(
      'POST /api/search/manual HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
    );
    expectContractError(answer, 400, 'invalid_request');
  });

  it('a request target that is not a path, and headers too large, get the error shape', async () => {
    expectContractError(await rawRequest('GET http://[::1/health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'), 404, 'not_found');
    expectContractError(
      await rawRequest(`GET /health HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20_000)}\r\nConnection: close\r\n\r\n`),
      413,
      'payload_too_large',
    );
  });

  it('keeps answering normally after all of the above', async () => {
    const res = await fetch(`${running.url}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'ok' });
  });
});
