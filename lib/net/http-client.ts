import { lookup as dnsLookup } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { LookupFunction } from 'node:net';
import { blockedAddressReason } from './address.js';
import type { Egress, EgressRequest } from '../ports.js';

/**
 * The one way the service makes an outbound HTTP request. Built on node:http rather than fetch
 * because the service needs three things fetch does not give: a connect deadline separate from
 * the read deadline (the language model), a DNS lookup that is checked before connecting
 * (downloads), and a hard stop on the number of body bytes read.
 */

export interface HttpRequestOptions extends Omit<EgressRequest, 'publicOnly'> {
  /** Used instead of the system resolver; it may refuse a host name. */
  lookup?: LookupFunction;
}

export type HttpFailureCode = 'timeout' | 'connect_timeout' | 'unreachable' | 'too_large' | 'connection_closed';

export interface HttpResponse {
  ok: true;
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface HttpFailure {
  ok: false;
  error: { code: HttpFailureCode; message: string };
  /** The error a lookup function refused the host with, so callers can report it as is. */
  cause?: unknown;
}

export type HttpOutcome = HttpResponse | HttpFailure;

/** Network error codes turned into words; the raw error text can carry host names and ports. */
function describeNetworkError(error: unknown): string {
  const code = (error as { code?: unknown })?.code;
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host name could not be resolved';
    case 'ECONNRESET':
      return 'connection reset';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    case 'CERT_HAS_EXPIRED':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return 'TLS certificate not accepted';
    default:
      return typeof code === 'string' ? `connection failed (${code})` : 'connection failed';
  }
}

export function httpRequest(options: HttpRequestOptions): Promise<HttpOutcome> {
  return new Promise<HttpOutcome>((resolve) => {
    const { url } = options;
    const client = url.protocol === 'https:' ? https : http;
    let settled = false;
    let request: http.ClientRequest | undefined;
    const timers: NodeJS.Timeout[] = [];

    const finish = (outcome: HttpOutcome) => {
      if (settled) return;
      settled = true;
      for (const timer of timers) clearTimeout(timer);
      request?.destroy();
      resolve(outcome);
    };
    const fail = (code: HttpFailureCode, message: string, cause?: unknown) =>
      finish({ ok: false, error: { code, message }, ...(cause === undefined ? {} : { cause }) });

    const headers: Record<string, string> = { ...options.headers };
    if (options.body) headers['content-length'] = String(options.body.length);

    try {
      request = client.request(url, {
        method: options.method,
        headers,
        lookup: options.lookup,
        // Each call gets its own connection: no pooled socket outlives a deadline.
        agent: false,
      });
    } catch {
      fail('unreachable', 'the request could not be made');
      return;
    }

    timers.push(setTimeout(() => fail('timeout', `no complete answer within ${options.timeoutMs} ms`), options.timeoutMs));

    let connected = false;
    if (options.connectTimeoutMs !== undefined) {
      const connectTimeoutMs = options.connectTimeoutMs;
      timers.push(
        setTimeout(() => {
          if (!connected) fail('connect_timeout', `could not connect within ${connectTimeoutMs} ms`);
        }, connectTimeoutMs),
      );
    }
    request.on('socket', (socket) => {
      const onConnect = () => {
        connected = true;
      };
      if (!socket.connecting) onConnect();
      else socket.once('connect', onConnect);
    });

    request.on('error', (error) => {
      if ((error as { refusedByLookup?: boolean }).refusedByLookup) {
        fail('unreachable', error.message, error);
      } else {
        fail('unreachable', describeNetworkError(error));
      }
    });

    request.on('response', (response) => {
      const declared = Number(response.headers['content-length']);
      if (Number.isFinite(declared) && declared > options.maxBytes) {
        fail('too_large', `the answer is larger than ${options.maxBytes} bytes`);
        return;
      }
      const chunks: Buffer[] = [];
      let received = 0;
      response.on('data', (chunk: Buffer) => {
        if (settled) return;
        received += chunk.length;
        if (received > options.maxBytes) {
          fail('too_large', `the answer is larger than ${options.maxBytes} bytes`);
          return;
        }
        chunks.push(chunk);
      });
      response.on('aborted', () => fail('connection_closed', 'the connection closed before the answer was complete'));
      response.on('error', () => fail('connection_closed', 'the connection closed before the answer was complete'));
      response.on('end', () => {
        if (!response.complete) {
          fail('connection_closed', 'the connection closed before the answer was complete');
          return;
        }
        finish({ ok: true, status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) });
      });
    });

    request.end(options.body);
  });
}

/** An error a checking lookup function gives back, carried through to the caller's failure. */
export class LookupRefused extends Error {
  readonly refusedByLookup = true;
  readonly code = 'ELOOKUPREFUSED';
  constructor(message: string) {
    super(message);
    this.name = 'LookupRefused';
  }
}

/** A lookup that resolves every address of the host and refuses the host if any is not public. */
function checkedLookup(): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { all: true, family: options.family, hints: options.hints }, (error, addresses) => {
      if (error) {
        callback(error, '', 0);
        return;
      }
      if (addresses.length === 0) {
        callback(new LookupRefused(`${hostname} has no address`), '', 0);
        return;
      }
      for (const { address } of addresses) {
        const reason = blockedAddressReason(address);
        if (reason) {
          callback(new LookupRefused(`${hostname} resolves to a ${reason} address`), '', 0);
          return;
        }
      }
      if (options.all) {
        (callback as unknown as (err: null, all: typeof addresses) => void)(null, addresses);
      } else {
        callback(null, addresses[0].address, addresses[0].family);
      }
    });
  };
}

/**
 * The Node adapter of the egress port. For a URL from the open web the lookup that checks every
 * address is the lookup that connects, so a second DNS answer cannot swap in a private address.
 */
export const nodeEgress: Egress = async ({ publicOnly, body, ...request }) => {
  const outcome = await httpRequest({ ...request, body, lookup: publicOnly ? checkedLookup() : undefined });
  if (outcome.ok) return outcome;
  if (outcome.cause instanceof LookupRefused) return { ok: false, error: { code: 'blocked_address', message: outcome.error.message } };
  return { ok: false, error: outcome.error };
};
