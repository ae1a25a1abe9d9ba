import type { z } from 'zod';
import type { Egress, EgressFailureCode } from '../ports.js';

/**
 * What every provider client shares: one JSON request, its answer validated with zod, and every
 * way it can go wrong turned into a failure value whose message is safe to store and show.
 */

export type ProviderErrorCode = 'invalid_input' | 'unreachable' | 'timeout' | 'http_error' | 'malformed_response' | 'provider_error';

export interface ProviderFailure {
  ok: false;
  error: { code: ProviderErrorCode; message: string };
}

export type ProviderResult<T extends object> = ({ ok: true } & T) | ProviderFailure;

/** A provider answer larger than this is refused: no real search or detection answer comes near it. */
export const PROVIDER_RESPONSE_MAX_BYTES = 8 * 1024 * 1024;
const DETAIL_MAX_CHARS = 200;

export interface ProviderCall<S extends z.ZodType> {
  /** Names the provider in messages, e.g. "regional search". */
  provider: string;
  url: URL;
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  json?: unknown;
  timeoutMs: number;
  connectTimeoutMs?: number;
  schema: S;
  /** Values that must never appear in a message (keys, client secrets). */
  secrets: readonly string[];
}

/** Removes every secret, raw or URL-encoded, from a text meant for operators. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (!secret) continue;
    for (const form of new Set([secret, encodeURIComponent(secret)])) out = out.split(form).join('[redacted]');
  }
  return out;
}

export function providerFailure(code: ProviderErrorCode, message: string, secrets: readonly string[]): ProviderFailure {
  return { ok: false, error: { code, message: redact(message, secrets) } };
}

function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => (issue.path.length ? `${issue.path.join('.')}: ${issue.message}` : issue.message))
    .join('; ');
}

/** The provider's own explanation of an HTTP error, when its body carries one in a known place. */
function errorDetail(body: Buffer): string | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
  if (!parsed || typeof parsed !== 'object') return null;
  const record = parsed as Record<string, unknown>;
  const inner = record.error && typeof record.error === 'object' ? (record.error as Record<string, unknown>) : {};
  // `error.detail` is Brave's place for it (`{"type": "ErrorResponse", "error": {"code", "detail"}}`).
  const detail = [record.errorMessage, inner.message, inner.detail, record.error, record.message].find((v) => typeof v === 'string');
  if (typeof detail !== 'string') return null;
  const oneLine = detail.replace(/\s+/g, ' ').trim();
  return oneLine.length > DETAIL_MAX_CHARS ? `${oneLine.slice(0, DETAIL_MAX_CHARS)}...` : oneLine;
}

/** The transport's failures as a provider call names them: an answer cut short is malformed; any other is `unreachable`. */
const EGRESS_FAILURES: Partial<Record<EgressFailureCode, ProviderErrorCode>> = {
  timeout: 'timeout',
  too_large: 'malformed_response',
  connection_closed: 'malformed_response',
};

const looksLikeHtml = (contentType: string, text: string) => /html/i.test(contentType) || /^\s*</.test(text);

export async function callProvider<S extends z.ZodType>(egress: Egress, call: ProviderCall<S>): Promise<{ ok: true; data: z.infer<S> } | ProviderFailure> {
  const fail = (code: ProviderErrorCode, message: string) => providerFailure(code, `${call.provider}: ${message}`, call.secrets);
  const headers: Record<string, string> = { accept: 'application/json', ...call.headers };
  let body: Buffer | undefined;
  if (call.json !== undefined) {
    body = Buffer.from(JSON.stringify(call.json), 'utf8');
    headers['content-type'] = 'application/json; charset=utf-8';
  }
  const outcome = await egress({
    url: call.url,
    method: call.method,
    headers,
    body,
    timeoutMs: call.timeoutMs,
    connectTimeoutMs: call.connectTimeoutMs,
    maxBytes: PROVIDER_RESPONSE_MAX_BYTES,
  });
  if (!outcome.ok) return fail(EGRESS_FAILURES[outcome.error.code] ?? 'unreachable', outcome.error.message);
  if (outcome.status < 200 || outcome.status > 299) {
    const detail = errorDetail(outcome.body);
    return fail('http_error', `answered HTTP ${outcome.status}${detail ? ` (${detail})` : ''}`);
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(outcome.body);
  } catch {
    return fail('malformed_response', 'the answer is not valid UTF-8');
  }
  if (text.trim() === '') return fail('malformed_response', 'the answer is empty');
  if (looksLikeHtml([outcome.headers['content-type'] ?? ''].flat()[0], text)) {
    return fail('malformed_response', 'answered with HTML instead of JSON');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return fail('malformed_response', 'the answer is not valid JSON');
  }
  const result = call.schema.safeParse(parsed);
  if (!result.success) return fail('malformed_response', `unexpected answer shape (${describeIssues(result.error)})`);
  return { ok: true, data: result.data };
}
