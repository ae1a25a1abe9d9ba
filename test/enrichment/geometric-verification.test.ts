import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { buildConfig } from '../../lib/config.js';
import { createLogger } from '../../lib/log.js';
import { httpImageService } from '../../lib/images/http-service.js';
import { localImageService } from '../../lib/images/local-service.js';
import { sourceOf } from '../../lib/images/source.js';
import type { Evidence } from '../../lib/repo/evidence.js';
import { handleImageRequest } from '../../image-service.js';
import { useFakeProviders } from '../helpers/fake-world.js';
import { createTestEnv, type TestEnv } from '../helpers/env.js';
import { copyFixture, fixturePath } from '../helpers/fixtures.js';
import { gridCollage, screenshot } from '../helpers/geometry-transforms.js';
import { seededRandom } from '../helpers/random.js';

/**
 * Issue 14, item 2 in the pipeline: web candidates that the hashes cannot match (the submission as
 * a part of a web page screenshot, a rotated copy) are confirmed by the geometric check, and the
 * evidence says where each image shows the other; a different photograph in the same page chrome is
 * refused.
 */
const fakes = useFakeProviders({ resetEach: true });
let env: TestEnv;

const chelsea = () => sharp(fixturePath('chelsea.png')).removeAlpha();
const bounds = (quad: [number, number][]) => ({
  left: Math.min(...quad.map(([x]) => x)),
  right: Math.max(...quad.map(([x]) => x)),
  top: Math.min(...quad.map(([, y]) => y)),
  bottom: Math.max(...quad.map(([, y]) => y)),
});

afterEach(async () => env?.dispose());

async function enrichChelsea(candidates: Record<string, Buffer>) {
  for (const [path, bytes] of Object.entries(candidates)) fakes.web.addImage(path, bytes, 'image/jpeg');
  fakes.vision.detection = { partialMatchingImages: Object.keys(candidates).map((path) => ({ url: fakes.web.urlFor(path) })) };
  env = await createTestEnv({
    ...fakes.settings,
    SVC_SEARCH_RESULT_COMPARE_LIMIT: '5',
  });
  copyFixture('chelsea.png', env.paths.imagesDir);
  await env.call('POST', '/api/submissions/reload');
  await env.jobs.drain();
  const review = (await (await env.call('GET', '/api/submissions/chelsea/review')).json()) as { evidence: Evidence[] };
  return (path: string) => review.evidence.find((e) => e.image_url === fakes.web.urlFor(path))!;
}

describe('geometric verification of web candidates', () => {
  it('confirms the submission inside a web page screenshot and keeps where it is in each image', async () => {
    const photo = await chelsea().png().toBuffer();
    const page = await screenshot(photo, seededRandom(4));
    const otherPage = await screenshot(await sharp(fixturePath('coffee.png')).removeAlpha().png().toBuffer(), seededRandom(4));
    const evidence = await enrichChelsea({ '/page.jpg': page, '/other-page.jpg': otherPage });

    const found = evidence('/page.jpg');
    expect(found).toMatchObject({ group: 'web_match', matched: true, match_transform: 'geometric' });
    // The plain pHash of a whole page says nothing like a match; the decisive figure is the pixel agreement.
    expect(found.similarity!).toBeLessThan(0.9);
    expect(found.match_similarity!).toBeGreaterThanOrEqual(0.75);
    expect(found.match_inliers!).toBeGreaterThanOrEqual(20);
    // The whole submission shows on the page, as a part of it.
    expect(found.match_region!.submission.coverage).toBeGreaterThan(0.9);
    expect(found.match_region!.candidate.coverage).toBeGreaterThan(0.1);
    expect(found.match_region!.candidate.coverage).toBeLessThan(0.6);
    const onPage = bounds(found.match_region!.candidate.quad);
    expect(onPage.right - onPage.left).toBeLessThan(0.9);

    const other = evidence('/other-page.jpg');
    expect(other).toMatchObject({
      group: 'web_related',
      matched: false,
      match_transform: null,
      match_similarity: null,
      match_inliers: null,
      match_region: null,
    });
  });

  it('confirms a rotated copy and keeps the hash name of a copy the hashes already matched', async () => {
    const rotated = await chelsea().rotate(20, { background: '#ffffff' }).jpeg({ quality: 85 }).toBuffer();
    const mirrored = await chelsea().flop().jpeg({ quality: 85 }).toBuffer();
    const same = await chelsea().jpeg({ quality: 80 }).toBuffer();
    const mirroredRotated = await sharp(await chelsea().flop().png().toBuffer())
      .rotate(-15, { background: '#000000' })
      .jpeg({ quality: 85 })
      .toBuffer();
    const evidence = await enrichChelsea({ '/rotated.jpg': rotated, '/mirrored.jpg': mirrored, '/same.jpg': same, '/mirrored-rotated.jpg': mirroredRotated });

    expect(evidence('/rotated.jpg')).toMatchObject({ group: 'web_match', match_transform: 'geometric' });
    // Only the submission's mirror image is searched: the candidate's keypoints are computed unmirrored.
    expect(evidence('/mirrored-rotated.jpg')).toMatchObject({ group: 'web_match', match_transform: 'hflip+geometric' });
    // A mirrored copy the region hashes found keeps their name and gets the regions from geometry.
    const flipped = evidence('/mirrored.jpg');
    expect(flipped).toMatchObject({ group: 'web_match', match_transform: 'hflip' });
    expect(flipped.match_similarity!).toBeGreaterThan(0.9);
    expect(flipped.match_region!.submission.coverage).toBeGreaterThan(0.95);
    // The same picture as it stands is decided by the pHash; there is no region to draw.
    expect(evidence('/same.jpg')).toMatchObject({ group: 'web_match', match_transform: 'identity', match_inliers: null, match_region: null });
  });
});

describe('geometric verification of collage candidates (issue 29)', () => {
  it('confirms the submission in a cell of a blog collage; a 10,000 px collage fails on the pixel limit and one of 50 tiles is refused, and the rest stands', async () => {
    const photo = await chelsea().png().toBuffer();
    const others = await Promise.all(['coffee.png', 'astronaut.png', 'camera.png'].map((name) => sharp(fixturePath(name)).removeAlpha().png().toBuffer()));
    const grid = await gridCollage(photo, others, seededRandom(1), { layout: '2x2', fit: 'cover', gutter: 0 });
    const huge = await sharp(grid)
      .resize(10_000, 7500, { kernel: 'nearest' })
      .extend({ top: 1250, bottom: 1250, background: '#ffffff' })
      .jpeg({ quality: 88 })
      .toBuffer();
    const tiles = await Promise.all(
      Array.from({ length: 50 }, async (_, i) => ({
        input: await sharp(i === 23 ? photo : others[i % 3])
          .resize(200, 150, { fit: 'cover' })
          .toBuffer(),
        left: (i % 10) * 200,
        top: Math.floor(i / 10) * 150,
      })),
    );
    const fifty = await sharp({ create: { width: 2000, height: 750, channels: 3, background: '#ffffff' } })
      .composite(tiles)
      .jpeg({ quality: 88 })
      .toBuffer();
    const evidence = await enrichChelsea({ '/blog.jpg': grid, '/huge.jpg': huge, '/fifty.jpg': fifty });

    const blog = evidence('/blog.jpg');
    expect(blog).toMatchObject({ group: 'web_match', matched: true, match_transform: 'geometric' });
    // The region drawn on the collage is the photograph's cell, not the neighbours the cover crop cut it from.
    expect(blog.match_region!.candidate.coverage).toBeLessThan(0.3);
    expect(evidence('/huge.jpg')).toMatchObject({
      matched: false,
      error: { code: 'not_an_image', message: expect.stringMatching(/100000000 pixels, more than the limit/) },
    });
    expect(evidence('/fifty.jpg')).toMatchObject({ group: 'web_related', matched: false, match_transform: null, error: null });
  }, 60_000);
});

describe('geometric verification of internal candidates near the threshold', () => {
  it('matches two submissions whose pHashes are near the threshold when geometry confirms, on both sides', async () => {
    env = await createTestEnv();
    // Turned by 5 degrees and cut by 6 % per side: pHash similarity 0.81, no region hash matches (turned
    // by 4, the 7.5 % crop window matches it).
    const turned = await sharp(fixturePath('coffee.png')).removeAlpha().rotate(5, { background: '#ffffff' }).toBuffer({ resolveWithObject: true });
    const { width, height } = turned.info;
    const cut = { left: Math.round(width * 0.06), top: Math.round(height * 0.06), width: Math.round(width * 0.88), height: Math.round(height * 0.88) };
    writeFileSync(join(env.paths.imagesDir, 'coffee-turned.jpg'), await sharp(turned.data).extract(cut).jpeg({ quality: 88 }).toBuffer());
    for (const name of ['coffee.png', 'chelsea.png', 'rocket.jpg']) copyFixture(name, env.paths.imagesDir);
    await env.call('POST', '/api/submissions/reload');
    await env.jobs.drain('analyse');

    const internal = async (id: string) =>
      ((await (await env.call('GET', `/api/submissions/${id}/review`)).json()) as { evidence: Evidence[] }).evidence.filter((e) => e.group === 'internal');
    for (const [id, other] of [
      ['coffee', 'coffee-turned'],
      ['coffee-turned', 'coffee'],
    ]) {
      const [match] = await internal(id);
      expect(match).toMatchObject({ matched: true, matched_submission_id: other, match_transform: 'geometric' });
      expect(match.similarity!).toBeGreaterThanOrEqual(0.8);
      expect(match.similarity!).toBeLessThan(0.9);
      expect(match.match_inliers!).toBeGreaterThanOrEqual(20);
      // The turned copy is cut: it shows most of the original, and all of it shows in the original.
      const [mine, theirs] =
        id === 'coffee' ? [match.match_region!.submission, match.match_region!.candidate] : [match.match_region!.candidate, match.match_region!.submission];
      expect(mine.coverage).toBeGreaterThan(0.6);
      expect(mine.coverage).toBeLessThan(0.9);
      expect(theirs.coverage).toBeGreaterThan(0.95);
    }
    expect(await internal('chelsea')).toEqual([]);
    expect(await internal('rocket')).toEqual([]);
  });
});

describe('the geometric check behind the image service', () => {
  const images = localImageService(buildConfig({}).config.SVC_MAX_IMAGE_PIXELS);
  const remote = httpImageService((request) => handleImageRequest(request, images));
  afterAll(() => images.close());

  it('answers over HTTP what it answers in process', async () => {
    const photo = readFileSync(fixturePath('rocket.jpg'));
    const crop = await sharp(photo).extract({ left: 60, top: 40, width: 420, height: 320 }).jpeg().toBuffer();
    const [inProcess, overHttp] = [await images.matchGeometry(sourceOf(crop), sourceOf(photo)), await remote.matchGeometry(sourceOf(crop), sourceOf(photo))];
    expect(overHttp).toEqual(inProcess);
    expect(overHttp, JSON.stringify(overHttp)).toMatchObject({ confirmed: true, mirrored: false });
  });

  it('refuses what is not an image and a request that is not the right shape, and keeps working', async () => {
    const photo = readFileSync(fixturePath('rocket.jpg'));
    await expect(remote.matchGeometry(sourceOf(Buffer.from('not an image at all')), sourceOf(photo))).rejects.toThrow(/not.*image|unsupported|decode/i);
    const bad = await handleImageRequest(new Request('https://image-service/v1/match-geometry', { method: 'POST', body: '{"query": 1}' }), images);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: { code: 'invalid_request', message: 'expected {query: base64, reference: base64}' } });
    expect((await remote.matchGeometry(sourceOf(photo), sourceOf(photo))).confirmed).toBe(true);
  });

  it('answers a failure of its own with a plain 500 and logs the route and the reason for the operator', async () => {
    const lines: string[] = [];
    const log = createLogger(buildConfig({}).config, { sink: (_level, line) => lines.push(line) });
    const failing = { ...images, analyse: () => Promise.reject(new Error('libvips: out of memory')) };
    const answer = await handleImageRequest(
      new Request('https://image-service/v1/analyse', { method: 'POST', body: readFileSync(fixturePath('rocket.jpg')) }),
      failing,
      log,
    );
    expect(answer.status).toBe(500);
    expect(await answer.json()).toEqual({ error: { code: 'internal', message: 'the image could not be processed' } });
    expect(lines.map((line) => JSON.parse(line))).toEqual([
      expect.objectContaining({ level: 'error', message: 'image request failed', route: 'analyse', error: 'libvips: out of memory' }),
    ]);
  });
});
