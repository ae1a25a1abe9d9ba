import { startFakeServer, type FakeServer } from './server.js';

/** The web-detection vision service: POST /v1/images:annotate?key=..., feature WEB_DETECTION. */

export interface RawWebImage {
  url: string;
  score?: number;
}

/** The provider's `webDetection` object as it sends it. */
export interface RawWebDetection {
  webEntities?: { entityId?: string; score?: number; description?: string }[];
  fullMatchingImages?: RawWebImage[];
  partialMatchingImages?: RawWebImage[];
  pagesWithMatchingImages?: {
    url: string;
    pageTitle?: string;
    score?: number;
    fullMatchingImages?: RawWebImage[];
    partialMatchingImages?: RawWebImage[];
  }[];
  visuallySimilarImages?: RawWebImage[];
  bestGuessLabels?: { label: string; languageCode?: string }[];
}

export interface FakeVision extends FakeServer {
  /** What every annotate request detects; a function sees the decoded image bytes. */
  detection: RawWebDetection | ((image: Buffer) => RawWebDetection);
  /** The image bytes of every annotate request received, decoded from base64. */
  sentImages(): Buffer[];
}

export const FAKE_VISION_API_KEY = 'fake-vision-key-AIza93x';

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

const permissionDenied = {
  status: 403,
  json: { error: { code: 403, message: 'The request is missing a valid API key.', status: 'PERMISSION_DENIED' } },
};

export async function startFakeVision(apiKey: string = FAKE_VISION_API_KEY): Promise<FakeVision> {
  // Assigned before the first request can arrive; the default answer reads the test's current setting.
  let fake: FakeVision | undefined;

  const server = await startFakeServer((request) => {
    if (request.method !== 'POST' || request.path !== '/v1/images:annotate') {
      return { status: 404, json: { error: { code: 404, message: 'Not Found', status: 'NOT_FOUND' } } };
    }
    if (request.query.key !== apiKey) return permissionDenied;
    const body = request.json as { requests?: { image?: { content?: unknown }; features?: { type?: string }[] }[] } | undefined;
    if (!body || !Array.isArray(body.requests) || body.requests.length === 0) {
      return { status: 400, json: { error: { code: 400, message: 'Request must contain at least one request.', status: 'INVALID_ARGUMENT' } } };
    }
    const responses = body.requests.map((one) => {
      const content = one.image?.content;
      if (typeof content !== 'string' || content === '' || !BASE64.test(content)) {
        return { error: { code: 3, message: 'Bad image data.' } };
      }
      if (!one.features?.some((feature) => feature.type === 'WEB_DETECTION')) return {};
      const scripted = fake?.detection ?? {};
      const detection = typeof scripted === 'function' ? scripted(Buffer.from(content, 'base64')) : scripted;
      return { webDetection: detection };
    });
    return { json: { responses } };
  });

  fake = Object.assign(server, {
    detection: {} as FakeVision['detection'],
    sentImages: () =>
      server.requests
        .map((r) => (r.json as { requests?: { image?: { content?: string } }[] } | undefined)?.requests?.[0]?.image?.content)
        .filter((content): content is string => typeof content === 'string')
        .map((content) => Buffer.from(content, 'base64')),
  });
  return fake;
}
