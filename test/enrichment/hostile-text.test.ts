import { describe, expect, it } from 'vitest';
import { buildConfig } from '../../lib/config.js';
import { cleanQueryText, deriveQueryCandidates, hasBrokenEncoding, hasTemplatePlaceholder, isSpecific } from '../../lib/enrichment/queries.js';
import { keepCitedClaims } from '../../lib/enrichment/summary.js';
import { quickId, quickTitle } from '../../lib/ingest/candidate.js';
import { downloadSettings } from '../../lib/net/download.js';
import { nodeEgress } from '../../lib/net/http-client.js';
import { extractPageImages, plainText } from '../../lib/net/html.js';
import { findPageImages, MAX_PAGE_HTML_BYTES } from '../../lib/net/page-images.js';
import { capText, cleanTitle, httpUrlOrNull, MAX_SNIPPET_CHARS, MAX_TITLE_CHARS, MAX_URL_CHARS, textQuery } from '../../lib/providers/fields.js';
import { createGlobalSearchClient } from '../../lib/providers/global-search.js';
import { createRegionalClient } from '../../lib/providers/regional.js';
import { FAKE_GLOBAL_SEARCH_API_KEY, FAKE_GLOBAL_SEARCH_CX, FAKE_REGIONAL_CLIENT_ID, FAKE_REGIONAL_CLIENT_SECRET } from '../fakes/index.js';
import { useFakeProviders } from '../helpers/fake-world.js';
import { seededRandom } from '../helpers/random.js';

const MB = 1 << 20;
const fill = (unit: string, tail = '') => unit.repeat(Math.ceil((MB - tail.length) / unit.length)) + tail;

/**
 * Runs `work` on a megabyte of hostile text and returns its result with the time it took. A step
 * that is quadratic in the text takes minutes on a megabyte (120 KB of `{{` held the service for
 * 8.7 s), so two seconds is a bound only linear work meets, even on a busy machine.
 */
function timed<T>(work: () => T): T {
  const started = performance.now();
  const result = work();
  expect(performance.now() - started).toBeLessThan(2000);
  return result;
}

// The placeholder patterns as they were, to check that the linear checks mean the same thing.
const OLD_PLACEHOLDERS = [/\{\{.*?\}\}/, /\$\{[^}]*\}/, /%(\d+\$)?[sdif](?![a-z])/i, /%\([a-z_]+\)[sd]/i, /\{\d+\}/, /<%.*?%>/, /\[object Object\]/];
const oldHasPlaceholder = (text: string) => OLD_PLACEHOLDERS.some((pattern) => pattern.test(text));

describe('template placeholders in text from the web', () => {
  it('decide exactly as the old patterns did, on 20,000 random short texts', () => {
    const random = seededRandom(3);
    const alphabet = ['{', '}', '{{', '}}', '<', '%', '>', '<%', '%>', '$', '${', '\n', '\r', '\u2028', 'a', ' ', '1', 's'];
    let placeholders = 0;
    for (let i = 0; i < 20000; i++) {
      const text = Array.from({ length: 1 + Math.floor(random() * 12) }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
      expect(hasTemplatePlaceholder(text), JSON.stringify(text)).toBe(oldHasPlaceholder(text));
      if (oldHasPlaceholder(text)) placeholders++;
    }
    // Both answers occur often enough for the comparison to mean something.
    expect(placeholders).toBeGreaterThan(2000);
    expect(placeholders).toBeLessThan(18000);
  });

  it('take linear time on a megabyte of each worst case', () => {
    const cases: [string, boolean][] = [
      [fill('{{'), false],
      [fill('{{', '}}'), true],
      [fill('{{\n', '}}'), false],
      [fill('<%'), false],
      [fill('<%\r', '%>'), false],
      [fill('${'), false],
      [fill('${', '}'), true],
      [fill('{'), false],
      [fill('%1'), false],
      [fill('%('), false],
      [fill('{1'), false],
      [fill('[object '), false],
      [fill('a {{ b\n', 'x {{ y }}'), true],
    ];
    for (const [text, expected] of cases) {
      expect(text.length).toBeGreaterThanOrEqual(MB);
      expect(
        timed(() => hasTemplatePlaceholder(text)),
        JSON.stringify(text.slice(0, 12)),
      ).toBe(expected);
    }
  });
});

describe('every other step that reads outside text, on a megabyte of its worst case', () => {
  it('query clean-up and derivation', () => {
    expect(timed(() => hasBrokenEncoding(fill('Ã')))).toBe(false);
    expect(timed(() => hasBrokenEncoding(fill('Ã', 'ì´ë¯¸ì§€')))).toBe(true);
    expect(timed(() => hasBrokenEncoding(fill('占쏙')))).toBe(false);
    expect(timed(() => hasBrokenEncoding(fill('占쏙', '占쏙옙')))).toBe(true);
    expect(timed(() => cleanQueryText(fill('{{ ', '}}')))).toBeNull();
    expect(timed(() => isSpecific(fill('- ')))).toBe(false);
    const hostile = fill('{{');
    const candidates = timed(() =>
      deriveQueryCandidates({
        webEntities: [
          { entityId: null, score: 1, description: hostile },
          { entityId: null, score: 0.5, description: 'Namsan Tower' },
        ],
        fullMatchingImages: [],
        partialMatchingImages: [],
        visuallySimilarImages: [],
        pagesWithMatchingImages: [{ url: 'https://pages.example/a', pageTitle: fill('${'), score: 1, fullMatchingImages: [], partialMatchingImages: [] }],
        bestGuessLabels: [{ label: fill('<%'), languageCode: 'en' }],
      }),
    );
    expect(candidates.map((c) => c.text)).toEqual(['Namsan Tower']);
  });

  it('HTML text, page images, titles and URLs from providers', () => {
    expect(timed(() => plainText(fill('<')))).toBe('<'.repeat(MB));
    expect(timed(() => plainText(fill('<b>&amp;')))).toBe('&'.repeat(MB / 8));
    expect(timed(() => plainText(fill('<script>')))).toBe('');
    expect(timed(() => plainText(fill('&#1')))).toBe('\u0001'.repeat(Math.ceil(MB / 3)));
    expect(timed(() => plainText(fill('&am')))).toBe('&am'.repeat(Math.ceil(MB / 3)));
    expect(timed(() => plainText(fill('<!--')))).toBe('');
    expect(timed(() => plainText(`<a${fill(' b')}>x`))).toBe('x');
    expect(timed(() => plainText(fill('<a b='))).length).toBeLessThan(10);
    expect(timed(() => plainText(`x${fill('</')}`)).startsWith('x')).toBe(true);
    expect(timed(() => extractPageImages(fill('<b>'), 'https://pages.example/', 5))).toEqual([]);
    expect(timed(() => extractPageImages(fill('<img src="/a.jpg">'), 'https://pages.example/', 5))).toEqual(['https://pages.example/a.jpg']);
    expect(timed(() => extractPageImages(fill('<meta property="og:image" content="'), 'https://pages.example/', 5))).toEqual([]);
    // A provider's title is cut where it enters, before any of the above runs on it.
    const title = timed(() => cleanTitle(fill('<b>{{</b>')));
    expect(title).toMatch(/^\{+$/);
    expect(title.length).toBeGreaterThan(MAX_TITLE_CHARS * 0.8);
    expect(title.length).toBeLessThanOrEqual(MAX_TITLE_CHARS);
    expect(cleanTitle(fill('가'))).toHaveLength(MAX_TITLE_CHARS);
    expect(timed(() => textQuery(fill(' \t')))).toBeNull();
    expect(httpUrlOrNull(`https://pages.example/${'a'.repeat(MAX_URL_CHARS)}`)).toBeNull();
    expect(httpUrlOrNull(`https://pages.example/${'a'.repeat(100)}`)).toBe(`https://pages.example/${'a'.repeat(100)}`);
    // A cut never leaves half of a surrogate pair.
    expect(capText('a😀b', 2)).toBe('a');
  });

  it("the language model's answer and file names", () => {
    expect(timed(() => keepCitedClaims(fill('['), ['ev_1']))).toEqual({ text: '', cited: [] });
    expect(timed(() => keepCitedClaims(fill('. ', 'It is here [ev_1].'), ['ev_1']))).toEqual({ text: 'It is here [ev_1].', cited: ['ev_1'] });
    expect(timed(() => keepCitedClaims(fill('[ev_1'), ['ev_1'])).text).toBe('');
    const name = `${fill('-_ ').slice(0, 200_000)}x.jpg`;
    expect(timed(() => quickTitle(name))).toBe('x');
    expect(timed(() => quickId(name))).toMatch(/^(x|image-[0-9a-f]{8})$/);
  });
});

describe('search answers padded beyond what was asked', () => {
  const fakes = useFakeProviders();

  const PADDED = 1000;
  const title = '<b>{{</b>'.repeat(300);
  const snippet = '${'.repeat(1500);

  it('keep only the `display` asked for from the regional provider, each title and description cut', async () => {
    const client = createRegionalClient(
      {
        baseUrl: fakes.regional.url,
        clientId: FAKE_REGIONAL_CLIENT_ID,
        clientSecret: FAKE_REGIONAL_CLIENT_SECRET,
        timeoutMs: 10_000,
        image: { display: 10, pages: 1, sort: 'sim' },
        blog: { display: 7, pages: 1, sort: 'sim' },
        web: { display: 5, pages: 1 },
      },
      nodeEgress,
    );
    const items = Array.from({ length: PADDED }, (_, i) => ({ title, link: `https://pages.example/${i}`, description: snippet }));
    fakes.regional.respondOnce({ json: { total: PADDED, start: 1, display: 7, items } });
    const answer = await client.searchBlogs('namsan');
    if (!answer.ok) throw new Error(answer.error.message);
    expect(answer.items).toHaveLength(7);
    expect(answer.items[6].pageUrl).toBe('https://pages.example/6');
    for (const item of answer.items) {
      expect(item.title).toMatch(/^\{+$/);
      expect(item.title.length).toBeLessThanOrEqual(MAX_TITLE_CHARS);
      expect(item.description.length).toBe(MAX_SNIPPET_CHARS);
    }
  });

  it('keep only the `num` asked for from the custom search, each title and snippet cut', async () => {
    const client = createGlobalSearchClient(
      {
        url: fakes.search.endpoint,
        apiKey: FAKE_GLOBAL_SEARCH_API_KEY,
        cx: FAKE_GLOBAL_SEARCH_CX,
        timeoutMs: 10_000,
        image: { results: 10, pages: 1 },
        web: { results: 4, pages: 1 },
      },
      nodeEgress,
    );
    const items = Array.from({ length: PADDED }, (_, i) => ({ title, link: `https://pages.example/${i}`, snippet }));
    fakes.search.respondOnce({ json: { searchInformation: { totalResults: String(PADDED) }, items } });
    const answer = await client.searchWeb('namsan');
    if (!answer.ok) throw new Error(answer.error.message);
    expect(answer.items.map((item) => item.pageUrl)).toEqual([0, 1, 2, 3].map((i) => `https://pages.example/${i}`));
    for (const item of answer.items) {
      expect(item.title.length).toBeLessThanOrEqual(MAX_TITLE_CHARS);
      expect(item.snippet.length).toBe(MAX_SNIPPET_CHARS);
    }
  });
});

describe('a fetched page of the whole download limit', () => {
  const fakes = useFakeProviders();
  const settings = downloadSettings(buildConfig({ SVC_ALLOW_PRIVATE_DOWNLOADS: 'true' }).config, nodeEgress);

  it('is read for images only as far as its start, so hostile markup after it costs nothing', async () => {
    const early = '<meta property="og:image" content="/og.jpg"><img src="/first.jpg">';
    const late = '<img src="/late.jpg">';
    const filler = '&#1<a b c>'.repeat(Math.ceil(settings.maxBytes / 2 / 10));
    expect(early.length + filler.length).toBeGreaterThan(MAX_PAGE_HTML_BYTES * 8);
    fakes.web.addPage('/long', `<html><head>${early}</head><body>${filler}${late}</body></html>`);
    const started = performance.now();
    const found = await findPageImages(fakes.web.urlFor('/long'), settings, 5);
    expect(performance.now() - started).toBeLessThan(2000);
    expect(found.ok && found.candidates).toEqual([fakes.web.urlFor('/og.jpg'), fakes.web.urlFor('/first.jpg')]);
  });
});
