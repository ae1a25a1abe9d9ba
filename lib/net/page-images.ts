import { extractPageImages } from './html.js';
import { fetchSafely, type DownloadFailure, type DownloadSettings } from './download.js';

/** Finding the representative images of a result page that has no image URL of its own. */

export interface PageImages {
  ok: true;
  /** The page's address after redirects; candidates are resolved against it. */
  pageUrl: string;
  candidates: string[];
}

const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);

/**
 * Only the start of a page is read for its images. `og:image` and `twitter:image` sit in the head
 * and the first `<img>` come early, while reading is synchronous on the main thread: a page of the
 * whole download limit (10 MiB by default) of hostile markup would hold every other request for
 * about a second; half a megabyte of the worst markup reads in well under 100 ms.
 */
export const MAX_PAGE_HTML_BYTES = 512 * 1024;

function decodeHtml(body: Buffer, contentType: string | null): string {
  const charset = /charset\s*=\s*"?([\w-]+)/i.exec(contentType ?? '')?.[1];
  if (charset) {
    try {
      return new TextDecoder(charset).decode(body);
    } catch {
      // An unknown charset label: UTF-8 below is the web's default.
    }
  }
  return new TextDecoder('utf-8').decode(body);
}

/**
 * Fetches a page under the download rules (scheme, address, size, time, redirects) and lists at
 * most `limit` image candidates: `og:image`, `twitter:image`, then `<img src>`.
 */
export async function findPageImages(pageUrl: string, settings: DownloadSettings, limit: number): Promise<PageImages | DownloadFailure> {
  const fetched = await fetchSafely(pageUrl, settings, 'text/html,application/xhtml+xml');
  if (!fetched.ok) return fetched;
  const mediaType = (fetched.contentType ?? '').split(';')[0].trim().toLowerCase();
  if (mediaType !== '' && !HTML_TYPES.has(mediaType)) {
    return { ok: false, error: { code: 'not_html', message: `the page is ${mediaType}, not HTML` } };
  }
  // A character cut in two at the end decodes as a replacement character, which no URL needs.
  const html = decodeHtml(fetched.body.subarray(0, MAX_PAGE_HTML_BYTES), fetched.contentType);
  return { ok: true, pageUrl: fetched.url, candidates: extractPageImages(html, fetched.url, limit) };
}
