import { z } from 'zod';
import type { Config } from '../config.js';
import { callProvider, providerFailure, type ProviderFailure } from './call.js';
import { cleanTitle, endpoint, httpUrlOrNull, MAX_LABEL_CHARS, MAX_SNIPPET_CHARS, textQuery } from './fields.js';
import type { GlobalSearchClient, GlobalSearchItem, GlobalSearchResult } from './global-search.js';
import type { Egress } from '../ports.js';

/**
 * Brave Search's web and image search, the second vendor of the `global_search` role
 * (docs/decisions/0030-second-global-search.md). It receives text queries only: `q` and counts in
 * the query string of a GET, the key in `X-Subscription-Token`; no send function here takes
 * anything else.
 */

export interface BraveSearchSettings {
  /** The API base address; `/res/v1/web/search` and `/res/v1/images/search` are added to it. */
  url: string;
  apiKey: string;
  timeoutMs: number;
  image: { results: number; pages: number };
  web: { results: number; pages: number };
}

/** Brave's own bounds: web `count` 1-20 and `offset` (in pages) 0-9; image `count` 1-200, no offset. */
const MAX_WEB_COUNT = 20;
const MAX_WEB_OFFSET = 9;
const MAX_IMAGE_COUNT = 200;
/** Brave refuses a query of more than 50 words; the words past that are dropped rather than the search lost. */
const MAX_QUERY_WORDS = 50;
const WEB_PATH = '/res/v1/web/search';
const IMAGE_PATH = '/res/v1/images/search';

export function braveSearchSettings(config: Config): BraveSearchSettings {
  return {
    url: config.BRAVE_SEARCH_URL,
    apiKey: config.BRAVE_SEARCH_API_KEY,
    timeoutMs: config.SVC_PROVIDER_TIMEOUT_MS,
    image: { results: config.GLOBAL_CUSTOM_SEARCH_IMAGE_RESULTS, pages: config.GLOBAL_CUSTOM_SEARCH_IMAGE_PAGES },
    web: { results: config.GLOBAL_CUSTOM_SEARCH_WEB_RESULTS, pages: config.GLOBAL_CUSTOM_SEARCH_WEB_PAGES },
  };
}

const thumbnail = z.object({ src: z.string().nullish(), original: z.string().nullish() }).loose().nullish();

const webResult = z
  .object({
    title: z.string().nullish(),
    url: z.string(),
    description: z.string().nullish(),
    thumbnail,
  })
  .loose();

const imageResult = z
  .object({
    title: z.string().nullish(),
    /** The page the image is on. */
    url: z.string().nullish(),
    source: z.string().nullish(),
    thumbnail,
    properties: z.object({ url: z.string().nullish() }).loose().nullish(),
  })
  .loose();

/** `{"type": "ErrorResponse", "error": {...}}`: what Brave sends with a failure, at times with HTTP 200. */
const errorAnswer = z
  .object({
    type: z.literal('ErrorResponse'),
    error: z.object({ code: z.string().nullish(), detail: z.string().nullish(), status: z.number().nullish() }).loose().nullish(),
  })
  .loose();

const webAnswer = z.discriminatedUnion('type', [
  errorAnswer,
  // `web` is left out when nothing matched.
  z
    .object({
      type: z.literal('search'),
      web: z
        .object({ results: z.array(webResult) })
        .loose()
        .nullish(),
    })
    .loose(),
]);

const imageAnswer = z.discriminatedUnion('type', [errorAnswer, z.object({ type: z.literal('images'), results: z.array(imageResult) }).loose()]);

type RawWeb = z.infer<typeof webResult>;
type RawImage = z.infer<typeof imageResult>;

function webItem(result: RawWeb): GlobalSearchItem {
  // `thumbnail.original` is the page's own picture (what the other vendor reports as `cse_image`).
  const pageImage = httpUrlOrNull(result.thumbnail?.original);
  return {
    title: cleanTitle(result.title),
    pageUrl: httpUrlOrNull(result.url),
    imageUrl: null,
    thumbnailUrl: httpUrlOrNull(result.thumbnail?.src),
    snippet: cleanTitle(result.description, MAX_SNIPPET_CHARS),
    pageImageUrls: pageImage ? [pageImage] : [],
  };
}

function imageItem(result: RawImage): GlobalSearchItem {
  return {
    title: cleanTitle(result.title),
    pageUrl: httpUrlOrNull(result.url),
    imageUrl: httpUrlOrNull(result.properties?.url),
    thumbnailUrl: httpUrlOrNull(result.thumbnail?.src),
    snippet: cleanTitle(result.source, MAX_LABEL_CHARS),
    pageImageUrls: [],
  };
}

function errorFailure(answer: z.infer<typeof errorAnswer>, secrets: readonly string[]): ProviderFailure {
  const detail = [answer.error?.code, cleanTitle(answer.error?.detail, MAX_LABEL_CHARS)].filter(Boolean).join(': ');
  return providerFailure('provider_error', `brave search: answered an error${detail ? ` (${detail})` : ''}`, secrets);
}

export function createBraveSearchClient(settings: BraveSearchSettings, egress: Egress): GlobalSearchClient {
  const secrets = [settings.apiKey];
  const call = <S extends z.ZodType>(path: string, params: Record<string, string>, schema: S) => {
    const url = endpoint(settings.url, path);
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
    return callProvider(egress, {
      provider: 'brave search',
      url,
      method: 'GET',
      headers: { 'X-Subscription-Token': settings.apiKey },
      timeoutMs: settings.timeoutMs,
      schema,
      secrets,
    });
  };
  /** The query as it may leave, or the failure that sends nothing. */
  const sendable = (query: string, page: number, lastPage: number): string | ProviderFailure => {
    const text = textQuery(query);
    if (text === null) return providerFailure('invalid_input', 'brave search: the query must be non-empty text', secrets);
    if (!Number.isInteger(page) || page < 0 || page > lastPage) return providerFailure('invalid_input', `brave search: page ${page} is out of range`, secrets);
    return text.split(' ').slice(0, MAX_QUERY_WORDS).join(' ');
  };
  const count = (results: number, max: number) => Math.min(max, Math.max(1, Math.round(Number.isFinite(results) ? results : 1)));

  return {
    async searchWeb(query, page = 0): Promise<GlobalSearchResult> {
      const n = count(settings.web.results, MAX_WEB_COUNT);
      const text = sendable(query, page, MAX_WEB_OFFSET);
      if (typeof text !== 'string') return text;
      const answer = await call(WEB_PATH, { q: text, count: String(n), offset: String(page) }, webAnswer);
      if (!answer.ok) return answer;
      if (answer.data.type === 'ErrorResponse') return errorFailure(answer.data, secrets);
      // No more than the count asked for: each item becomes stored evidence.
      return { ok: true, total: null, items: (answer.data.web?.results ?? []).slice(0, n).map(webItem) };
    },
    async searchImages(query, page = 0): Promise<GlobalSearchResult> {
      const n = count(settings.image.results, MAX_IMAGE_COUNT);
      // Image search has no offset: page p asks for the first (p + 1) * n results and keeps the last n.
      const text = sendable(query, page, Math.floor(MAX_IMAGE_COUNT / n) - 1);
      if (typeof text !== 'string') return text;
      const upTo = (page + 1) * n;
      const answer = await call(IMAGE_PATH, { q: text, count: String(upTo) }, imageAnswer);
      if (!answer.ok) return answer;
      if (answer.data.type === 'ErrorResponse') return errorFailure(answer.data, secrets);
      return { ok: true, total: null, items: answer.data.results.slice(page * n, upTo).map(imageItem) };
    },
  };
}
