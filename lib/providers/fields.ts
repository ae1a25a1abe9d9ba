import { plainText } from '../net/html.js';

/** Field clean-up shared by the clients: what goes out as a query, and what comes back as a URL or title. */

/** Queries longer than this are cut: search engines ignore the rest and long queries find nothing. */
export const MAX_QUERY_CHARS = 200;

/**
 * The text query a search client may send, or null. The check runs at run time as well as in the
 * types, so nothing but text (never image bytes) reaches a search engine.
 */
export function textQuery(query: unknown): string | null {
  if (typeof query !== 'string') return null;
  const text = query.replace(/\s+/g, ' ').trim();
  if (text === '') return null;
  return text.length > MAX_QUERY_CHARS ? text.slice(0, MAX_QUERY_CHARS).trim() : text;
}

/** An http(s) URL as given, or null for anything else (javascript:, data:, relative, garbage). */
export function httpUrlOrNull(value: string | null | undefined): string | null {
  if (!value) return null;
  try {
    const url = new URL(value.trim());
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

/** Providers mark matches with `<b>` and escape entities; evidence keeps the plain text. */
export const cleanTitle = (value: string | null | undefined) => (value ? plainText(value) : '');

/** Joins a path to an operator-given base URL, keeping any path the base already has. */
export function endpoint(baseUrl: string, path: string): URL {
  return new URL(baseUrl.replace(/\/+$/, '') + path);
}
