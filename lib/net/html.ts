import { Parser } from 'htmlparser2';

/** Text of an HTML fragment: tags removed, entities decoded, whitespace collapsed; script and style dropped. */
export function plainText(html: string): string {
  const parts: string[] = [];
  let hiddenDepth = 0;
  const parser = new Parser({
    onopentag(name) {
      if (name === 'script' || name === 'style') hiddenDepth++;
    },
    onclosetag(name) {
      if ((name === 'script' || name === 'style') && hiddenDepth > 0) hiddenDepth--;
    },
    ontext(text) {
      if (hiddenDepth === 0) parts.push(text);
    },
  });
  parser.write(html);
  parser.end();
  return parts.join('').replace(/\s+/g, ' ').trim();
}

const OPEN_GRAPH_IMAGE = new Set(['og:image', 'og:image:url', 'og:image:secure_url']);
const TWITTER_IMAGE = new Set(['twitter:image', 'twitter:image:src']);

/**
 * Representative image URLs of an HTML page, best first: the Open Graph image, the Twitter card
 * image, then `<img src>` in document order. Relative URLs are resolved against the page (or its
 * `<base href>`); only http(s) URLs are kept, each once.
 */
export function extractPageImages(html: string, pageUrl: string, limit: number): string[] {
  const openGraph: string[] = [];
  const twitter: string[] = [];
  const inline: string[] = [];
  let baseHref: string | undefined;
  const parser = new Parser({
    onopentag(name, attributes) {
      if (name === 'base' && baseHref === undefined && attributes.href) baseHref = attributes.href;
      if (name === 'meta' && attributes.content) {
        const key = (attributes.property ?? attributes.name ?? '').trim().toLowerCase();
        if (OPEN_GRAPH_IMAGE.has(key)) openGraph.push(attributes.content);
        else if (TWITTER_IMAGE.has(key)) twitter.push(attributes.content);
      }
      if (name === 'img' && attributes.src) inline.push(attributes.src);
    },
  });
  parser.write(html);
  parser.end();

  let base: URL;
  try {
    base = new URL(pageUrl);
  } catch {
    return [];
  }
  if (baseHref !== undefined && URL.canParse(baseHref, base)) base = new URL(baseHref, base);
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of [...openGraph, ...twitter, ...inline]) {
    if (out.length >= limit) break;
    let url: URL;
    try {
      url = new URL(raw.trim(), base);
    } catch {
      continue;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') continue;
    url.hash = '';
    if (seen.has(url.href)) continue;
    seen.add(url.href);
    out.push(url.href);
  }
  return out;
}
