import { beforeAll, describe, expect, it } from 'vitest';
import { buildConfig } from '../../lib/config.js';
import { createRegionalClient, regionalSettings, type RegionalClient } from '../../lib/providers/regional.js';
import { FAKE_REGIONAL_CLIENT_ID, FAKE_REGIONAL_CLIENT_SECRET, startFakeRegional, type RegionalImageItem } from '../fakes/regional.js';
import { nodeEgress } from '../../lib/net/http-client.js';
import { useFakeProviders } from '../helpers/fake-world.js';

const fakes = useFakeProviders({ resetEach: true });
let client: RegionalClient;

const imageItem = (n: number): RegionalImageItem => ({
  title: `<b>Astronaut</b> photo ${n}`,
  link: `https://images.example.org/astronaut-${n}.jpg`,
  thumbnail: `https://thumbs.example.org/astronaut-${n}.jpg`,
  sizewidth: '640',
  sizeheight: '480',
});

/** The service's configuration pointed at the fakes. */
const configFor = (extra: Record<string, string> = {}) => buildConfig({ ...fakes.settings, ...extra }).config;

beforeAll(() => {
  client = createRegionalClient(regionalSettings(configFor()), nodeEgress);
});

describe('regional image search', () => {
  it('sends the text query, paging and sort as query parameters and the credentials as headers', async () => {
    fakes.regional.results.image = [imageItem(1)];
    const result = await client.searchImages('Neil Armstrong');
    expect(result.ok).toBe(true);
    expect(fakes.regional.requests).toHaveLength(1);
    const [request] = fakes.regional.requests;
    expect(request.method).toBe('GET');
    expect(request.path).toBe('/v1/search/image');
    expect(request.query).toEqual({ query: 'Neil Armstrong', display: '10', start: '1', sort: 'sim' });
    expect(request.headers['x-regional-client-id']).toBe(FAKE_REGIONAL_CLIENT_ID);
    expect(request.headers['x-regional-client-secret']).toBe(FAKE_REGIONAL_CLIENT_SECRET);
    expect(request.body.length).toBe(0);
  });

  it('returns items with tags stripped from titles and sizes as numbers', async () => {
    fakes.regional.results.image = [imageItem(1)];
    const result = await client.searchImages('astronaut');
    expect(result).toEqual({
      ok: true,
      total: 1,
      items: [
        {
          title: 'Astronaut photo 1',
          imageUrl: 'https://images.example.org/astronaut-1.jpg',
          thumbnailUrl: 'https://thumbs.example.org/astronaut-1.jpg',
          width: 640,
          height: 480,
        },
      ],
    });
  });

  it('asks for later pages with start = 1 + page * display', async () => {
    fakes.regional.results.image = Array.from({ length: 25 }, (_, i) => imageItem(i + 1));
    const paged = createRegionalClient(regionalSettings(configFor({ REGIONAL_SEARCH_DISPLAY: '10', REGIONAL_SEARCH_SORT: 'date' })), nodeEgress);
    const result = await paged.searchImages('astronaut', 2);
    expect(fakes.regional.requests[0].query).toMatchObject({ start: '21', display: '10', sort: 'date' });
    expect(result.ok && result.items.map((item) => item.imageUrl)).toEqual([21, 22, 23, 24, 25].map((n) => `https://images.example.org/astronaut-${n}.jpg`));
  });

  it('keeps a result whose link is not http(s) but drops the link', async () => {
    fakes.regional.results.image = [{ ...imageItem(1), link: 'javascript:alert(1)', thumbnail: 'data:image/png;base64,AAAA' }];
    const result = await client.searchImages('astronaut');
    expect(result.ok && result.items[0]).toMatchObject({ imageUrl: null, thumbnailUrl: null, title: 'Astronaut photo 1' });
  });

  it('refuses anything but non-empty text as a query, sending nothing', async () => {
    const bytes = Buffer.from([0xff, 0xd8, 0xff, 0xe0]);
    for (const query of [bytes as unknown as string, '', '   ', { query: 'x' } as unknown as string]) {
      const result = await client.searchImages(query);
      expect(result).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
    }
    expect(fakes.regional.requests).toHaveLength(0);
  });
});

describe('regional blog and web-document search', () => {
  it('uses the blog path with its own display and sort, and strips tags from titles and descriptions', async () => {
    fakes.regional.results.blog = [{ title: '<b>우주인</b> 사진 &amp; 이야기', link: 'https://blog.example.org/post/1', description: '달 <b>착륙</b>' }];
    const result = await client.searchBlogs('우주인 이미지');
    expect(fakes.regional.requests[0].path).toBe('/v1/search/blog');
    expect(fakes.regional.requests[0].query).toEqual({ query: '우주인 이미지', display: '3', start: '1', sort: 'sim' });
    expect(result).toEqual({
      ok: true,
      total: 1,
      items: [{ title: '우주인 사진 & 이야기', pageUrl: 'https://blog.example.org/post/1', description: '달 착륙' }],
    });
  });

  it('uses the web-document path without a sort parameter', async () => {
    fakes.regional.results.webkr = [{ title: 'Moon landing', link: 'https://docs.example.org/moon', description: 'A page' }];
    const result = await client.searchWebDocuments('moon landing image', 0);
    expect(fakes.regional.requests[0].path).toBe('/v1/search/webkr');
    expect(fakes.regional.requests[0].query).toEqual({ query: 'moon landing image', display: '3', start: '1' });
    expect(result.ok && result.items[0].pageUrl).toBe('https://docs.example.org/moon');
  });
});

describe('regional failures', () => {
  it('reports rejected credentials as an HTTP failure without the secret or the client id', async () => {
    const wrong = createRegionalClient({ ...regionalSettings(configFor()), clientSecret: 'wrong-secret-value-123' }, nodeEgress);
    const result = await wrong.searchImages('astronaut');
    expect(result).toMatchObject({ ok: false, error: { code: 'http_error' } });
    if (result.ok) return;
    expect(result.error.message).toContain('401');
    expect(result.error.message).not.toContain('wrong-secret-value-123');
    expect(result.error.message).not.toContain(FAKE_REGIONAL_CLIENT_ID);
  });

  it('gives a timeout failure when the provider does not answer in time', async () => {
    const quick = createRegionalClient({ ...regionalSettings(configFor()), timeoutMs: 200 }, nodeEgress);
    fakes.regional.respondOnce({ delayMs: 2000, json: {} });
    const result = await quick.searchImages('astronaut');
    expect(result).toMatchObject({ ok: false, error: { code: 'timeout' } });
  });

  it('gives an unreachable failure when nothing listens', async () => {
    const closed = await startFakeRegional();
    const url = closed.url;
    await closed.close();
    const result = await createRegionalClient(regionalSettings(configFor({ REGIONAL_API_URL: url })), nodeEgress).searchImages('astronaut');
    expect(result).toMatchObject({ ok: false, error: { code: 'unreachable' } });
  });

  it('refuses a page past the provider limit without calling it', async () => {
    const result = await client.searchImages('astronaut', 500);
    expect(result).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
    expect(fakes.regional.requests).toHaveLength(0);
  });
});
