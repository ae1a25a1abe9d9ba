import type { FakeResults } from './regional.js';
import { startFakeServer, type FakeServer, type RecordedRequest } from './server.js';

/** The global custom search JSON API: GET ?key&cx&q&num&start[&searchType=image]. */

export interface RawSearchItem {
  kind?: string;
  title: string;
  htmlTitle?: string;
  link: string;
  displayLink?: string;
  snippet?: string;
  mime?: string;
  image?: { contextLink: string; thumbnailLink: string; width?: number; height?: number; byteSize?: number };
  pagemap?: { cse_image?: { src: string }[]; cse_thumbnail?: { src: string; width?: string; height?: string }[]; metatags?: Record<string, string>[] };
}

export interface FakeGlobalSearch extends FakeServer {
  /** The JSON API endpoint (the service's GLOBAL_CUSTOM_SEARCH_URL). */
  endpoint: string;
  results: { image: FakeResults<RawSearchItem>; web: FakeResults<RawSearchItem> };
  searches(type: 'image' | 'web'): RecordedRequest[];
}

export const FAKE_GLOBAL_SEARCH_API_KEY = 'fake-search-key-AIza51q';
export const FAKE_GLOBAL_SEARCH_CX = 'fake-cx-0123456789';
const PATH = '/customsearch/v1';

const invalid = (message: string) => ({
  status: 400,
  json: { error: { code: 400, message, errors: [{ message, domain: 'global', reason: 'invalid' }], status: 'INVALID_ARGUMENT' } },
});

/** An image-search hit as the provider sends it. */
export function imageSearchItem(title: string, imageUrl: string, pageUrl: string): RawSearchItem {
  return {
    kind: 'customsearch#result',
    title,
    htmlTitle: title,
    link: imageUrl,
    displayLink: new URL(pageUrl).host,
    mime: 'image/png',
    image: { contextLink: pageUrl, thumbnailLink: imageUrl, width: 64, height: 64, byteSize: 1000 },
  };
}

/** A web-search hit; `pageImage` goes into the pagemap the way the engine reports it. */
export function webSearchItem(title: string, pageUrl: string, pageImage?: string): RawSearchItem {
  return {
    kind: 'customsearch#result',
    title,
    htmlTitle: `<b>${title}</b>`,
    link: pageUrl,
    displayLink: new URL(pageUrl).host,
    snippet: `${title} ...`,
    ...(pageImage ? { pagemap: { cse_image: [{ src: pageImage }], metatags: [{ 'og:image': pageImage, 'og:title': title }] } } : {}),
  };
}

export async function startFakeGlobalSearch(credentials: { apiKey?: string; cx?: string } = {}): Promise<FakeGlobalSearch> {
  const apiKey = credentials.apiKey ?? FAKE_GLOBAL_SEARCH_API_KEY;
  const cx = credentials.cx ?? FAKE_GLOBAL_SEARCH_CX;
  const results: FakeGlobalSearch['results'] = { image: [], web: [] };

  const server = await startFakeServer((request) => {
    if (request.method !== 'GET' || request.path !== PATH) return { status: 404, json: { error: { code: 404, message: 'Not Found' } } };
    if (request.query.key !== apiKey) return invalid('API key not valid. Please pass a valid API key.');
    if (request.query.cx !== cx) return invalid('Request contains an invalid argument.');
    const q = request.query.q ?? '';
    const num = Number(request.query.num ?? '10');
    const start = Number(request.query.start ?? '1');
    if (q === '') return invalid('Missing query.');
    if (!Number.isInteger(num) || num < 1 || num > 10) return invalid('Request contains an invalid argument.');
    if (!Number.isInteger(start) || start < 1 || start + num - 1 > 100) return invalid('Request contains an invalid argument.');
    const source = request.query.searchType === 'image' ? results.image : results.web;
    const all = typeof source === 'function' ? source(q) : source;
    const items = all.slice(start - 1, start - 1 + num);
    return {
      json: {
        kind: 'customsearch#search',
        queries: { request: [{ title: 'Custom Search', totalResults: String(all.length), searchTerms: q, count: num, startIndex: start }] },
        searchInformation: {
          searchTime: 0.12,
          formattedSearchTime: '0.12',
          totalResults: String(all.length),
          formattedTotalResults: String(all.length),
        },
        // The provider leaves `items` out when nothing matched.
        ...(items.length ? { items } : {}),
      },
    };
  });

  return Object.assign(server, {
    endpoint: `${server.url}${PATH}`,
    results,
    searches: (type: 'image' | 'web') => server.requests.filter((r) => r.path === PATH && (r.query.searchType === 'image') === (type === 'image')),
  });
}
