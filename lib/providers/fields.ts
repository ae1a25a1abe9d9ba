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

/**
 * Lengths at which text from a provider is cut where it enters: far beyond any real title, snippet,
 * entity or label, and small enough that every later step (HTML clean-up, query derivation, the
 * review desk) runs on a bounded text whatever a web page or an answer holds.
 */
export const MAX_TITLE_CHARS = 500;
export const MAX_SNIPPET_CHARS = 2000;
export const MAX_LABEL_CHARS = 200;
/** Longer addresses are refused: browsers and servers give up on them, and they would be stored. */
export const MAX_URL_CHARS = 2048;
// Markup a provider wraps around a title (<b>, entities) is counted in before the cut to plain text.
const MARKUP_ALLOWANCE = 4;

/** An http(s) URL as given, or null for anything else (javascript:, data:, relative, too long, garbage). */
export function httpUrlOrNull(value: string | null | undefined): string | null {
  if (!value || value.length > MAX_URL_CHARS) return null;
  try {
    const url = new URL(value.trim());
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

/** At most `max` characters, cut at a character boundary (a surrogate pair is never split). */
export function capText(value: string, max: number): string {
  if (value.length <= max) return value;
  const last = value.charCodeAt(max - 1);
  return value.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}

/** Providers mark matches with `<b>` and escape entities; evidence keeps the plain text, capped. */
export const cleanTitle = (value: string | null | undefined, max = MAX_TITLE_CHARS) =>
  value ? capText(plainText(capText(value, max * MARKUP_ALLOWANCE)), max) : '';

/** Joins a path to an operator-given base URL, keeping any path the base already has. */
export function endpoint(baseUrl: string, path: string): URL {
  return new URL(baseUrl.replace(/\/+$/, '') + path);
}
