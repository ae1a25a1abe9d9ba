/**
 * The outbound HTTP port: every request the service makes (providers, downloads, page captures,
 * alert webhooks) goes through an `Egress`. Two adapters: node:http with a checking DNS lookup
 * (lib/net/http-client.ts) and the Workers fetch (lib/net/fetch-egress.ts). Both answer with values,
 * never by throwing, and both stop reading a body at `maxBytes`.
 */
export interface EgressRequest {
  url: URL;
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: Buffer;
  /** Deadline for the whole exchange: connect, headers and body. */
  timeoutMs: number;
  /** A shorter deadline for establishing the connection only (where the adapter can tell). */
  connectTimeoutMs?: number;
  /** Reading stops, and the request fails, once the body passes this many bytes. */
  maxBytes: number;
  /** The URL came from the open web: refuse a host whose addresses are not public. */
  publicOnly?: boolean;
}

export type EgressFailureCode = 'timeout' | 'connect_timeout' | 'unreachable' | 'too_large' | 'connection_closed' | 'blocked_address';

export interface EgressResponse {
  ok: true;
  status: number;
  /** Lower-case names. */
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export interface EgressFailure {
  ok: false;
  error: { code: EgressFailureCode; message: string };
}

export type EgressOutcome = EgressResponse | EgressFailure;

export type Egress = (request: EgressRequest) => Promise<EgressOutcome>;
