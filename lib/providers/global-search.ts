import { z } from 'zod';
import type { Config } from '../config.js';
import { callProvider, providerFailure, type ProviderResult } from './call.js';
import { cleanTitle, httpUrlOrNull, MAX_SNIPPET_CHARS, textQuery } from './fields.js';
import type { Egress } from '../ports.js';

/**
 * The global custom search engine (a JSON search API with a key and a search-engine id). It
 * receives text queries only; no send function here accepts anything else.
 */

export interface GlobalSearchSettings {
  /** The full JSON API address; parameters go in its query string. */
  url: string;
  apiKey: string;
  cx: string;
  timeoutMs: number;
  image: { results: number; pages: number };
  web: { results: number; pages: number };
}

/** The provider's own bounds for `num` and for the last result it will return. */
export const MIN_NUM = 1;
export const MAX_NUM = 10;
const MAX_RESULT_POSITION = 100;

export const clampNum = (n: number) => Math.min(MAX_NUM, Math.max(MIN_NUM, Math.round(Number.isFinite(n) ? n : MIN_NUM)));

export function globalSearchSettings(config: Config): GlobalSearchSettings {
  return {
    url: config.GLOBAL_CUSTOM_SEARCH_URL,
    apiKey: config.GLOBAL_CUSTOM_SEARCH_API_KEY,
    cx: config.GLOBAL_CUSTOM_SEARCH_CX,
    timeoutMs: config.SVC_PROVIDER_TIMEOUT_MS,
    image: { results: config.GLOBAL_CUSTOM_SEARCH_IMAGE_RESULTS, pages: config.GLOBAL_CUSTOM_SEARCH_IMAGE_PAGES },
    web: { results: config.GLOBAL_CUSTOM_SEARCH_WEB_RESULTS, pages: config.GLOBAL_CUSTOM_SEARCH_WEB_PAGES },
  };
}

export interface GlobalSearchItem {
  title: string;
  /** The page the hit is on (image search: the image's context page). */
  pageUrl: string | null;
  /** The image itself (image search only). */
  imageUrl: string | null;
  thumbnailUrl: string | null;
  snippet: string;
  /** Representative images the engine found on the page (web search): `cse_image`, then `og:image`. */
  pageImageUrls: string[];
}

export type GlobalSearchResult = ProviderResult<{ total: number | null; items: GlobalSearchItem[] }>;

export interface GlobalSearchClient {
  /** One request: page `page` (from 0) of the image search. */
  searchImages(query: string, page?: number): Promise<GlobalSearchResult>;
  searchWeb(query: string, page?: number): Promise<GlobalSearchResult>;
}

const srcList = z.array(z.object({ src: z.string().nullish() }).loose()).nullish();

const itemSchema = z.object({
  title: z.string().nullish(),
  link: z.string(),
  snippet: z.string().nullish(),
  image: z.object({ contextLink: z.string().nullish(), thumbnailLink: z.string().nullish() }).loose().nullish(),
  pagemap: z
    .object({
      cse_image: srcList,
      cse_thumbnail: srcList,
      metatags: z.array(z.record(z.string(), z.unknown())).nullish(),
    })
    .loose()
    .nullish(),
});

const answerSchema = z.object({
  searchInformation: z.object({ totalResults: z.string().nullish() }).loose(),
  items: z.array(itemSchema).nullish(),
});

type RawItem = z.infer<typeof itemSchema>;

function pageImages(item: RawItem): string[] {
  const found = [...(item.pagemap?.cse_image ?? []).map((image) => image.src), ...(item.pagemap?.metatags ?? []).map((tags) => tags['og:image'])];
  const out: string[] = [];
  for (const raw of found) {
    const url = typeof raw === 'string' ? httpUrlOrNull(raw) : null;
    if (url && !out.includes(url)) out.push(url);
  }
  return out;
}

function toItem(item: RawItem, imageSearch: boolean): GlobalSearchItem {
  const link = httpUrlOrNull(item.link);
  return {
    title: cleanTitle(item.title),
    pageUrl: imageSearch ? httpUrlOrNull(item.image?.contextLink) : link,
    imageUrl: imageSearch ? link : null,
    thumbnailUrl: httpUrlOrNull(item.image?.thumbnailLink ?? item.pagemap?.cse_thumbnail?.[0]?.src),
    snippet: cleanTitle(item.snippet, MAX_SNIPPET_CHARS),
    pageImageUrls: imageSearch ? [] : pageImages(item),
  };
}

export function createGlobalSearchClient(settings: GlobalSearchSettings, egress: Egress): GlobalSearchClient {
  const secrets = [settings.apiKey, settings.cx];

  async function search(query: string, page: number, results: number, imageSearch: boolean): Promise<GlobalSearchResult> {
    const text = textQuery(query);
    if (text === null) return providerFailure('invalid_input', 'custom search: the query must be non-empty text', secrets);
    const num = clampNum(results);
    const start = 1 + page * num;
    if (!Number.isInteger(page) || page < 0 || start + num - 1 > MAX_RESULT_POSITION) {
      return providerFailure('invalid_input', `custom search: page ${page} is out of range`, secrets);
    }
    const url = new URL(settings.url);
    url.searchParams.set('key', settings.apiKey);
    url.searchParams.set('cx', settings.cx);
    url.searchParams.set('q', text);
    url.searchParams.set('num', String(num));
    url.searchParams.set('start', String(start));
    if (imageSearch) url.searchParams.set('searchType', 'image');
    const answer = await callProvider(egress, {
      provider: 'custom search',
      url,
      method: 'GET',
      timeoutMs: settings.timeoutMs,
      schema: answerSchema,
      secrets,
    });
    if (!answer.ok) return answer;
    const totalText = answer.data.searchInformation.totalResults;
    const total = totalText && /^\d+$/.test(totalText) ? Number(totalText) : null;
    return {
      ok: true,
      total,
      // No more than the `num` asked for: each item becomes stored evidence.
      items: (answer.data.items ?? []).slice(0, num).map((item) => toItem(item, imageSearch)),
    };
  }

  return {
    searchImages: (query, page = 0) => search(query, page, settings.image.results, true),
    searchWeb: (query, page = 0) => search(query, page, settings.web.results, false),
  };
}
