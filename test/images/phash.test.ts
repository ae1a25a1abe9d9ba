import { grayscale32, phash } from '../../lib/images/fingerprint.js';
import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { ImageRejected } from '../../lib/images/rejected.js';
import { lowDct32, hammingDistance, hashFromDct, similarity } from '../../lib/images/phash.js';
import { resample } from '../../lib/images/raster.js';
import { seededRandom } from '../helpers/random.js';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/images/${name}`, import.meta.url));
const PHOTOS = ['astronaut.png', 'camera.png', 'chelsea.png', 'coffee.png', 'rocket.jpg'];

// Pinned so that any change to decoding, resizing, the DCT or the bit order is noticed: stored
// fingerprints (submissions, knowledge entries) would silently stop matching after such a change.
const GOLDEN: Record<string, string> = {
  'astronaut.png': 'c2924c5532bddfc8',
  'camera.png': 'bff1c1c0434e8cbc',
  'chelsea.png': 'b15fe6465121175e',
  'coffee.png': 'bb8320376c0f3637',
  'rocket.jpg': 'c0371bec1be51267',
};

function directDct(pixels: Float64Array): Float64Array {
  const out = new Float64Array(1024);
  for (let v = 0; v < 32; v++) {
    for (let u = 0; u < 32; u++) {
      let sum = 0;
      for (let y = 0; y < 32; y++) {
        for (let x = 0; x < 32; x++) {
          sum += pixels[y * 32 + x] * Math.cos((Math.PI * (2 * x + 1) * u) / 64) * Math.cos((Math.PI * (2 * y + 1) * v) / 64);
        }
      }
      out[v * 32 + u] = sum * Math.sqrt((u === 0 ? 1 : 2) / 32) * Math.sqrt((v === 0 ? 1 : 2) / 32);
    }
  }
  return out;
}

describe('phash of the fixture photos', () => {
  it('gives the pinned 16-hex-digit fingerprint of each photo', async () => {
    for (const name of PHOTOS) {
      const hash = await phash(fixture(name));
      expect(hash, name).toMatch(/^[0-9a-f]{16}$/);
      expect(hash, name).toBe(GOLDEN[name]);
    }
  });

  it('keeps a re-encoded, a half-size and a 10 % brighter copy at or above 0.9', async () => {
    for (const name of PHOTOS) {
      const original = fixture(name);
      const { width } = await sharp(original).metadata();
      const copies = {
        jpegQuality70: await sharp(original).jpeg({ quality: 70 }).toBuffer(),
        halfSize: await sharp(original)
          .resize(Math.round(width / 2))
          .toBuffer(),
        brighter: await sharp(original).linear(1.1, 0).toBuffer(),
      };
      for (const [change, bytes] of Object.entries(copies)) {
        expect(similarity(GOLDEN[name], await phash(bytes)), `${name} ${change}`).toBeGreaterThanOrEqual(0.9);
      }
    }
  });

  it('keeps every pair of different photos below 0.9', () => {
    for (let i = 0; i < PHOTOS.length; i++) {
      for (let j = i + 1; j < PHOTOS.length; j++) {
        expect(similarity(GOLDEN[PHOTOS[i]], GOLDEN[PHOTOS[j]]), `${PHOTOS[i]} vs ${PHOTOS[j]}`).toBeLessThan(0.9);
      }
    }
  });

  it('hashes a photo stored sideways with an EXIF orientation like the upright photo', async () => {
    const stored = sharp(fixture('rocket.jpg')).rotate(270);
    const tagged = await stored.clone().withMetadata({ orientation: 6 }).jpeg({ quality: 95 }).toBuffer();
    const untagged = await stored.clone().jpeg({ quality: 95 }).toBuffer();
    expect(similarity(GOLDEN['rocket.jpg'], await phash(tagged))).toBeGreaterThanOrEqual(0.9);
    // The same pixels without the tag are a different picture to the pHash: the tag was applied.
    expect(similarity(GOLDEN['rocket.jpg'], await phash(untagged))).toBeLessThan(0.9);
  });

  it('sees transparent areas on white, as a viewer does', async () => {
    const shape = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="200" height="200"><circle cx="70" cy="90" r="50" fill="#203040"/></svg>');
    const transparent = await sharp(shape).png().toBuffer();
    const onWhite = await sharp(shape).flatten({ background: '#ffffff' }).png().toBuffer();
    expect((await sharp(transparent).metadata()).hasAlpha).toBe(true);
    expect(await phash(transparent)).toBe(await phash(onWhite));
  });

  it('rejects bytes that are not a decodable image', async () => {
    await expect(phash(Buffer.from('not an image at all'))).rejects.toThrow(ImageRejected);
    await expect(phash(fixture('rocket.jpg').subarray(0, 20_000))).rejects.toThrow(ImageRejected);
  });
});

describe('grayscale32 and lowDct32', () => {
  it('reduces a photo to 1024 luminance values in 0-255', async () => {
    const pixels = await grayscale32(fixture('coffee.png'));
    expect(pixels).toHaveLength(1024);
    expect(Math.min(...pixels)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...pixels)).toBeLessThanOrEqual(255);
    expect(new Set(pixels).size).toBeGreaterThan(50);
  });

  it('matches the textbook orthonormal DCT-II in the low 16x16 frequencies, laid out [v * 32 + u], and leaves the rest 0', async () => {
    const pixels = await grayscale32(fixture('chelsea.png'));
    const expected = directDct(pixels);
    const actual = lowDct32(pixels);
    for (let v = 0; v < 32; v++) {
      for (let u = 0; u < 32; u++) expect(actual[v * 32 + u]).toBeCloseTo(v < 16 && u < 16 ? expected[v * 32 + u] : 0, 8);
    }
  });

  it('puts a horizontal stripe pattern in the horizontal frequencies only', () => {
    const stripes = new Float64Array(1024);
    for (let y = 0; y < 32; y++) for (let x = 0; x < 32; x++) stripes[y * 32 + x] = Math.cos((Math.PI * (2 * x + 1) * 3) / 64);
    const dct = lowDct32(stripes);
    expect(dct[3]).toBeCloseTo(16 * Math.SQRT2, 8);
    expect(dct[3 * 32]).toBeCloseTo(0, 8);
  });
});

describe('hashFromDct', () => {
  it('sets a bit for each of the 64 low coefficients above their median, row by row, DC first', () => {
    const dct = new Float64Array(1024).fill(1000);
    for (let v = 0; v < 8; v++) for (let u = 0; u < 8; u++) dct[v * 32 + u] = v * 8 + u;
    expect(hashFromDct(dct)).toBe('00000000ffffffff');
    // A large DC moves into the upper half, so the median moves up by one and coefficient 32 drops out.
    dct[0] = 500;
    expect(hashFromDct(dct)).toBe('800000007fffffff');
  });
});

describe('hammingDistance and similarity', () => {
  it('counts differing bits and scales them to 0-1', () => {
    expect(hammingDistance('0000000000000000', 'ffffffffffffffff')).toBe(64);
    expect(hammingDistance('c0371bec1be61267', 'c0371bec1be61267')).toBe(0);
    expect(hammingDistance('8000000000000001', '0000000000000000')).toBe(2);
    expect(similarity('0000000000000000', '000000000000003f')).toBe(1 - 6 / 64);
    expect(similarity('0000000000000000', '000000000000007f')).toBeLessThan(0.9);
    expect(similarity('0000000000000000', 'ffffffffffffffff')).toBe(0);
  });

  it('refuses strings that are not 64-bit hashes', () => {
    expect(() => hammingDistance('abc', '0000000000000000')).toThrow(TypeError);
    expect(() => similarity('0000000000000000', '000000000000000G')).toThrow(TypeError);
  });
});

describe('resample (area averaging, read from a summed-area table)', () => {
  /** The definition: each source cell counts for the area it shares with the output cell; outside the raster counts 0. */
  const byDefinition = (
    width: number,
    height: number,
    data: Uint8Array,
    window: { left: number; top: number; right: number; bottom: number },
    side: number,
  ) => {
    const out = new Float64Array(side * side);
    const [stepX, stepY] = [(window.right - window.left) / side, (window.bottom - window.top) / side];
    const overlap = (a0: number, a1: number, b0: number, b1: number) => Math.max(0, Math.min(a1, b1) - Math.max(a0, b0));
    for (let j = 0; j < side; j++)
      for (let i = 0; i < side; i++) {
        const [x0, y0] = [window.left + i * stepX, window.top + j * stepY];
        let sum = 0;
        for (let y = 0; y < height; y++)
          for (let x = 0; x < width; x++) sum += data[y * width + x] * overlap(x0, x0 + stepX, x, x + 1) * overlap(y0, y0 + stepY, y, y + 1);
        out[j * side + i] = sum / (stepX * stepY);
      }
    return out;
  };

  it('gives every output cell the mean of its share of the window, fractional edges and parts outside the raster included', () => {
    const random = seededRandom(61);
    for (let trial = 0; trial < 40; trial++) {
      const [width, height] = [5 + Math.floor(random() * 40), 5 + Math.floor(random() * 40)];
      const data = Uint8Array.from({ length: width * height }, () => Math.floor(random() * 256));
      const left = random() * width * 0.4 - (trial % 5 === 0 ? 2 : 0);
      const top = random() * height * 0.4;
      const window = { left, top, right: left + (width - left) * (0.3 + random() * 0.8), bottom: top + (height - top) * (0.3 + random() * 0.7) };
      const side = 1 + Math.floor(random() * 12);
      const got = resample({ width, height, data, window: { left: 0, top: 0, right: width, bottom: height } }, window, side);
      const expected = byDefinition(width, height, data, window, side);
      for (let k = 0; k < got.length; k++) expect(got[k]).toBeCloseTo(expected[k], 6);
    }
  });
});
