import type { z } from 'zod';
import { invalid, ServiceError } from './errors.js';
import { jsonAnswer } from './json-answer.js';

export function json(body: unknown, status = 200): Response {
  return jsonText(JSON.stringify(body), status);
}

/** An answer already written as JSON (one kept from an earlier request, as UTF-8 bytes). */
export function jsonText(text: string | Uint8Array<ArrayBuffer>, status = 200): Response {
  return jsonAnswer(text, status, { 'cache-control': 'no-store' });
}

/** Why a zod schema refused the input, in one line an operator can act on. */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message)).join('; ');
}

export function parseWith<S extends z.ZodType>(schema: S, value: unknown, what: string): z.infer<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw invalid(`${what}: ${describeIssues(result.error)}`);
  return result.data;
}

/**
 * Reads a JSON body with a byte limit. An empty body counts as `{}` so endpoints whose body is
 * optional accept a bare POST; anything else must be `application/json` and valid JSON.
 */
export async function readJson(request: Request, maxBytes: number): Promise<unknown> {
  const declared = Number(request.headers.get('content-length') ?? '');
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);
  const bytes = await readLimited(request, maxBytes);
  if (bytes.length === 0) return {};
  const type = (request.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'application/json') {
    throw new ServiceError('unsupported_media_type', 'the body must be sent as application/json');
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw invalid('the body is not valid UTF-8');
  }
  try {
    return JSON.parse(text);
  } catch {
    throw invalid('the body is not valid JSON');
  }
}

export async function readBody<S extends z.ZodType>(request: Request, maxBytes: number, schema: S): Promise<z.infer<S>> {
  return parseWith(schema, await readJson(request, maxBytes), 'invalid body');
}

export function readQuery<S extends z.ZodType>(request: Request, schema: S): z.infer<S> {
  const params = Object.fromEntries(new URL(request.url).searchParams);
  return parseWith(schema, params, 'invalid query');
}

function tooLarge(maxBytes: number) {
  return new ServiceError('payload_too_large', `the body is larger than ${maxBytes} bytes`);
}

async function readLimited(request: Request, maxBytes: number): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    let chunk: ReadableStreamReadResult<Uint8Array>;
    try {
      chunk = await reader.read();
    } catch {
      throw invalid('the body could not be read to its end');
    }
    const { done, value } = chunk;
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}
