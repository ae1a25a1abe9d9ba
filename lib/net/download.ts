import type { Config } from '../config.js';
import type { ImageFormat, ImageProbe } from '../images/decode.js';
import { ImageRejected } from '../images/rejected.js';
import { blockedAddressReason, isAddressLiteral } from './address.js';
import type { Egress, EgressFailureCode, EgressResponse } from '../ports.js';

/**
 * Fetching URLs that came from the open web (search results, page images). Such a URL may point
 * anywhere, including inside the operator's network, so every hop is checked: scheme, credentials,
 * an address literal here, and every address the host resolves to by the egress adapter
 * (`publicOnly`).
 */

export interface DownloadSettings {
  maxBytes: number;
  timeoutMs: number;
  /** Lets loopback and private addresses through (SVC_ALLOW_PRIVATE_DOWNLOADS). */
  allowPrivate: boolean;
  egress: Egress;
}

export interface ImageDownloadSettings extends DownloadSettings {
  /** Reads the real format and size (the images port's `probe`, with its pixel limit). */
  probe: (bytes: Buffer) => Promise<ImageProbe>;
}

export function downloadSettings(config: Config, egress: Egress): DownloadSettings {
  return {
    egress,
    maxBytes: config.SVC_DOWNLOAD_MAX_BYTES,
    timeoutMs: config.SVC_DOWNLOAD_TIMEOUT_MS,
    allowPrivate: config.SVC_ALLOW_PRIVATE_DOWNLOADS,
  };
}

export type DownloadErrorCode =
  | 'invalid_url'
  | 'unsupported_scheme'
  | 'blocked_address'
  | 'too_many_redirects'
  | 'too_large'
  | 'timeout'
  | 'unreachable'
  | 'http_error'
  | 'not_an_image'
  | 'not_html';

export interface DownloadFailure {
  ok: false;
  error: { code: DownloadErrorCode; message: string };
}

export interface FetchedDocument {
  ok: true;
  /** Where the bytes came from after redirects. */
  url: string;
  /** The final answer's status (2xx) and headers, as evidence of what the server said. */
  status: number;
  headers: EgressResponse['headers'];
  contentType: string | null;
  body: Buffer;
}

export interface DownloadedImage {
  ok: true;
  url: string;
  bytes: Buffer;
  format: ImageFormat;
  width: number;
  height: number;
}

export const MAX_REDIRECTS = 3;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const USER_AGENT = 'image-rights-service (evidence collection)';

const failure = (code: DownloadErrorCode, message: string): DownloadFailure => ({ ok: false, error: { code, message } });

/** The transport's failures a download names as they are; any other is `unreachable`. */
const EGRESS_FAILURES: Partial<Record<EgressFailureCode, DownloadErrorCode>> = {
  blocked_address: 'blocked_address',
  too_large: 'too_large',
  timeout: 'timeout',
};

function checkTarget(raw: string, base: URL | undefined, allowPrivate: boolean): URL | DownloadFailure {
  let url: URL;
  try {
    url = base ? new URL(raw, base) : new URL(raw);
  } catch {
    return failure('invalid_url', 'not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return failure('unsupported_scheme', `only http and https are fetched, not ${url.protocol.replace(/:$/, '')}`);
  }
  if (url.username || url.password) return failure('invalid_url', 'URLs with credentials are not fetched');
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (!allowPrivate && isAddressLiteral(host)) {
    const reason = blockedAddressReason(host);
    if (reason) return failure('blocked_address', `${reason} addresses are not fetched`);
  }
  return url;
}

/**
 * GETs a URL from the open web with the size, time, redirect and address rules above.
 * Every problem is a failure value; nothing is thrown.
 */
export async function fetchSafely(rawUrl: string, settings: DownloadSettings, accept: string): Promise<FetchedDocument | DownloadFailure> {
  const deadline = Date.now() + settings.timeoutMs;
  let target = checkTarget(rawUrl, undefined, settings.allowPrivate);
  for (let redirects = 0; ; redirects++) {
    if (!(target instanceof URL)) return target;
    const remaining = deadline - Date.now();
    if (remaining <= 0) return failure('timeout', `no complete answer within ${settings.timeoutMs} ms`);
    const outcome = await settings.egress({
      url: target,
      method: 'GET',
      headers: { accept, 'user-agent': USER_AGENT },
      timeoutMs: remaining,
      maxBytes: settings.maxBytes,
      publicOnly: !settings.allowPrivate,
    });
    if (!outcome.ok) {
      const code = EGRESS_FAILURES[outcome.error.code] ?? 'unreachable';
      return failure(code, code === 'timeout' ? `no complete answer within ${settings.timeoutMs} ms` : outcome.error.message);
    }
    const location = [outcome.headers.location].flat()[0];
    if (REDIRECT_STATUSES.has(outcome.status) && location) {
      if (redirects >= MAX_REDIRECTS) return failure('too_many_redirects', `more than ${MAX_REDIRECTS} redirects`);
      target = checkTarget(location, target, settings.allowPrivate);
      continue;
    }
    if (outcome.status < 200 || outcome.status > 299) return failure('http_error', `the server answered HTTP ${outcome.status}`);
    const type = outcome.headers['content-type'];
    const contentType = (Array.isArray(type) ? type[0] : type) ?? null;
    return { ok: true, url: target.href, status: outcome.status, headers: outcome.headers, contentType, body: outcome.body };
  }
}

/** Downloads an image and checks its real format and size; the server's content type is not trusted. */
export async function downloadImage(rawUrl: string, settings: ImageDownloadSettings): Promise<DownloadedImage | DownloadFailure> {
  const fetched = await fetchSafely(rawUrl, settings, 'image/*');
  if (!fetched.ok) return fetched;
  try {
    const probe = await settings.probe(fetched.body);
    return { ok: true, url: fetched.url, bytes: fetched.body, ...probe };
  } catch (error) {
    if (error instanceof ImageRejected) return failure('not_an_image', error.reason);
    return failure('not_an_image', 'not an image');
  }
}
