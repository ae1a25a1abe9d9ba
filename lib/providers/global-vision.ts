import { z } from 'zod';
import type { Config } from '../config.js';
import { callProvider, providerFailure, type ProviderResult } from './call.js';
import type { ApprovedImage } from './derived-image.js';
import { capText, cleanTitle, endpoint, httpUrlOrNull, MAX_LABEL_CHARS } from './fields.js';
import type { Egress } from '../ports.js';

/**
 * The global web-detection (vision) service. It receives approved derived images only: the send
 * function takes an `ApprovedImage`, which nothing but `approveForVision` produces.
 */

export interface GlobalVisionSettings {
  baseUrl: string;
  apiKey: string;
  /** Project/location the request is billed to; empty when not set. */
  parent: string;
  timeoutMs: number;
  maxResults: number;
}

/** Enough matching pages and entities for query derivation and comparison, without paying for noise. */
const WEB_DETECTION_MAX_RESULTS = 20;

export function globalVisionSettings(config: Config): GlobalVisionSettings {
  return {
    baseUrl: config.GLOBAL_VISION_URL,
    apiKey: config.GLOBAL_VISION_API_KEY,
    parent: config.GLOBAL_VISION_PARENT,
    timeoutMs: config.SVC_PROVIDER_TIMEOUT_MS,
    maxResults: WEB_DETECTION_MAX_RESULTS,
  };
}

export interface WebImage {
  url: string;
  score: number | null;
}

export interface WebPage {
  url: string;
  /** Plain text (the provider marks matched words with tags). */
  pageTitle: string;
  score: number | null;
  fullMatchingImages: WebImage[];
  partialMatchingImages: WebImage[];
}

export interface WebEntity {
  entityId: string | null;
  score: number | null;
  description: string;
}

/** The pages the provider names as holding one image: the first MAX_PAGES_PER_IMAGE, and how many it named. */
export interface ImagePages {
  pages: { url: string; title: string | null }[];
  /** Distinct pages naming the image in the whole answer; more than `pages.length` when the list was cut. */
  named: number;
}

export interface WebDetection {
  webEntities: WebEntity[];
  fullMatchingImages: WebImage[];
  partialMatchingImages: WebImage[];
  pagesWithMatchingImages: WebPage[];
  visuallySimilarImages: WebImage[];
  bestGuessLabels: { label: string; languageCode: string | null }[];
}

export interface GlobalVisionClient {
  /** The detection, and by image address the pages whose full or partial matches list that image (decision 0029). */
  detectWeb(image: ApprovedImage): Promise<ProviderResult<{ detection: WebDetection; pagesByImage: Map<string, ImagePages> }>>;
}

const score = z.number().nullish();
const webImage = z.object({ url: z.string().nullish(), score });
const webImages = z.array(webImage).nullish();

const detectionSchema = z.object({
  webEntities: z.array(z.object({ entityId: z.string().nullish(), score, description: z.string().nullish() })).nullish(),
  fullMatchingImages: webImages,
  partialMatchingImages: webImages,
  pagesWithMatchingImages: z
    .array(
      z.object({
        url: z.string().nullish(),
        pageTitle: z.string().nullish(),
        score,
        fullMatchingImages: webImages,
        partialMatchingImages: webImages,
      }),
    )
    .nullish(),
  visuallySimilarImages: webImages,
  bestGuessLabels: z.array(z.object({ label: z.string().nullish(), languageCode: z.string().nullish() })).nullish(),
});

const answerSchema = z.object({
  responses: z
    .array(
      z.object({
        webDetection: detectionSchema.nullish(),
        error: z.object({ code: z.number().nullish(), message: z.string().nullish() }).nullish(),
      }),
    )
    .min(1),
});

type RawImages = z.infer<typeof webImages>;

/**
 * An answer is cut to the entries asked for (`maxResults` per list): each page, entity and label
 * becomes stored evidence, so an answer padded with many thousands of them would otherwise fill the
 * review desk and hold the pipeline.
 */
const firstOf = <T>(list: readonly T[] | null | undefined, max: number): T[] => (list ?? []).slice(0, max);

function images(raw: RawImages, max: number): WebImage[] {
  const out: WebImage[] = [];
  for (const image of firstOf(raw, max)) {
    const url = httpUrlOrNull(image.url);
    if (url) out.push({ url, score: image.score ?? null });
  }
  return out;
}

/**
 * Each page is captured when its image is verified, so a match keeps at most this many: a page list
 * naming one image thousands of times ends as one capped, de-duplicated list within the download limits.
 */
export const MAX_PAGES_PER_IMAGE = 20;

type RawPages = NonNullable<z.infer<typeof detectionSchema>['pagesWithMatchingImages']>;

/**
 * The pages naming each image, over the whole answer (bounded by the provider answer's byte cap), not
 * only the pages kept as evidence: the address checks run once per distinct text, and each image keeps
 * its first MAX_PAGES_PER_IMAGE distinct pages and the count of all it was named on.
 */
function pagesByImage(raw: RawPages): Map<string, ImagePages> {
  const checked = new Map<string, string | null>();
  const check = (text: string | null | undefined) => {
    if (!text) return null;
    let url = checked.get(text);
    if (url === undefined) {
      url = httpUrlOrNull(text);
      checked.set(text, url);
    }
    return url;
  };
  const named = new Map<string, Set<string>>();
  const out = new Map<string, ImagePages>();
  for (const page of raw) {
    const pageUrl = check(page.url);
    if (!pageUrl) continue;
    for (const image of [...(page.fullMatchingImages ?? []), ...(page.partialMatchingImages ?? [])]) {
      const imageUrl = check(image.url);
      if (!imageUrl) continue;
      let seen = named.get(imageUrl);
      if (!seen) named.set(imageUrl, (seen = new Set()));
      if (seen.has(pageUrl)) continue;
      seen.add(pageUrl);
      let entry = out.get(imageUrl);
      if (!entry) out.set(imageUrl, (entry = { pages: [], named: 0 }));
      entry.named = seen.size;
      if (entry.pages.length < MAX_PAGES_PER_IMAGE) entry.pages.push({ url: pageUrl, title: cleanTitle(page.pageTitle) || null });
    }
  }
  return out;
}

function toDetection(raw: z.infer<typeof detectionSchema> | null | undefined, max: number): WebDetection {
  const pages: WebPage[] = [];
  for (const page of firstOf(raw?.pagesWithMatchingImages, max)) {
    const url = httpUrlOrNull(page.url);
    if (!url) continue;
    pages.push({
      url,
      pageTitle: cleanTitle(page.pageTitle),
      score: page.score ?? null,
      fullMatchingImages: images(page.fullMatchingImages, max),
      partialMatchingImages: images(page.partialMatchingImages, max),
    });
  }
  return {
    webEntities: firstOf(raw?.webEntities, max).map((entity) => ({
      entityId: entity.entityId == null ? null : capText(entity.entityId, MAX_LABEL_CHARS),
      score: entity.score ?? null,
      description: capText(entity.description ?? '', MAX_LABEL_CHARS),
    })),
    fullMatchingImages: images(raw?.fullMatchingImages, max),
    partialMatchingImages: images(raw?.partialMatchingImages, max),
    pagesWithMatchingImages: pages,
    visuallySimilarImages: images(raw?.visuallySimilarImages, max),
    bestGuessLabels: firstOf(raw?.bestGuessLabels, max)
      .filter((label) => label.label)
      .map((label) => ({
        label: capText(label.label ?? '', MAX_LABEL_CHARS),
        languageCode: label.languageCode == null ? null : capText(label.languageCode, MAX_LABEL_CHARS),
      })),
  };
}

export function createGlobalVisionClient(settings: GlobalVisionSettings, egress: Egress): GlobalVisionClient {
  const secrets = [settings.apiKey];
  return {
    async detectWeb(image) {
      if (!Buffer.isBuffer(image?.bytes) || image.bytes.length === 0) {
        return providerFailure('invalid_input', 'web detection: no derived image to send', secrets);
      }
      const url = endpoint(settings.baseUrl, '/v1/images:annotate');
      url.searchParams.set('key', settings.apiKey);
      const answer = await callProvider(egress, {
        provider: 'web detection',
        url,
        method: 'POST',
        json: {
          requests: [
            {
              image: { content: image.bytes.toString('base64') },
              features: [{ type: 'WEB_DETECTION', maxResults: settings.maxResults }],
            },
          ],
          ...(settings.parent ? { parent: settings.parent } : {}),
        },
        timeoutMs: settings.timeoutMs,
        schema: answerSchema,
        secrets,
      });
      if (!answer.ok) return answer;
      const first = answer.data.responses[0];
      if (first.error && (first.error.code || first.error.message)) {
        const detail = (first.error.message ?? '').replace(/\s+/g, ' ').slice(0, 200);
        return providerFailure('provider_error', `web detection: the provider refused the image (${detail || `code ${first.error.code}`})`, secrets);
      }
      return {
        ok: true,
        detection: toDetection(first.webDetection, settings.maxResults),
        pagesByImage: pagesByImage(first.webDetection?.pagesWithMatchingImages ?? []),
      };
    },
  };
}
