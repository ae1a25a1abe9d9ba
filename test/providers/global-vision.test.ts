import { DEFAULT_MAX_PIXELS } from '../../lib/images/decode.js';
import { localImageService } from '../../lib/images/local-service.js';
import { readFile } from 'node:fs/promises';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConfig } from '../../lib/config.js';
import { approveForVision, type ApprovedImage } from '../../lib/providers/derived-image.js';
import { createGlobalVisionClient, globalVisionSettings, MAX_PAGES_PER_IMAGE, type GlobalVisionClient } from '../../lib/providers/global-vision.js';
import { FAKE_VISION_API_KEY } from '../fakes/vision.js';
import { nodeEgress } from '../../lib/net/http-client.js';
import { useFakeProviders } from '../helpers/fake-world.js';

const fakes = useFakeProviders({ resetEach: true });
let client: GlobalVisionClient;
let original: Buffer;
let approved: ApprovedImage;

/** The service's configuration pointed at the fakes. */
const configFor = (extra: Record<string, string> = {}) => buildConfig({ ...fakes.settings, ...extra }).config;

const images = localImageService(DEFAULT_MAX_PIXELS);
afterAll(() => images.close());

beforeAll(async () => {
  client = createGlobalVisionClient(globalVisionSettings(configFor()), nodeEgress);
  const rocket = await readFile(new URL('../fixtures/images/rocket.jpg', import.meta.url));
  // The submission carries EXIF with a GPS position and an owner: none of it may leave the service.
  original = await sharp(rocket)
    .withExif({ IFD0: { Copyright: 'owner-name-in-exif' }, IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '37/1 33/1 0/1' } })
    .jpeg()
    .toBuffer();
  approved = await approveForVision(images, original);
});

describe('web detection request', () => {
  it('posts one WEB_DETECTION request with the derived image base64-encoded and the key in the query', async () => {
    const result = await client.detectWeb(approved);
    expect(result.ok).toBe(true);
    expect(fakes.vision.requests).toHaveLength(1);
    const [request] = fakes.vision.requests;
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/v1/images:annotate');
    expect(request.query.key).toBe(FAKE_VISION_API_KEY);
    expect(request.headers['content-type']).toMatch(/^application\/json/);
    const body = request.json as { requests: unknown[]; parent?: string };
    expect(body.parent).toBeUndefined();
    expect(body.requests).toEqual([{ image: { content: approved.bytes.toString('base64') }, features: [{ type: 'WEB_DETECTION', maxResults: 20 }] }]);
  });

  it('sends exactly the derived bytes, never the original with its metadata', async () => {
    await client.detectWeb(approved);
    const [sent] = fakes.vision.sentImages();
    expect(original.includes('owner-name-in-exif')).toBe(true);
    expect(sent.equals(approved.bytes)).toBe(true);
    expect(sent.equals(original)).toBe(false);
    expect(sent.includes('owner-name-in-exif')).toBe(false);
    expect((await sharp(sent).metadata()).exif).toBeUndefined();
  });

  it('adds the parent when GLOBAL_VISION_PARENT is set', async () => {
    const withParent = createGlobalVisionClient(globalVisionSettings(configFor({ GLOBAL_VISION_PARENT: 'projects/p1/locations/eu' })), nodeEgress);
    await withParent.detectWeb(approved);
    expect((fakes.vision.requests[0].json as { parent?: string }).parent).toBe('projects/p1/locations/eu');
  });

  it('refuses an object without derived bytes, sending nothing', async () => {
    const forged = { bytes: 'not bytes', format: 'jpeg', width: 1, height: 1 } as unknown as ApprovedImage;
    const result = await client.detectWeb(forged);
    expect(result).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
    expect(fakes.vision.requests).toHaveLength(0);
  });
});

describe('web detection answer', () => {
  it('reads entities, matching images, pages with plain-text titles, similar images and best-guess labels', async () => {
    fakes.vision.detection = {
      webEntities: [{ entityId: '/m/0abc', score: 0.92, description: 'Saturn V' }, { score: 0.4 }],
      fullMatchingImages: [{ url: 'https://img.example.org/full.jpg', score: 0.9 }, { url: 'ftp://img.example.org/x.jpg' }],
      partialMatchingImages: [{ url: 'https://img.example.org/partial.jpg' }],
      pagesWithMatchingImages: [
        {
          url: 'https://news.example.org/launch',
          pageTitle: '<b>Saturn V</b> launch &amp; history',
          fullMatchingImages: [{ url: 'https://news.example.org/launch.jpg' }],
        },
      ],
      visuallySimilarImages: [{ url: 'https://img.example.org/similar.jpg' }],
      bestGuessLabels: [{ label: 'saturn v rocket', languageCode: 'en' }],
    };
    const result = await client.detectWeb(approved);
    expect(result).toEqual({
      ok: true,
      detection: {
        webEntities: [
          { entityId: '/m/0abc', score: 0.92, description: 'Saturn V' },
          { entityId: null, score: 0.4, description: '' },
        ],
        fullMatchingImages: [{ url: 'https://img.example.org/full.jpg', score: 0.9 }],
        partialMatchingImages: [{ url: 'https://img.example.org/partial.jpg', score: null }],
        pagesWithMatchingImages: [
          {
            url: 'https://news.example.org/launch',
            pageTitle: 'Saturn V launch & history',
            score: null,
            fullMatchingImages: [{ url: 'https://news.example.org/launch.jpg', score: null }],
            partialMatchingImages: [],
          },
        ],
        visuallySimilarImages: [{ url: 'https://img.example.org/similar.jpg', score: null }],
        bestGuessLabels: [{ label: 'saturn v rocket', languageCode: 'en' }],
      },
      pagesByImage: new Map([
        ['https://news.example.org/launch.jpg', { pages: [{ url: 'https://news.example.org/launch', title: 'Saturn V launch & history' }], named: 1 }],
      ]),
    });
  });

  it('lists the pages naming each image once, in the answer order, cut at the cap with the count of all', async () => {
    const copy = 'https://img.example.org/copy.jpg';
    fakes.vision.detection = {
      fullMatchingImages: [{ url: copy }],
      pagesWithMatchingImages: [
        { url: 'https://a.example.org/1', pageTitle: 'One', fullMatchingImages: [{ url: copy }, { url: copy }], partialMatchingImages: [{ url: copy }] },
        { url: 'javascript:alert(1)', fullMatchingImages: [{ url: copy }] },
        { url: 'https://a.example.org/2', partialMatchingImages: [{ url: copy }, { url: 'ftp://img.example.org/x.jpg' }] },
        ...Array.from({ length: 40 }, (_, i) => ({ url: `https://b.example.org/${i % 25}`, fullMatchingImages: [{ url: copy }] })),
      ],
    };
    const result = await client.detectWeb(approved);
    if (!result.ok) throw new Error(result.error.message);
    expect([...result.pagesByImage.keys()]).toEqual([copy]);
    const { pages, named } = result.pagesByImage.get(copy)!;
    expect(named).toBe(27);
    expect(pages).toHaveLength(MAX_PAGES_PER_IMAGE);
    expect(pages.slice(0, 3)).toEqual([
      { url: 'https://a.example.org/1', title: 'One' },
      { url: 'https://a.example.org/2', title: null },
      { url: 'https://b.example.org/0', title: null },
    ]);
    expect(new Set(pages.map((p) => p.url)).size).toBe(MAX_PAGES_PER_IMAGE);
  });

  it('treats an answer without web detection as no evidence, not a failure', async () => {
    fakes.vision.respondOnce({ json: { responses: [{}] } });
    const result = await client.detectWeb(approved);
    expect(result.ok && result.detection.pagesWithMatchingImages).toEqual([]);
  });

  it('turns an error inside the answer into a provider failure', async () => {
    fakes.vision.respondOnce({ json: { responses: [{ error: { code: 3, message: 'Bad image data.' } }] } });
    const result = await client.detectWeb(approved);
    expect(result).toEqual({ ok: false, error: { code: 'provider_error', message: expect.stringContaining('Bad image data.') } });
  });

  it('reports a refused key as an HTTP failure whose message does not contain the key', async () => {
    const wrongKey = 'AIza-wrong-key-777';
    const result = await createGlobalVisionClient({ ...globalVisionSettings(configFor()), apiKey: wrongKey }, nodeEgress).detectWeb(approved);
    expect(result).toMatchObject({ ok: false, error: { code: 'http_error' } });
    if (result.ok) return;
    expect(result.error.message).toContain('403');
    expect(result.error.message).not.toContain(wrongKey);
  });

  it('redacts the key when the provider echoes it back in an error', async () => {
    fakes.vision.respondOnce({ status: 400, json: { error: { code: 400, message: `API key ${FAKE_VISION_API_KEY} expired` } } });
    const result = await client.detectWeb(approved);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.message).toContain('expired');
    expect(result.error.message).not.toContain(FAKE_VISION_API_KEY);
  });
});
