import { Tokenizer } from 'htmlparser2';

interface HtmlEvents {
  text?(text: string): void;
  open?(name: string, attributes: Record<string, string>): void;
  close?(name: string): void;
}

const ignore = () => {};

/**
 * Reads the tags and text of HTML from outside (provider titles, fetched pages) in one pass.
 * htmlparser2's tokenizer is used without its Parser, which keeps a stack of open elements and
 * inserts at its front: a page of 100,000 nested `<b>` costs it the square of that (seconds per
 * megabyte). Nothing here needs the tree, so no stack is kept.
 */
function readHtml(html: string, events: HtmlEvents): void {
  let tagName = '';
  let attributes: Record<string, string> = {};
  let attributeName = '';
  let attributeValue = '';
  const slice = (start: number, end: number) => html.slice(start, end);
  const tokenizer = new Tokenizer(
    { decodeEntities: true },
    {
      ontext: (start, end) => events.text?.(slice(start, end)),
      ontextentity: (codepoint) => events.text?.(String.fromCodePoint(codepoint)),
      onopentagname(start, end) {
        tagName = slice(start, end).toLowerCase();
        attributes = {};
      },
      onattribname(start, end) {
        attributeName = slice(start, end).toLowerCase();
        attributeValue = '';
      },
      onattribdata: (start, end) => void (attributeValue += slice(start, end)),
      onattribentity: (codepoint) => void (attributeValue += String.fromCodePoint(codepoint)),
      onattribend() {
        // As browsers do, the first of two attributes with one name wins.
        if (!Object.hasOwn(attributes, attributeName)) attributes[attributeName] = attributeValue;
      },
      onopentagend: () => events.open?.(tagName, attributes),
      onselfclosingtag: () => events.open?.(tagName, attributes),
      onclosetag: (start, end) => events.close?.(slice(start, end).toLowerCase()),
      oncdata: ignore,
      oncomment: ignore,
      ondeclaration: ignore,
      onprocessinginstruction: ignore,
      onend: ignore,
    },
  );
  tokenizer.write(html);
  tokenizer.end();
}

/** Text of an HTML fragment: tags removed, entities decoded, whitespace collapsed; script and style dropped. */
export function plainText(html: string): string {
  const parts: string[] = [];
  let hiddenDepth = 0;
  readHtml(html, {
    open(name) {
      if (name === 'script' || name === 'style') hiddenDepth++;
    },
    close(name) {
      if ((name === 'script' || name === 'style') && hiddenDepth > 0) hiddenDepth--;
    },
    text(text) {
      if (hiddenDepth === 0) parts.push(text);
    },
  });
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
  readHtml(html, {
    open(name, attributes) {
      if (name === 'base' && baseHref === undefined && attributes.href) baseHref = attributes.href;
      if (name === 'meta' && attributes.content) {
        const key = (attributes.property ?? attributes.name ?? '').trim().toLowerCase();
        if (OPEN_GRAPH_IMAGE.has(key)) openGraph.push(attributes.content);
        else if (TWITTER_IMAGE.has(key)) twitter.push(attributes.content);
      }
      if (name === 'img' && attributes.src) inline.push(attributes.src);
    },
  });

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
