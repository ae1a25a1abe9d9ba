import type { FakeResults } from './regional.js';
import { startFakeServer, type FakeResponse, type FakeServer, type RecordedRequest } from './server.js';

/**
 * Brave Search's web and image search: GET /res/v1/web/search?q&count&offset and
 * /res/v1/images/search?q&count, the key in `X-Subscription-Token`, failures as ErrorResponse.
 */

export interface BraveWebResult {
  type?: 'search_result';
  title: string;
  url: string;
  description?: string;
  thumbnail?: { src: string; original?: string };
  meta_url?: { scheme: string; netloc: string; hostname: string };
}

export interface BraveImageResult {
  type?: 'image_result';
  title: string;
  /** The page the image is on. */
  url: string;
  source?: string;
  thumbnail?: { src: string; width?: number; height?: number };
  properties?: { url: string; placeholder?: string; width?: number; height?: number };
}

export interface FakeBraveSearch extends FakeServer {
  results: { image: FakeResults<BraveImageResult>; web: FakeResults<BraveWebResult> };
  searches(type: 'image' | 'web'): RecordedRequest[];
}

export const FAKE_BRAVE_SEARCH_API_KEY = 'fake-brave-token-BSAq81x';
const WEB_PATH = '/res/v1/web/search';
const IMAGE_PATH = '/res/v1/images/search';

/** Brave's error body; it comes with a 4xx status, or with 200 when a test scripts it so. */
export function braveError(status: number, code: string, detail: string): FakeResponse {
  return {
    status,
    json: { type: 'ErrorResponse', error: { id: 'c4ef4a2e-0000-4000-8000-000000000000', status, code, detail, meta: {} }, time: 1_764_000_000 },
  };
}

/** An image hit as Brave sends it: `url` the page, `properties.url` the image, `thumbnail.src` Brave's copy. */
export function braveImageResult(title: string, imageUrl: string, pageUrl: string): BraveImageResult {
  return {
    type: 'image_result',
    title,
    url: pageUrl,
    source: new URL(pageUrl).host,
    thumbnail: { src: imageUrl, width: 64, height: 64 },
    properties: { url: imageUrl, placeholder: imageUrl, width: 64, height: 64 },
  };
}

/** A web hit; `pageImage` is the page's picture, which Brave reports as `thumbnail.original`. */
export function braveWebResult(title: string, pageUrl: string, pageImage?: string): BraveWebResult {
  const url = new URL(pageUrl);
  return {
    type: 'search_result',
    title,
    url: pageUrl,
    description: `<strong>${title}</strong> ...`,
    meta_url: { scheme: url.protocol.replace(':', ''), netloc: url.host, hostname: url.hostname },
    ...(pageImage ? { thumbnail: { src: pageImage, original: pageImage } } : {}),
  };
}

export async function startFakeBraveSearch(apiKey = FAKE_BRAVE_SEARCH_API_KEY): Promise<FakeBraveSearch> {
  const results: FakeBraveSearch['results'] = { image: [], web: [] };
  const list = <T>(source: FakeResults<T>, q: string) => (typeof source === 'function' ? source(q) : source);

  const server = await startFakeServer((request) => {
    if (request.method !== 'GET' || (request.path !== WEB_PATH && request.path !== IMAGE_PATH)) return braveError(404, 'RESOURCE_NOT_FOUND', 'Not found');
    if (request.headers['x-subscription-token'] !== apiKey) return braveError(422, 'SUBSCRIPTION_TOKEN_INVALID', 'The provided subscription token is invalid.');
    const q = request.query.q ?? '';
    const count = Number(request.query.count ?? (request.path === WEB_PATH ? '20' : '50'));
    if (q === '' || q.length > 400) return braveError(422, 'VALIDATION', 'Unable to validate request parameter(s)');
    if (request.path === WEB_PATH) {
      const offset = Number(request.query.offset ?? '0');
      if (!Number.isInteger(count) || count < 1 || count > 20 || !Number.isInteger(offset) || offset < 0 || offset > 9) {
        return braveError(422, 'VALIDATION', 'Unable to validate request parameter(s)');
      }
      const hits = list(results.web, q).slice(offset * count, (offset + 1) * count);
      // Brave leaves `web` out when nothing matched.
      return {
        json: {
          type: 'search',
          query: { original: q },
          mixed: { type: 'mixed', main: [] },
          ...(hits.length ? { web: { type: 'search', results: hits } } : {}),
        },
      };
    }
    if (!Number.isInteger(count) || count < 1 || count > 200) return braveError(422, 'VALIDATION', 'Unable to validate request parameter(s)');
    return { json: { type: 'images', query: { original: q }, results: list(results.image, q).slice(0, count) } };
  });

  return Object.assign(server, {
    results,
    searches: (type: 'image' | 'web') => server.requests.filter((r) => r.path === (type === 'image' ? IMAGE_PATH : WEB_PATH)),
  });
}
