import { startFakeServer, type FakeResponse, type FakeServer, type RecordedRequest } from './server.js';

/** The regional search provider: image, blog and web-document search with client-id/secret headers. */

export interface RegionalImageItem {
  title: string;
  link: string;
  thumbnail: string;
  sizeheight: string;
  sizewidth: string;
}

export interface RegionalDocumentItem {
  title: string;
  link: string;
  description: string;
  bloggername?: string;
  postdate?: string;
}

/** A fixed list, or one made from the query the fake received. */
export type FakeResults<T> = T[] | ((query: string) => T[]);

export interface FakeRegional extends FakeServer {
  results: { image: FakeResults<RegionalImageItem>; blog: FakeResults<RegionalDocumentItem>; webkr: FakeResults<RegionalDocumentItem> };
  /** The search requests received for one kind (`image`, `blog` or `webkr`). */
  searches(kind: 'image' | 'blog' | 'webkr'): RecordedRequest[];
}

export const FAKE_REGIONAL_CLIENT_ID = 'fake-regional-client-id';
export const FAKE_REGIONAL_CLIENT_SECRET = 'fake-regional-client-secret-7f3a';

const error = (status: number, errorCode: string, errorMessage: string): FakeResponse => ({
  status,
  json: { errorMessage, errorCode },
});

export async function startFakeRegional(credentials: { clientId?: string; clientSecret?: string } = {}): Promise<FakeRegional> {
  const clientId = credentials.clientId ?? FAKE_REGIONAL_CLIENT_ID;
  const clientSecret = credentials.clientSecret ?? FAKE_REGIONAL_CLIENT_SECRET;
  const results: FakeRegional['results'] = { image: [], blog: [], webkr: [] };

  const server = await startFakeServer((request) => {
    const kind = /^\/v1\/search\/(image|blog|webkr)$/.exec(request.path)?.[1] as 'image' | 'blog' | 'webkr' | undefined;
    if (request.method !== 'GET' || !kind) return error(404, 'SE404', 'Not exist api');
    if (request.headers['x-regional-client-id'] !== clientId || request.headers['x-regional-client-secret'] !== clientSecret) {
      return error(401, '024', 'Authentication failed.');
    }
    const query = request.query.query ?? '';
    const display = Number(request.query.display ?? '10');
    const start = Number(request.query.start ?? '1');
    if (query === '') return error(400, 'SE01', 'Incorrect query request.');
    if (!Number.isInteger(display) || display < 1 || display > 100) return error(400, 'SE02', 'Invalid display value.');
    if (!Number.isInteger(start) || start < 1 || start > 1000) return error(400, 'SE03', 'Invalid start value.');
    const source = results[kind];
    const all: unknown[] = typeof source === 'function' ? source(query) : source;
    return {
      json: {
        lastBuildDate: new Date(0).toUTCString(),
        total: all.length,
        start,
        display,
        items: all.slice(start - 1, start - 1 + display),
      },
    };
  });

  return Object.assign(server, {
    results,
    searches: (kind: 'image' | 'blog' | 'webkr') => server.requests.filter((r) => r.path === `/v1/search/${kind}`),
  });
}
