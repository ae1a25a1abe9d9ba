import { resample, type Raster } from './raster.js';

/**
 * 64-bit DCT perceptual hash (SPEC): grayscale, 32x32, 2-D DCT-II, the top-left 8x8 block of
 * coefficients (DC included), bit = coefficient > median of those 64. Bits are taken row by row
 * (vertical frequency v, then horizontal u), the first bit being the most significant bit of the
 * first of 16 lowercase hex digits.
 */

export const SAMPLE_SIZE = 32;
const BLOCK_SIZE = 8;
const HASH_PATTERN = /^[0-9a-f]{16}$/;

export function isPhash(value: string): boolean {
  return HASH_PATTERN.test(value);
}

/** grayscale32 from a libvips luma sample. */
export function sampleGrayscale32(sample: Raster): Float64Array {
  return resample(sample, sample.window, SAMPLE_SIZE);
}

/** Orthonormal DCT-II basis, COSINES[k * 32 + n] = a(k) cos(pi (2n + 1) k / 64). */
const COSINES = (() => {
  const table = new Float64Array(SAMPLE_SIZE * SAMPLE_SIZE);
  for (let k = 0; k < SAMPLE_SIZE; k++) {
    const scale = Math.sqrt((k === 0 ? 1 : 2) / SAMPLE_SIZE);
    for (let n = 0; n < SAMPLE_SIZE; n++) {
      table[k * SAMPLE_SIZE + n] = scale * Math.cos((Math.PI * (2 * n + 1) * k) / (2 * SAMPLE_SIZE));
    }
  }
  return table;
})();

/** Frequencies per axis that any hash reads: the pHash its 8x8 block, the region hashes 16x16. */
const LOW_FREQUENCIES = 16;

/**
 * The low frequencies (v, u < 16) of the 2-D DCT-II (orthonormal) of a 32x32 row-major raster,
 * computed separably (rows, then columns); a quarter of the full transform's work, and the same
 * sums in the same order for the coefficients it gives. Output layout: [v * 32 + u], v the
 * vertical and u the horizontal frequency, [0] the DC; the higher frequencies are left at 0.
 */
export function lowDct32(pixels: Float64Array): Float64Array {
  const N = SAMPLE_SIZE;
  const L = LOW_FREQUENCIES;
  if (pixels.length !== N * N) throw new Error(`lowDct32 needs ${N * N} values, got ${pixels.length}`);
  const rows = new Float64Array(N * L);
  for (let y = 0; y < N; y++) {
    const rowStart = y * N;
    for (let u = 0; u < L; u++) {
      const basis = u * N;
      let sum = 0;
      for (let x = 0; x < N; x++) sum += COSINES[basis + x] * pixels[rowStart + x];
      rows[y * L + u] = sum;
    }
  }
  const out = new Float64Array(N * N);
  for (let v = 0; v < L; v++) {
    const basis = v * N;
    for (let u = 0; u < L; u++) {
      let sum = 0;
      for (let y = 0; y < N; y++) sum += COSINES[basis + y] * rows[y * L + u];
      out[v * N + u] = sum;
    }
  }
  return out;
}

export function hashFromDct(dct: Float64Array): string {
  const block = new Float64Array(BLOCK_SIZE * BLOCK_SIZE);
  for (let v = 0; v < BLOCK_SIZE; v++) {
    for (let u = 0; u < BLOCK_SIZE; u++) block[v * BLOCK_SIZE + u] = dct[v * SAMPLE_SIZE + u];
  }
  const sorted = Float64Array.from(block).sort();
  const median = (sorted[31] + sorted[32]) / 2;
  let high = 0;
  let low = 0;
  for (let i = 0; i < 32; i++) {
    high = (high << 1) | (block[i] > median ? 1 : 0);
    low = (low << 1) | (block[i + 32] > median ? 1 : 0);
  }
  return wordsToHash(high >>> 0, low >>> 0);
}

/** The two 32-bit halves of a hash, most significant first. */
export function hashToWords(hash: string): [number, number] {
  if (!HASH_PATTERN.test(hash)) throw new TypeError(`not a 64-bit pHash (16 lowercase hex digits): "${hash}"`);
  return [parseInt(hash.slice(0, 8), 16), parseInt(hash.slice(8), 16)];
}

export function wordsToHash(high: number, low: number): string {
  return (high >>> 0).toString(16).padStart(8, '0') + (low >>> 0).toString(16).padStart(8, '0');
}

export function popcount32(word: number): number {
  let x = word - ((word >>> 1) & 0x55555555);
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

export function hammingDistance(a: string, b: string): number {
  const [aHigh, aLow] = hashToWords(a);
  const [bHigh, bLow] = hashToWords(b);
  return popcount32(aHigh ^ bHigh) + popcount32(aLow ^ bLow);
}

/** 1 - hamming / 64: 1 for identical hashes, 0.9 at a distance of 6.4 bits. */
export function similarity(a: string, b: string): number {
  return 1 - hammingDistance(a, b) / 64;
}
