import { beforeAll, describe, expect, it } from 'vitest';
import { buildConfig } from '../../lib/config.js';
import { braveSearchSettings, createBraveSearchClient } from '../../lib/providers/brave-search.js';
import type { GlobalSearchClient } from '../../lib/providers/global-search.js';
import { nodeEgress } from '../../lib/net/http-client.js';
import { braveError, braveImageResult, braveWebResult, FAKE_BRAVE_SEARCH_API_KEY, type FakeBraveSearch } from '../fakes/brave-search.js';
import { fakeBraveSettings } from '../fakes/settings.js';

import { useFakeProviders } from '../helpers/fake-world.js';

const fakes = useFakeProviders({ resetEach: true });
let client: GlobalSearchClient;

/** The service's configuration pointed at the fakes. */
const configFor = (extra: Record<string, string> = {}) => buildConfig({ ...fakes.settings, ...fakeBraveSettings(fakes.brave), ...extra }).config;

beforeAll(() => {
  client = createBraveSearchClient(braveSearchSettings(configFor()), nodeEgress);
});

describe('Brave request', () => {
  it('sends the text query and a count to the web search, the key only in X-Subscription-Token', async () => {
    const result = await client.searchWeb('saturn v rocket image');
    expect(result.ok).toBe(true);
    const [request] = fakes.brave.requests;
    expect(request.method).toBe('GET');
    expect(request.path).toBe('/res/v1/web/search');
    expect(request.query).toEqual({ q: 'saturn v rocket image', count: '3', offset: '0' });
    expect(request.headers['x-subscription-token']).toBe(FAKE_BRAVE_SEARCH_API_KEY);
    expect(request.headers.accept).toBe('application/json');
    expect(request.body.length).toBe(0);
  });

  it('pages the web search by offset (in pages) and the image search by a larger count', async () => {
    fakes.brave.results.image = Array.from({ length: 7 }, (_, i) =>
      braveImageResult(`r${i}`, `https://img.example.org/${i}.jpg`, `https://site.example.org/${i}`),
    );
    await client.searchWeb('rocket', 2);
    const second = await client.searchImages('rocket', 1);
    expect(fakes.brave.searches('web')[0].query).toEqual({ q: 'rocket', count: '3', offset: '2' });
    expect(fakes.brave.searches('image')[0].query).toEqual({ q: 'rocket', count: '6' });
    expect(second.ok && second.items.map((i) => i.title)).toEqual(['r3', 'r4', 'r5']);
  });

  it('clamps the web count to 1-20 and refuses pages Brave cannot serve, sending nothing for them', async () => {
    const wide = createBraveSearchClient({ ...braveSearchSettings(configFor()), web: { results: 50, pages: 1 } }, nodeEgress);
    expect((await wide.searchWeb('rocket')).ok).toBe(true);
    expect(fakes.brave.requests[0].query.count).toBe('20');
    fakes.brave.reset();
    expect(await client.searchWeb('rocket', 10)).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
    const many = createBraveSearchClient({ ...braveSearchSettings(configFor()), image: { results: 10, pages: 1 } }, nodeEgress);
    expect(await many.searchImages('rocket', 20)).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
    expect(fakes.brave.requests).toHaveLength(0);
  });

  it('keeps the first 50 words of a longer query, the most Brave takes', async () => {
    const words = Array.from({ length: 60 }, (_, i) => `w${i}`);
    expect((await client.searchWeb(words.join(' '))).ok).toBe(true);
    expect(fakes.brave.requests[0].query.q).toBe(words.slice(0, 50).join(' '));
  });

  it('refuses anything but non-empty text as a query, sending nothing', async () => {
    for (const query of [Buffer.from('GIF89a') as unknown as string, '', '   ', 42 as unknown as string]) {
      expect(await client.searchImages(query)).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
      expect(await client.searchWeb(query)).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
    }
    expect(fakes.brave.requests).toHaveLength(0);
  });
});

describe('Brave answer', () => {
  it('maps image hits to the image (properties.url), its page (url) and the thumbnail', async () => {
    fakes.brave.results.image = [braveImageResult('Rocket launch', 'https://img.example.org/rocket.jpg', 'https://space.example.org/rocket')];
    expect(await client.searchImages('rocket')).toEqual({
      ok: true,
      total: null,
      items: [
        {
          title: 'Rocket launch',
          pageUrl: 'https://space.example.org/rocket',
          imageUrl: 'https://img.example.org/rocket.jpg',
          thumbnailUrl: 'https://img.example.org/rocket.jpg',
          snippet: 'space.example.org',
          pageImageUrls: [],
        },
      ],
    });
  });

  it('maps web hits to the page, plain-text snippets and the page picture as a page-image candidate', async () => {
    fakes.brave.results.web = [
      braveWebResult('Launch day', 'https://space.example.org/launch', 'https://space.example.org/launch.jpg'),
      braveWebResult('No picture', 'https://blog.example.org/p'),
    ];
    const result = await client.searchWeb('launch');
    expect(result.ok && result.items.map((i) => [i.pageUrl, i.imageUrl, i.snippet, i.pageImageUrls])).toEqual([
      ['https://space.example.org/launch', null, 'Launch day ...', ['https://space.example.org/launch.jpg']],
      ['https://blog.example.org/p', null, 'No picture ...', []],
    ]);
  });

  it('keeps no more hits than it asked for, drops addresses that are not http(s), and reads no web block as zero results', async () => {
    fakes.brave.respondOnce({
      json: {
        type: 'search',
        web: {
          results: [
            { title: 'bad', url: 'javascript:alert(1)', thumbnail: { original: 'data:image/png;base64,AAAA' } },
            ...Array.from({ length: 10 }, (_, i) => braveWebResult(`w${i}`, `https://site.example.org/${i}`)),
          ],
        },
      },
    });
    const result = await client.searchWeb('x');
    expect(result.ok && result.items.map((i) => [i.title, i.pageUrl, i.pageImageUrls])).toEqual([
      ['bad', null, []],
      ['w0', 'https://site.example.org/0', []],
      ['w1', 'https://site.example.org/1', []],
    ]);
    expect(await client.searchWeb('nothing matches this')).toEqual({ ok: true, total: null, items: [] });
  });

  it('turns each bad answer into a failure that says what was wrong', async () => {
    const cases: [string, Parameters<FakeBraveSearch['respondOnce']>[0], string, RegExp][] = [
      ['HTML', { status: 200, headers: { 'content-type': 'text/html' }, body: '<html><body>maintenance</body></html>' }, 'malformed_response', /HTML/],
      [
        'malformed JSON',
        { status: 200, headers: { 'content-type': 'application/json' }, body: '{"type": "search", "web": {' },
        'malformed_response',
        /not valid JSON/,
      ],
      ['another type', { json: { type: 'news', results: [] } }, 'malformed_response', /unexpected answer shape/],
      ['results not a list', { json: { type: 'images', results: 'nope' } }, 'malformed_response', /unexpected answer shape/],
      [
        'an error body with 200',
        braveError(200, 'RATE_LIMITED', 'Request rate limit exceeded for plan.'),
        'provider_error',
        /RATE_LIMITED: Request rate limit exceeded/,
      ],
      [
        'an error body with 429',
        braveError(429, 'RATE_LIMITED', 'Request rate limit exceeded for plan.'),
        'http_error',
        /HTTP 429 \(Request rate limit exceeded/,
      ],
      ['a server error', { status: 503, body: 'upstream down' }, 'http_error', /HTTP 503/],
    ];
    for (const [name, response, code, message] of cases) {
      fakes.brave.respondOnce(response);
      const result = await client.searchImages('rocket');
      expect(result, name).toMatchObject({ ok: false, error: { code } });
      if (!result.ok) expect(result.error.message, name).toMatch(message);
    }
  });

  it('reports a refused key without the key, even when the answer echoes it', async () => {
    const wrongKey = 'BSA-not-the-right-token-77';
    const wrong = createBraveSearchClient({ ...braveSearchSettings(configFor()), apiKey: wrongKey }, nodeEgress);
    const refused = await wrong.searchWeb('x');
    expect(refused).toMatchObject({
      ok: false,
      error: { code: 'http_error', message: 'brave search: answered HTTP 422 (The provided subscription token is invalid.)' },
    });
    fakes.brave.respondWith((request) => braveError(200, 'SUBSCRIPTION_TOKEN_INVALID', `token ${request.headers['x-subscription-token']} is invalid`));
    const echoed = await wrong.searchWeb('x');
    expect(echoed).toMatchObject({ ok: false, error: { code: 'provider_error' } });
    for (const result of [refused, echoed]) expect(JSON.stringify(result)).not.toContain(wrongKey);
  });
});
