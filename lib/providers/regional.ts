import { z } from 'zod';
import type { Config } from '../config.js';
import { callProvider, providerFailure, type ProviderResult } from './call.js';
import { cleanTitle, endpoint, httpUrlOrNull, MAX_SNIPPET_CHARS, textQuery } from './fields.js';
import type { Egress } from '../ports.js';

/**
 * The regional web-search provider: image, blog and web-document search. It receives text
 * queries only; no send function here accepts anything else.
 */

export type RegionalSort = 'sim' | 'date';

export interface RegionalSettings {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  timeoutMs: number;
  image: { display: number; pages: number; sort: RegionalSort };
  blog: { display: number; pages: number; sort: RegionalSort };
  web: { display: number; pages: number };
}

const asSort = (value: string): RegionalSort => (value === 'date' ? 'date' : 'sim');

export function regionalSettings(config: Config): RegionalSettings {
  return {
    baseUrl: config.REGIONAL_API_URL,
    clientId: config.REGIONAL_CLIENT_ID,
    clientSecret: config.REGIONAL_CLIENT_SECRET,
    timeoutMs: config.SVC_PROVIDER_TIMEOUT_MS,
    image: { display: config.REGIONAL_SEARCH_DISPLAY, pages: config.REGIONAL_SEARCH_PAGES, sort: asSort(config.REGIONAL_SEARCH_SORT) },
    blog: {
      display: config.REGIONAL_BLOG_SEARCH_DISPLAY,
      pages: config.REGIONAL_BLOG_SEARCH_PAGES,
      sort: asSort(config.REGIONAL_BLOG_SEARCH_SORT),
    },
    web: { display: config.REGIONAL_WEB_SEARCH_DISPLAY, pages: config.REGIONAL_WEB_SEARCH_PAGES },
  };
}

/** An image search hit; the provider's `link` is the image itself and it gives no page address. */
export interface RegionalImageResult {
  title: string;
  imageUrl: string | null;
  thumbnailUrl: string | null;
  width: number | null;
  height: number | null;
}

/** A blog or web-document hit; the provider's `link` is the page. */
export interface RegionalDocumentResult {
  title: string;
  pageUrl: string | null;
  description: string;
}

export type RegionalSearchResult<Item> = ProviderResult<{ total: number; items: Item[] }>;

export interface RegionalClient {
  /** One request: page `page` (from 0) of the image search. */
  searchImages(query: string, page?: number): Promise<RegionalSearchResult<RegionalImageResult>>;
  searchBlogs(query: string, page?: number): Promise<RegionalSearchResult<RegionalDocumentResult>>;
  searchWebDocuments(query: string, page?: number): Promise<RegionalSearchResult<RegionalDocumentResult>>;
}

/** The provider sends sizes as digit strings; a size that is not a positive integer is unknown. */
const size = z
  .union([z.string(), z.number()])
  .nullish()
  .transform((value) => {
    const n = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;
    return typeof n === 'number' && Number.isInteger(n) && n > 0 ? n : null;
  });

const envelope = <T extends z.ZodType>(item: T) =>
  z.object({
    lastBuildDate: z.string().optional(),
    total: z.number().int().nonnegative(),
    start: z.number().int(),
    display: z.number().int(),
    items: z.array(item),
  });

const imageAnswer = envelope(
  z.object({
    title: z.string(),
    link: z.string(),
    thumbnail: z.string().nullish(),
    sizewidth: size,
    sizeheight: size,
  }),
);

const documentAnswer = envelope(
  z.object({
    title: z.string(),
    link: z.string(),
    description: z.string().nullish(),
  }),
);

/** No more than the `display` asked for: each item becomes stored evidence. */
const firstItems = <T>(items: readonly T[], display: number): T[] => items.slice(0, display);

/** The provider refuses a start beyond this. */
const MAX_START = 1000;

export function createRegionalClient(settings: RegionalSettings, egress: Egress): RegionalClient {
  const secrets = [settings.clientId, settings.clientSecret];

  async function search<S extends z.ZodType>(path: string, schema: S, query: string, page: number, display: number, sort?: RegionalSort) {
    const text = textQuery(query);
    if (text === null) return providerFailure('invalid_input', 'regional search: the query must be non-empty text', secrets);
    const start = 1 + page * display;
    if (!Number.isInteger(page) || page < 0 || start > MAX_START) {
      return providerFailure('invalid_input', `regional search: page ${page} is out of range`, secrets);
    }
    const url = endpoint(settings.baseUrl, path);
    url.searchParams.set('query', text);
    url.searchParams.set('display', String(display));
    url.searchParams.set('start', String(start));
    if (sort) url.searchParams.set('sort', sort);
    return callProvider(egress, {
      provider: 'regional search',
      url,
      method: 'GET',
      headers: { 'X-Regional-Client-Id': settings.clientId, 'X-Regional-Client-Secret': settings.clientSecret },
      timeoutMs: settings.timeoutMs,
      schema,
      secrets,
    });
  }

  return {
    async searchImages(query, page = 0) {
      const answer = await search('/v1/search/image', imageAnswer, query, page, settings.image.display, settings.image.sort);
      if (!answer.ok) return answer;
      return {
        ok: true,
        total: answer.data.total,
        items: firstItems(answer.data.items, settings.image.display).map((item) => ({
          title: cleanTitle(item.title),
          imageUrl: httpUrlOrNull(item.link),
          thumbnailUrl: httpUrlOrNull(item.thumbnail),
          width: item.sizewidth,
          height: item.sizeheight,
        })),
      };
    },
    async searchBlogs(query, page = 0) {
      const answer = await search('/v1/search/blog', documentAnswer, query, page, settings.blog.display, settings.blog.sort);
      return answer.ok ? { ok: true, total: answer.data.total, items: firstItems(answer.data.items, settings.blog.display).map(toDocument) } : answer;
    },
    async searchWebDocuments(query, page = 0) {
      const answer = await search('/v1/search/webkr', documentAnswer, query, page, settings.web.display);
      return answer.ok ? { ok: true, total: answer.data.total, items: firstItems(answer.data.items, settings.web.display).map(toDocument) } : answer;
    },
  };
}

function toDocument(item: { title: string; link: string; description?: string | null }): RegionalDocumentResult {
  return { title: cleanTitle(item.title), pageUrl: httpUrlOrNull(item.link), description: cleanTitle(item.description, MAX_SNIPPET_CHARS) };
}
