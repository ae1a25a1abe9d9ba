import { DEFAULT_MAX_PIXELS } from '../../lib/images/decode.js';
import { localImageService } from '../../lib/images/local-service.js';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConfig } from '../../lib/config.js';
import { createProviderClients, type ProviderClients } from '../../lib/providers/clients.js';
import { approveForVision, type ApprovedImage } from '../../lib/providers/derived-image.js';
import { buildEvidencePrompt } from '../../lib/providers/local-llm.js';
import { PROVIDER_RESPONSE_MAX_BYTES } from '../../lib/providers/call.js';
import type { GlobalSearchClient } from '../../lib/providers/global-search.js';
import { FAKE_BRAVE_SEARCH_API_KEY } from '../fakes/brave-search.js';
import { FAKE_GLOBAL_SEARCH_API_KEY, FAKE_GLOBAL_SEARCH_CX } from '../fakes/global-search.js';
import { FAKE_REGIONAL_CLIENT_ID, FAKE_REGIONAL_CLIENT_SECRET } from '../fakes/regional.js';
import type { FakeResponse, FakeServer } from '../fakes/server.js';
import { fakeBraveSettings } from '../fakes/settings.js';
import { FAKE_VISION_API_KEY } from '../fakes/vision.js';
import { useFakeProviders } from '../helpers/fake-world.js';
import { nodeEgress } from '../../lib/net/http-client.js';

/**
 * Every way a provider answer can be wrong (wrong types, truncated JSON, HTML, empty, huge,
 * nulls, cut connections, HTTP errors) must come back as a failure value: no throw, no crash,
 * and no secret in the message.
 */

const SECRETS = [
  FAKE_REGIONAL_CLIENT_ID,
  FAKE_REGIONAL_CLIENT_SECRET,
  FAKE_VISION_API_KEY,
  FAKE_GLOBAL_SEARCH_API_KEY,
  FAKE_GLOBAL_SEARCH_CX,
  FAKE_BRAVE_SEARCH_API_KEY,
];

const VALID: Record<ProviderName, unknown> = {
  regional: {
    lastBuildDate: 'Thu, 01 Jan 2026 00:00:00 +0900',
    total: 1,
    start: 1,
    display: 10,
    items: [{ title: '<b>rocket</b>', link: 'https://img.example.org/r.jpg', thumbnail: 'https://img.example.org/t.jpg', sizeheight: '10', sizewidth: '10' }],
  },
  global_vision: {
    responses: [
      {
        webDetection: {
          webEntities: [{ entityId: '/m/1', score: 0.5, description: 'Saturn V' }],
          fullMatchingImages: [{ url: 'https://img.example.org/full.jpg' }],
          pagesWithMatchingImages: [{ url: 'https://news.example.org/a', pageTitle: 'Launch' }],
          bestGuessLabels: [{ label: 'rocket', languageCode: 'en' }],
        },
      },
    ],
  },
  global_search: {
    kind: 'customsearch#search',
    searchInformation: { totalResults: '1' },
    items: [
      {
        title: 'Rocket',
        link: 'https://img.example.org/r.jpg',
        image: { contextLink: 'https://space.example.org/', thumbnailLink: 'https://img.example.org/t.jpg' },
      },
    ],
  },
  // The global search's second vendor, Brave's image search.
  brave_search: {
    type: 'images',
    query: { original: 'rocket' },
    results: [
      {
        type: 'image_result',
        title: 'Rocket',
        url: 'https://space.example.org/',
        thumbnail: { src: 'https://img.example.org/t.jpg' },
        properties: { url: 'https://img.example.org/r.jpg' },
      },
    ],
  },
  local_llm: { model: 'tiny-instruct', response: 'A summary [ev_1].', done: true },
};

/** Fields whose wrong type must be refused, with the wrong values to try. */
const WRONG_TYPES: Record<ProviderName, [path: (string | number)[], value: unknown][]> = {
  regional: [
    [['total'], 'many'],
    [['total'], null],
    [['start'], '1'],
    [['items'], 'none'],
    [['items'], {}],
    [['items'], null],
    [['items', 0], null],
    [['items', 0, 'title'], 5],
    [['items', 0, 'link'], null],
    [['items', 0, 'sizewidth'], { px: 10 }],
  ],
  global_vision: [
    [['responses'], {}],
    [['responses'], []],
    [['responses'], null],
    [['responses', 0], 5],
    [['responses', 0, 'webDetection'], 'found'],
    [['responses', 0, 'webDetection', 'webEntities'], 'Saturn V'],
    [['responses', 0, 'webDetection', 'webEntities', 0, 'score'], 'high'],
    [['responses', 0, 'webDetection', 'pagesWithMatchingImages', 0, 'url'], 7],
    [['responses', 0, 'webDetection', 'bestGuessLabels', 0, 'label'], 3],
    [['responses', 0, 'webDetection', 'fullMatchingImages'], { url: 'https://img.example.org/x.jpg' }],
    [['responses', 0, 'error'], 'bad'],
  ],
  global_search: [
    [['searchInformation'], 'x'],
    [['searchInformation'], null],
    [['items'], 'x'],
    [['items', 0], 5],
    [['items', 0, 'link'], 5],
    [['items', 0, 'title'], ['Rocket']],
    [['items', 0, 'image'], 'x'],
    [['items', 0, 'pagemap'], 'x'],
    [['items', 0, 'pagemap'], { cse_image: 'https://img.example.org/x.jpg' }],
  ],
  brave_search: [
    [['type'], 'news'],
    [['type'], null],
    [['results'], 'x'],
    [['results'], null],
    [['results', 0], 5],
    [['results', 0, 'title'], ['Rocket']],
    [['results', 0, 'properties'], 'x'],
    [['results', 0, 'properties', 'url'], 5],
    [['results', 0, 'thumbnail'], 'x'],
  ],
  local_llm: [
    [['response'], 5],
    [['response'], null],
    [['response'], {}],
    [['response'], ['a']],
    [['done'], 'yes'],
    [['model'], 5],
  ],
};

type ProviderName = 'regional' | 'global_vision' | 'global_search' | 'brave_search' | 'local_llm';
const PROVIDERS: ProviderName[] = ['regional', 'global_vision', 'global_search', 'brave_search', 'local_llm'];

function withValue(source: unknown, path: (string | number)[], value: unknown): unknown {
  const copy = structuredClone(source) as Record<string | number, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  node[path[path.length - 1]] = value;
  return copy;
}

function cases(provider: ProviderName): [string, FakeResponse][] {
  const valid = JSON.stringify(VALID[provider]);
  const json = { 'content-type': 'application/json; charset=UTF-8' };
  const html = '<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1></body></html>';
  const out: [string, FakeResponse][] = [
    ['an empty body', { headers: json, body: '' }],
    ['only whitespace', { headers: json, body: ' \n\t ' }],
    ['null', { headers: json, body: 'null' }],
    ['an empty array', { headers: json, body: '[]' }],
    ['a bare string', { headers: json, body: '"ok"' }],
    ['a number', { headers: json, body: '42' }],
    ['true', { headers: json, body: 'true' }],
    ['an empty object', { headers: json, body: '{}' }],
    ['an HTML page with status 200', { headers: { 'content-type': 'text/html' }, body: html }],
    ['HTML labelled as JSON', { headers: json, body: html }],
    ['a login page without content type', { body: '<html><form action="/login"></form></html>' }],
    ['bytes that are not UTF-8', { headers: json, body: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]) }],
    ['a huge body with its length declared', { headers: json, body: Buffer.alloc(PROVIDER_RESPONSE_MAX_BYTES + 1024, 0x20) }],
    ['a huge body sent chunked', { headers: json, chunked: true, body: `[${'0,'.repeat(PROVIDER_RESPONSE_MAX_BYTES / 2)}0]` }],
    ['a body cut off by a closed connection', { headers: json, body: valid, truncateAt: Math.floor(valid.length / 2) }],
    ['a connection closed without an answer', { destroy: true }],
    ['HTTP 500 with an HTML page', { status: 500, headers: { 'content-type': 'text/html' }, body: html }],
    ['HTTP 503 with a JSON error', { status: 503, json: { error: { code: 503, message: 'Service unavailable' } } }],
    ['HTTP 429', { status: 429, json: { errorMessage: 'Rate limit exceeded', errorCode: '012' } }],
    ['HTTP 404 with plain text', { status: 404, body: 'not found' }],
  ];
  for (const fraction of [0.1, 0.3, 0.5, 0.7, 0.95]) {
    out.push([`JSON truncated at ${fraction * 100}%`, { headers: json, body: valid.slice(0, Math.floor(valid.length * fraction)) }]);
  }
  for (const [path, value] of WRONG_TYPES[provider]) {
    out.push([`${path.join('.')} as ${JSON.stringify(value)}`, { json: withValue(VALID[provider], path, value) }]);
  }
  return out;
}

const fakes = useFakeProviders();
let clients: ProviderClients;
let braveClient: GlobalSearchClient;
let approved: ApprovedImage;

const images = localImageService(DEFAULT_MAX_PIXELS);
afterAll(() => images.close());

beforeAll(async () => {
  const { config } = buildConfig(fakes.settings);
  clients = createProviderClients(config, nodeEgress);
  // The same clients with GLOBAL_SEARCH_PROVIDER=brave: the global search is Brave's.
  braveClient = createProviderClients(buildConfig(fakeBraveSettings(fakes.brave)).config, nodeEgress).globalSearch;
  approved = await approveForVision(images, await readFile(new URL('../fixtures/images/rocket.jpg', import.meta.url)));
});

function send(provider: ProviderName) {
  switch (provider) {
    case 'regional':
      return clients.regional.searchImages('rocket');
    case 'global_vision':
      return clients.globalVision.detectWeb(approved);
    case 'global_search':
      return clients.globalSearch.searchImages('rocket');
    case 'brave_search':
      return braveClient.searchImages('rocket');
    case 'local_llm':
      return clients.localLlm.generate(buildEvidencePrompt([]).prompt);
  }
}

function fakeOf(provider: ProviderName): FakeServer {
  return { regional: fakes.regional, global_vision: fakes.vision, global_search: fakes.search, brave_search: fakes.brave, local_llm: fakes.llm }[provider];
}

const ALL_CASES = PROVIDERS.flatMap((provider) => cases(provider).map(([name, response]) => ({ provider, name, response })));

it('generates at least a hundred malformed answers', () => {
  expect(ALL_CASES.length).toBeGreaterThanOrEqual(100);
});

describe.each(PROVIDERS)('%s', (provider) => {
  it('accepts the well-formed answer the malformed ones are made from', async () => {
    fakeOf(provider).respondOnce({ json: VALID[provider] });
    expect((await send(provider)).ok).toBe(true);
  });

  it.each(cases(provider))('turns %s into a failure value', async (_name, response) => {
    fakeOf(provider).respondOnce(response);
    const result = await send(provider);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(['malformed_response', 'http_error', 'unreachable', 'provider_error']).toContain(result.error.code);
    expect(result.error.message.length).toBeGreaterThan(0);
    for (const secret of SECRETS) expect(result.error.message).not.toContain(secret);
  });
});
