import { plainText } from '../net/html.js';
import type { WebDetection } from '../providers/global-vision.js';

/**
 * Text queries derived from web-detection evidence (SPEC.md section 1, enrichment flow step 2).
 * Page titles and entities come first; a best-guess label only when it is specific; text from
 * face-region detection last and only when specific. Text that is broken (mojibake, replacement
 * characters, unfilled template placeholders) is never sent to a search engine.
 */

export type QueryOrigin = 'page_title' | 'entity' | 'best_guess' | 'face_page_title' | 'face_entity';

export interface QueryCandidate {
  text: string;
  origin: QueryOrigin;
  priority: 'high' | 'low';
  /** Decides the word a helper query gets: Korean text gets `이미지`, any other `image`. */
  language: 'ko' | 'en';
}

/** Words that describe any photo of a person or any picture; alone they find nothing specific. */
const GENERIC_WORDS = new Set([
  'person',
  'people',
  'human',
  'gentleman',
  'gentlemen',
  'lady',
  'man',
  'men',
  'woman',
  'women',
  'boy',
  'girl',
  'child',
  'male',
  'female',
  'adult',
  'portrait',
  'photo',
  'photos',
  'photograph',
  'photography',
  'image',
  'images',
  'picture',
  'pictures',
  'pic',
  'stock',
  'royalty-free',
  'selfie',
  'face',
  'facial',
  'expression',
  'head',
  'smile',
  'hair',
  'forehead',
  'chin',
  'cheek',
  'eyebrow',
  'skin',
  'illustration',
  'wallpaper',
  'screenshot',
  'clip',
  'art',
  'black',
  'white',
  'monochrome',
  'jpeg',
  'jpg',
  'png',
  'gif',
  'free',
  'download',
  'hd',
  'sitting',
  'standing',
  '사람',
  '인물',
  '남자',
  '여자',
  '남성',
  '여성',
  '신사',
  '초상',
  '초상화',
  '사진',
  '이미지',
  '그림',
  '얼굴',
  '셀카',
]);
const STOPWORDS = new Set(['a', 'an', 'the', 'of', 'and', 'or', 'in', 'on', 'at', 'to', 'for', 'with', 'by', 'from', 'as', 'is']);

const HANGUL = /[\u1100-\u11ff\u3130-\u318f\uac00-\ud7a3]/;
const CJK_OR_HANGUL = /[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u9fff\uac00-\ud7a3]/;

/** Characters a UTF-8 text turns into when its bytes are read as Latin-1 or Windows-1252. */
const CP1252_SPECIALS: Record<string, number> = {
  '\u20ac': 0x80,
  '\u201a': 0x82,
  '\u0192': 0x83,
  '\u201e': 0x84,
  '\u2026': 0x85,
  '\u2020': 0x86,
  '\u2021': 0x87,
  '\u02c6': 0x88,
  '\u2030': 0x89,
  '\u0160': 0x8a,
  '\u2039': 0x8b,
  '\u0152': 0x8c,
  '\u017d': 0x8e,
  '\u2018': 0x91,
  '\u2019': 0x92,
  '\u201c': 0x93,
  '\u201d': 0x94,
  '\u2022': 0x95,
  '\u2013': 0x96,
  '\u2014': 0x97,
  '\u02dc': 0x98,
  '\u2122': 0x99,
  '\u0161': 0x9a,
  '\u203a': 0x9b,
  '\u0153': 0x9c,
  '\u017e': 0x9e,
  '\u0178': 0x9f,
};
const MISREAD_RUN = new RegExp(`[\\u0080-\\u00ff${Object.keys(CP1252_SPECIALS).join('')}]{2,}`, 'g');
/** UTF-8 replacement bytes read as CP949, the usual form of broken Korean text. */
const BROKEN_KOREAN = /占쏙옙|�/;
// Patterns whose every attempt stops at the first character that does not fit: linear in the text.
const PLACEHOLDERS = [/%(\d+\$)?[sdif](?![a-z])/i, /%\([a-z_]+\)[sd]/i, /\{\d+\}/, /\[object Object\]/];

const LINE_TERMINATOR = /[\n\r\u2028\u2029]/g;

/**
 * True when `open` is followed later by `close`, on the same line when `sameLine` (a line ends
 * where `.` stops matching). The patterns `\{\{.*?\}\}`, `<%.*?%>` and `\$\{[^}]*\}` mean this, but
 * a regular expression retries them from every `{{` and costs the square of the text's length;
 * this reads each character a bounded number of times.
 */
function opensThenCloses(text: string, open: string, close: string, sameLine: boolean): boolean {
  let from = 0;
  // The first `close` after the latest opening; it stays the first for any later opening before it.
  let end = -1;
  for (;;) {
    const start = text.indexOf(open, from);
    if (start < 0) return false;
    if (end < start + open.length) {
      end = text.indexOf(close, start + open.length);
      if (end < 0) return false;
    }
    if (!sameLine) return true;
    LINE_TERMINATOR.lastIndex = start;
    const lineEnd = LINE_TERMINATOR.exec(text)?.index ?? -1;
    if (lineEnd < 0 || end < lineEnd) return true;
    from = lineEnd + 1;
  }
}

const isContinuation = (byte: number | undefined) => byte !== undefined && byte >= 0x80 && byte <= 0xbf;

/**
 * True when a run of Latin-1/Windows-1252 characters holds the bytes of a UTF-8 sequence. A
 * two-byte sequence counts only when its second character is plain Latin-1, so real accented text
 * followed by a typographic quote or dash ("CAFÉ”") is not mistaken for one.
 */
function holdsUtf8Sequence(run: string): boolean {
  const chars = [...run];
  const bytes = chars.map((ch) => CP1252_SPECIALS[ch] ?? ch.charCodeAt(0));
  for (let i = 0; i < bytes.length; i++) {
    const lead = bytes[i];
    if (lead >= 0xc2 && lead <= 0xdf && isContinuation(bytes[i + 1]) && !(chars[i + 1] in CP1252_SPECIALS)) return true;
    if (lead >= 0xe0 && lead <= 0xef && isContinuation(bytes[i + 1]) && isContinuation(bytes[i + 2])) return true;
    if (lead >= 0xf0 && lead <= 0xf4 && [1, 2, 3].every((k) => isContinuation(bytes[i + k]))) return true;
  }
  return false;
}

/**
 * True when the text shows signs of a decoding accident: a replacement character, C1 controls,
 * or UTF-8 bytes read as Latin-1/Windows-1252 (e.g. `ì´ë¯¸ì§€`, which is `이미지` read the wrong
 * way, even when the misreading lost a byte).
 */
export function hasBrokenEncoding(text: string): boolean {
  if (text.includes('\ufffd') || BROKEN_KOREAN.test(text) || /[\u0080-\u009f]/.test(text)) return true;
  for (const [run] of text.matchAll(MISREAD_RUN)) {
    if (holdsUtf8Sequence(run)) return true;
  }
  return false;
}

export const hasTemplatePlaceholder = (text: string) =>
  opensThenCloses(text, '{{', '}}', true) ||
  opensThenCloses(text, '<%', '%>', true) ||
  opensThenCloses(text, '${', '}', false) ||
  PLACEHOLDERS.some((pattern) => pattern.test(text));

/** Plain, single-spaced query text, or null when it is empty or must never be sent. */
export function cleanQueryText(raw: string | null | undefined): string | null {
  if (!raw) return null;
  const text = plainText(raw).normalize('NFC');
  if (text === '' || hasBrokenEncoding(text) || hasTemplatePlaceholder(text)) return null;
  return text;
}

function words(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[\s\p{P}\p{S}]+/u)
    .filter((word) => word !== '');
}

const meaningful = (word: string) => !GENERIC_WORDS.has(word) && !STOPWORDS.has(word) && !/^\d+$/.test(word) && (word.length >= 2 || CJK_OR_HANGUL.test(word));

/** True when the text says more than "a photo of a person": at least one non-generic word. */
export function isSpecific(text: string): boolean {
  return words(text).some(meaningful);
}

/** A best-guess label without its generic words, or null when nothing specific is left. */
function specificLabel(label: string): string | null {
  const kept = label.split(/\s+/).filter((token) => {
    const parts = words(token);
    return parts.length > 0 && !parts.every((part) => GENERIC_WORDS.has(part) || STOPWORDS.has(part));
  });
  const text = kept.join(' ');
  return isSpecific(text) ? text : null;
}

const languageOf = (text: string): 'ko' | 'en' => (HANGUL.test(text) ? 'ko' : 'en');

const byScore = (detection: WebDetection) => [...detection.webEntities].sort((a, b) => (b.score ?? 0) - (a.score ?? 0)).map((entity) => entity.description);

/** Titles and entities taken in turn, so a few queries cover both kinds of evidence. */
function interleave(titles: string[], entities: string[], titleOrigin: QueryOrigin, entityOrigin: QueryOrigin) {
  const out: { raw: string; origin: QueryOrigin }[] = [];
  for (let i = 0; i < Math.max(titles.length, entities.length); i++) {
    if (i < titles.length) out.push({ raw: titles[i], origin: titleOrigin });
    if (i < entities.length) out.push({ raw: entities[i], origin: entityOrigin });
  }
  return out;
}

/**
 * Ranked, cleaned, de-duplicated (ignoring case) query candidates: high priority first. Face-region
 * detections are the web evidence of face crops sent on re-analysis; only their specific titles
 * and entities are used, and after everything else.
 */
export function deriveQueryCandidates(detection: WebDetection, faceDetections: readonly WebDetection[] = []): QueryCandidate[] {
  const ranked: { text: string | null; origin: QueryOrigin; priority: 'high' | 'low' }[] = [];
  const pageTitles = detection.pagesWithMatchingImages.map((page) => page.pageTitle);
  for (const { raw, origin } of interleave(pageTitles, byScore(detection), 'page_title', 'entity')) {
    const text = cleanQueryText(raw);
    ranked.push({ text: text && isSpecific(text) ? text : null, origin, priority: 'high' });
  }
  for (const { label } of detection.bestGuessLabels) {
    const text = cleanQueryText(label);
    ranked.push({ text: text && specificLabel(text), origin: 'best_guess', priority: 'low' });
  }
  for (const face of faceDetections) {
    const titles = face.pagesWithMatchingImages.map((page) => page.pageTitle);
    for (const { raw, origin } of interleave(titles, byScore(face), 'face_page_title', 'face_entity')) {
      const text = cleanQueryText(raw);
      ranked.push({ text: text && isSpecific(text) ? text : null, origin, priority: 'low' });
    }
  }

  const seen = new Set<string>();
  const out: QueryCandidate[] = [];
  for (const { text, origin, priority } of ranked) {
    if (!text) continue;
    const key = text.toLocaleLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ text, origin, priority, language: languageOf(text) });
  }
  return out;
}

/** Queries for the regional and global image searches: the first `limit` candidates as they are. */
export function imageSearchQueries(candidates: readonly QueryCandidate[], limit: number): string[] {
  return candidates.slice(0, Math.max(0, limit)).map((candidate) => candidate.text);
}

/** The helper form of a candidate: `image` or `이미지` appended, unless the text already says so. */
export function helperQueryText(candidate: QueryCandidate): string {
  const word = candidate.language === 'ko' ? '이미지' : 'image';
  return words(candidate.text).includes(word) ? candidate.text : `${candidate.text} ${word}`;
}

/** Queries for the helper searches (blog, web document, custom web search), at most `limit`. */
export function helperSearchQueries(candidates: readonly QueryCandidate[], limit: number): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const candidate of candidates) {
    if (out.length >= limit) break;
    const text = helperQueryText(candidate);
    const key = text.toLocaleLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(text);
  }
  return out;
}
