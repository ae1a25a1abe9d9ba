import { beforeAll, describe, expect, it } from 'vitest';
import { buildConfig } from '../../lib/config.js';
import { clampNum, createGlobalSearchClient, globalSearchSettings, type GlobalSearchClient } from '../../lib/providers/global-search.js';
import { FAKE_GLOBAL_SEARCH_API_KEY, FAKE_GLOBAL_SEARCH_CX, imageSearchItem, webSearchItem } from '../fakes/global-search.js';
import { nodeEgress } from '../../lib/net/http-client.js';
import { useFakeProviders } from '../helpers/fake-world.js';

const fakes = useFakeProviders({ resetEach: true });
let client: GlobalSearchClient;

/** The service's configuration pointed at the fakes. */
const configFor = (extra: Record<string, string> = {}) => buildConfig({ ...fakes.settings, ...extra }).config;

beforeAll(() => {
  client = createGlobalSearchClient(globalSearchSettings(configFor()), nodeEgress);
});

describe('custom search request', () => {
  it('sends key, cx, query, num and start, with searchType=image for image search', async () => {
    fakes.search.results.image = [imageSearchItem('Rocket', 'https://img.example.org/rocket.jpg', 'https://space.example.org/rocket')];
    const result = await client.searchImages('saturn v rocket');
    expect(result.ok).toBe(true);
    const [request] = fakes.search.requests;
    expect(request.method).toBe('GET');
    expect(request.path).toBe('/customsearch/v1');
    expect(request.query).toEqual({
      key: FAKE_GLOBAL_SEARCH_API_KEY,
      cx: FAKE_GLOBAL_SEARCH_CX,
      q: 'saturn v rocket',
      num: '3',
      start: '1',
      searchType: 'image',
    });
  });

  it('leaves searchType out for web search and pages with start = 1 + page * num', async () => {
    await client.searchWeb('saturn v rocket image', 2);
    expect(fakes.search.requests[0].query).toEqual({
      key: FAKE_GLOBAL_SEARCH_API_KEY,
      cx: FAKE_GLOBAL_SEARCH_CX,
      q: 'saturn v rocket image',
      num: '3',
      start: '7',
    });
  });

  it('clamps num to the provider range 1-10', async () => {
    expect([clampNum(0), clampNum(-5), clampNum(4), clampNum(11), clampNum(1000), clampNum(Number.NaN)]).toEqual([1, 1, 4, 10, 10, 1]);
    const wide = createGlobalSearchClient({ ...globalSearchSettings(configFor()), image: { results: 50, pages: 1 } }, nodeEgress);
    const result = await wide.searchImages('rocket');
    expect(fakes.search.requests[0].query.num).toBe('10');
    expect(result.ok).toBe(true);
  });

  it('refuses anything but non-empty text as a query, sending nothing', async () => {
    for (const query of [Buffer.from('GIF89a') as unknown as string, '', 42 as unknown as string]) {
      expect(await client.searchImages(query)).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
    }
    expect(fakes.search.requests).toHaveLength(0);
  });
});

describe('custom search answer', () => {
  it('maps image hits to the image, its page and its thumbnail', async () => {
    fakes.search.results.image = [imageSearchItem('Rocket launch', 'https://img.example.org/rocket.jpg', 'https://space.example.org/rocket')];
    const result = await client.searchImages('rocket');
    expect(result).toEqual({
      ok: true,
      total: 1,
      items: [
        {
          title: 'Rocket launch',
          pageUrl: 'https://space.example.org/rocket',
          imageUrl: 'https://img.example.org/rocket.jpg',
          thumbnailUrl: 'https://img.example.org/rocket.jpg',
          snippet: '',
          pageImageUrls: [],
        },
      ],
    });
  });

  it('maps web hits to the page and the images its pagemap names (cse_image, og:image), each once', async () => {
    fakes.search.results.web = [
      webSearchItem('Launch day', 'https://space.example.org/launch', 'https://space.example.org/launch.jpg'),
      {
        title: 'Two images',
        link: 'https://blog.example.org/p',
        pagemap: { cse_image: [{ src: 'https://blog.example.org/a.jpg' }], metatags: [{ 'og:image': 'https://blog.example.org/b.jpg' }] },
      },
    ];
    const result = await client.searchWeb('launch');
    expect(result.ok && result.items.map((item) => [item.pageUrl, item.imageUrl, item.pageImageUrls])).toEqual([
      ['https://space.example.org/launch', null, ['https://space.example.org/launch.jpg']],
      ['https://blog.example.org/p', null, ['https://blog.example.org/a.jpg', 'https://blog.example.org/b.jpg']],
    ]);
  });

  it('treats an answer with no items as zero results', async () => {
    const result = await client.searchImages('nothing matches this');
    expect(result).toEqual({ ok: true, total: 0, items: [] });
  });

  it('reports a refused key as an HTTP failure without the key or the cx', async () => {
    const wrongKey = 'AIza-not-the-right-one';
    const result = await createGlobalSearchClient({ ...globalSearchSettings(configFor()), apiKey: wrongKey }, nodeEgress).searchWeb('x');
    expect(result).toMatchObject({ ok: false, error: { code: 'http_error' } });
    if (result.ok) return;
    expect(result.error.message).toContain('400');
    expect(result.error.message).toContain('API key not valid');
    expect(result.error.message).not.toContain(wrongKey);
    expect(result.error.message).not.toContain(FAKE_GLOBAL_SEARCH_CX);
  });
});
