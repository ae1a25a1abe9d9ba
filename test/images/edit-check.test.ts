import sharp, { type Sharp } from 'sharp';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Evidence } from '../../lib/repo/evidence.js';
import { createTestEnv } from '../helpers/env.js';
import { localImageService } from '../../lib/images/local-service.js';
import { greyCopy } from '../../lib/images/edit-check.js';
import type { GeometryResult } from '../../lib/images/geometry.js';
import { sourceOf } from '../../lib/images/source.js';
import { FIXTURE_NAMES, fixturePath } from '../helpers/fixtures.js';
import { coverBox, turnedPale } from '../helpers/geometry-transforms.js';

const images = localImageService(40_000_000);
afterAll(() => images.close());

/**
 * The four edits of the copy-heavy intake, each of a 1600 px photograph as there: its grey copies
 * come from the JPEG's luma grid, the half-size copy's from libvips.
 */
const EDITS: Record<string, (photo: Sharp, width: number, height: number) => Sharp> = {
  mirror: (photo) => photo.flop(),
  crop: (photo, width, height) =>
    photo.extract({ left: Math.round(width * 0.07), top: Math.round(height * 0.07), width: Math.round(width * 0.86), height: Math.round(height * 0.86) }),
  bright: (photo) => photo.modulate({ brightness: 1.25 }),
  half: (photo, width, height) => photo.resize(Math.round(width / 2), Math.round(height / 2)),
};

const originals: Record<string, Buffer> = {};
beforeAll(async () => {
  for (const name of FIXTURE_NAMES) originals[name] = await sharp(fixturePath(name)).resize(1600, 1600, { fit: 'inside' }).removeAlpha().jpeg().toBuffer();
}, 60_000);

async function edited(name: string, edit: string): Promise<Buffer> {
  const { width, height } = await sharp(originals[name]).metadata();
  return EDITS[edit](sharp(originals[name]), width!, height!).jpeg({ quality: 85 }).toBuffer();
}

/** The region hashes' name for each edit, as the pipeline hands it to the check. */
const NAMED: Record<string, string> = { mirror: 'hflip', crop: 'crop', bright: 'identity', half: 'identity' };

describe('an edit the region hashes name, confirmed from the pixels without keypoints', () => {
  it.each(Object.keys(EDITS))(
    'a %s copy of each fixture photograph is confirmed, with the part of the original it shows',
    async (edit) => {
      for (const name of FIXTURE_NAMES) {
        const copy = await edited(name, edit);
        const result = await images.matchGeometry(sourceOf(copy), sourceOf(originals[name]), NAMED[edit]);
        expect(result.confirmed, `${name}: ${JSON.stringify(result)}`).toBe(true);
        const confirmed = result as Extract<GeometryResult, { confirmed: true }>;
        expect(confirmed.mirrored).toBe(edit === 'mirror');
        // No keypoints were matched: the pixels alone confirmed the edit. The camera's crop needs
        // the faint cells' own bar: its plain coat correlates 0.69 at 160 px.
        expect(confirmed.inliers, name).toBe(0);
        // A crop shows about 86 % x 86 % of the original; every other edit all of it.
        expect(confirmed.coverageB).toBeCloseTo(edit === 'crop' ? 0.74 : 1, 1);
        expect(confirmed.coverageA).toBeCloseTo(1, 1);
      }
    },
    60_000,
  );

  it('a brightened copy whose highlights clip to white is matched, from its pixels and from its keypoints', async () => {
    // The cameraman's coat and sky at 1.5 and 1.8 times: 42 and 64 % of the copy at white, where
    // the original still varies; those samples say nothing, and the rest agree.
    for (const brightness of [1.5, 1.8]) {
      const copy = await sharp(originals['camera.png']).modulate({ brightness }).jpeg({ quality: 85 }).toBuffer();
      expect((await images.matchGeometry(sourceOf(copy), sourceOf(originals['camera.png']), 'identity')).confirmed, `${brightness} from the pixels`).toBe(true);
      const byKeypoints = await images.matchGeometry(sourceOf(copy), sourceOf(originals['camera.png']));
      expect(byKeypoints.confirmed, `${brightness}: ${JSON.stringify(byKeypoints)}`).toBe(true);
      expect(byKeypoints.inliers).toBeGreaterThan(20);
    }
  }, 60_000);

  it('the crop is placed where it was cut, mirrored or not', async () => {
    const crop = await edited('chelsea.png', 'crop');
    const mirroredCrop = await sharp(crop).flop().jpeg().toBuffer();
    for (const [query, edit] of [
      [crop, 'crop'],
      [mirroredCrop, 'hflip+crop'],
    ] as const) {
      const result = (await images.matchGeometry(sourceOf(query), sourceOf(originals['chelsea.png']), edit)) as Extract<GeometryResult, { confirmed: true }>;
      expect(result).toMatchObject({ confirmed: true, inliers: 0 });
      const [[left, top], , [right, bottom]] = result.regionB;
      for (const [value, expected] of [
        [left, 0.07],
        [top, 0.07],
        [right, 0.93],
        [bottom, 0.93],
      ])
        expect(Math.abs(value - expected)).toBeLessThan(0.02);
    }
  }, 60_000);

  it('a cover crop to a 4:5 portrait or a 16:9 banner is placed across the whole height or width, from the pixels', async () => {
    const shown: string[] = [];
    for (const name of FIXTURE_NAMES) {
      const { width, height } = await sharp(originals[name]).metadata();
      for (const aspect of [4 / 5, 16 / 9]) {
        const box = coverBox(width!, height!, aspect);
        const { left, top, width: w, height: h } = box;
        const copy = await sharp(originals[name]).extract(box).jpeg({ quality: 85 }).toBuffer();
        const result = await images.matchGeometry(sourceOf(copy), sourceOf(originals[name]), 'crop');
        expect(result.confirmed, `${name} ${aspect}: ${JSON.stringify(result)}`).toBe(true);
        const { regionB, inliers } = result as Extract<GeometryResult, { confirmed: true }>;
        const [[l, t], , [r, b]] = regionB;
        for (const [value, expected] of [
          [l, left / width!],
          [t, top / height!],
          [r, (left + w) / width!],
          [b, (top + h) / height!],
        ])
          expect(Math.abs(value - expected), `${name} ${aspect}`).toBeLessThan(0.02);
        if (inliers === 0) shown.push(`${name} ${aspect.toFixed(2)}`);
      }
    }
    // Every one without keypoints but where a plain area leaves the search unsure (then the keypoints confirm it).
    expect(shown.length, shown.join(', ')).toBeGreaterThanOrEqual(2 * FIXTURE_NAMES.length - 2);
  }, 60_000);

  it('different photographs are not confirmed under any of the edits: the keypoints decide them', async () => {
    for (const [i, x] of FIXTURE_NAMES.entries()) {
      for (const y of FIXTURE_NAMES.slice(i + 1)) {
        for (const edit of ['identity', 'hflip', 'crop', 'hflip+crop']) {
          const result = await images.matchGeometry(sourceOf(originals[x]), sourceOf(originals[y]), edit);
          expect(result.confirmed, `${x} ${y} ${edit}`).toBe(false);
        }
      }
    }
  }, 120_000);

  it('two different pale photographs turned by the same angle on black stay disjoint under the edit the hashes name', async () => {
    // The pairs the turned-canvas benchmark's region hashes match as `identity` (their canvases agree in every cell they reach).
    for (const degrees of [15, -15, 25]) {
      const [x, y] = await Promise.all([turnedPale(fixturePath('rocket.jpg'), 0.25, degrees), turnedPale(fixturePath('chelsea.png'), 0.25, degrees)]);
      for (const edit of ['identity', 'crop']) {
        const result = await images.matchGeometry(sourceOf(x), sourceOf(y), edit);
        expect(result, `${degrees}° ${edit}`).toMatchObject({ confirmed: false, disjoint: true });
      }
    }
  }, 60_000);

  it('a turn or a trimmed border is left to the geometric check, which finds its keypoints', async () => {
    const turned = await sharp(originals['camera.png']).rotate(90).jpeg().toBuffer();
    const result = await images.matchGeometry(sourceOf(turned), sourceOf(originals['camera.png']), 'rot90');
    expect(result.confirmed).toBe(true);
    expect(result.inliers).toBeGreaterThan(20);
  }, 60_000);

  it('bytes that are not an image are refused with the decoder reason, and the service goes on', async () => {
    await expect(images.matchGeometry(sourceOf(Buffer.from('not an image at all')), sourceOf(originals['coffee.png']), 'hflip')).rejects.toThrow(
      /not an image/,
    );
    expect((await images.matchGeometry(sourceOf(await edited('coffee.png', 'mirror')), sourceOf(originals['coffee.png']), 'hflip')).confirmed).toBe(true);
  }, 60_000);
});

describe('grey copies', () => {
  it("a large JPEG's copy from its luma grid is libvips' decode of the same picture, stood upright per EXIF", async () => {
    const upright = await sharp(originals['chelsea.png']).resize(1200, 1600, { fit: 'fill' }).png().toBuffer();
    // Stored sideways: the file's pixels turned a quarter left, its orientation 6 turning them back.
    const sideways = await sharp(upright).rotate(-90).withMetadata({ orientation: 6 }).jpeg({ quality: 90 }).toBuffer();
    const [fromGrid, fromLibvips] = await Promise.all([greyCopy(sideways, 40_000_000), greyCopy(upright, 40_000_000)]);
    expect([fromGrid.width, fromGrid.height]).toEqual([120, 160]);
    expect([fromLibvips.width, fromLibvips.height]).toEqual([120, 160]);
    let difference = 0;
    for (let i = 0; i < fromGrid.pixels.length; i++) difference += Math.abs(fromGrid.pixels[i] - fromLibvips.pixels[i]);
    // The two resample differently (8x8 block means, Lanczos); a copy turned or flipped the wrong way is tens of levels off.
    expect(difference / fromGrid.pixels.length).toBeLessThan(4);
  });
});

describe('internal matches of edited copies, as the review desk shows them', () => {
  it('a mirror image is matched on both sides with its regions and no keypoint count (the pixels confirmed it)', async () => {
    const env = await createTestEnv();
    try {
      writeFileSync(join(env.paths.imagesDir, 'chelsea.jpg'), originals['chelsea.png']);
      writeFileSync(join(env.paths.imagesDir, 'chelsea-mirror.jpg'), await edited('chelsea.png', 'mirror'));
      writeFileSync(join(env.paths.imagesDir, 'rocket.jpg'), originals['rocket.jpg']);
      await env.call('POST', '/api/submissions/reload');
      await env.jobs.drain('analyse');
      const internal = async (id: string) =>
        ((await (await env.call('GET', `/api/submissions/${id}/review`)).json()) as { evidence: Evidence[] }).evidence.filter((e) => e.group === 'internal');
      for (const [id, other] of [
        ['chelsea', 'chelsea-mirror'],
        ['chelsea-mirror', 'chelsea'],
      ]) {
        const [match, ...more] = await internal(id);
        expect(more).toEqual([]);
        expect(match).toMatchObject({ matched: true, matched_submission_id: other, match_transform: 'hflip', match_inliers: null });
        expect(match.match_region!.submission.coverage).toBeGreaterThan(0.95);
        expect(match.match_region!.candidate.coverage).toBeGreaterThan(0.95);
      }
      expect(await internal('rocket')).toEqual([]);
    } finally {
      await env.close();
    }
  }, 120_000);
});
