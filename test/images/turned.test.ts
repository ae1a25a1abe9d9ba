import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { computeFingerprints } from '../../lib/images/fingerprint.js';
import { decodeForAnalysis } from '../../lib/images/analysis-raster.js';
import { lumaSample } from '../../lib/images/luma.js';
import { matchFingerprints } from '../../lib/images/robust.js';
import { findTurn } from '../../lib/images/turned.js';
import { fixturePath } from '../helpers/fixtures.js';
import { CORNERS, turnedOn } from '../helpers/small-turns.js';

const PHOTOS = ['astronaut.png', 'chelsea.png', 'coffee.png', 'rocket.jpg'];

async function turnOf(bytes: Buffer) {
  const raster = await decodeForAnalysis(bytes);
  return findTurn(await lumaSample(raster), raster.width / raster.height);
}

describe('findTurn', () => {
  it('finds no turn in the fixture photographs as they stand', async () => {
    for (const photo of PHOTOS) expect(await turnOf(await sharp(fixturePath(photo)).png().toBuffer()), photo).toBeNull();
  });

  // A blurred canvas steps less clearly across the picture's edge than a plain one.
  it.each([
    ['black', 0.34],
    ['white', 0.34],
    ['blurred', 0.6],
  ] as const)('finds the angle of a picture turned 3-9° either way on %s corners, within %s°', async (corners, within) => {
    for (const [i, photo] of PHOTOS.entries()) {
      const degrees = [3, -5, 7, -9][i];
      const turn = await turnOf(await turnedOn(await sharp(fixturePath(photo)).png().toBuffer(), degrees, corners));
      expect(turn, `${photo} ${degrees}°`).not.toBeNull();
      expect(Math.abs(turn!.degrees - degrees), `${photo} ${degrees}°: ${turn!.degrees}`).toBeLessThan(within);
    }
  });
});

describe('a small turn straightened', () => {
  it('matches the original as a tilt, which the region hashes of the canvas do not', async () => {
    const photo = await sharp(fixturePath('camera.png')).png().toBuffer();
    const original = await computeFingerprints(photo);
    for (const corners of CORNERS) {
      const turned = await computeFingerprints(await turnedOn(photo, 6, corners));
      expect(turned.variants.upright, corners).toBeDefined();
      expect(matchFingerprints(turned, original, 0.9)?.transform, corners).toBe('tilt');
      expect(matchFingerprints(original, turned, 0.9)?.transform, corners).toBe('tilt');
      const { upright: _, ...canvasOnly } = turned.variants;
      expect(matchFingerprints({ ...turned, variants: canvasOnly }, original, 0.9), corners).toBeNull();
    }
  });
});
