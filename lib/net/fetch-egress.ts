import type { Egress, EgressFailureCode, EgressOutcome } from '../ports.js';

/**
 * The Workers adapter of the egress port, on `fetch`. A Worker cannot resolve a name itself, so
 * `publicOnly` refuses what can be refused before the request (address literals are checked by the
 * caller, names of this machine here); Cloudflare's network does not route a Worker's fetch to
 * private addresses. Redirects are handed back to the caller, which checks every hop.
 */
const LOCAL_NAMES = /^(localhost|.*\.localhost|.*\.local|.*\.internal)$/i;

export function fetchEgress(fetcher: typeof fetch = fetch): Egress {
  return async (request) => {
    const fail = (code: EgressFailureCode, message: string): EgressOutcome => ({ ok: false, error: { code, message } });
    if (request.publicOnly && LOCAL_NAMES.test(request.url.hostname)) return fail('blocked_address', `${request.url.hostname} is a local name`);
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), request.timeoutMs);
    try {
      let response: Response;
      try {
        response = await fetcher(request.url.href, {
          method: request.method,
          headers: request.headers,
          // A copy on its own ArrayBuffer, as fetch's body types ask.
          body: request.body?.slice(),
          redirect: 'manual',
          signal: controller.signal,
        });
      } catch {
        return controller.signal.aborted ? fail('timeout', `no complete answer within ${request.timeoutMs} ms`) : fail('unreachable', 'connection failed');
      }
      const declared = Number(response.headers.get('content-length'));
      if (Number.isFinite(declared) && declared > request.maxBytes) {
        await response.body?.cancel();
        return fail('too_large', `the answer is larger than ${request.maxBytes} bytes`);
      }
      const chunks: Uint8Array[] = [];
      let received = 0;
      const reader = response.body?.getReader();
      try {
        for (;;) {
          if (!reader) break;
          const { done, value } = await reader.read();
          if (done) break;
          received += value.byteLength;
          if (received > request.maxBytes) {
            await reader.cancel();
            return fail('too_large', `the answer is larger than ${request.maxBytes} bytes`);
          }
          chunks.push(value);
        }
      } catch {
        return controller.signal.aborted
          ? fail('timeout', `no complete answer within ${request.timeoutMs} ms`)
          : fail('connection_closed', 'the connection closed before the answer was complete');
      }
      const headers: Record<string, string> = {};
      response.headers.forEach((value, name) => {
        headers[name.toLowerCase()] = value;
      });
      return { ok: true, status: response.status, headers, body: Buffer.concat(chunks) };
    } finally {
      clearTimeout(timer);
    }
  };
}
