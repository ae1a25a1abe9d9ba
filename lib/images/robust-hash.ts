import { SAMPLE_SIDE, resample, type Raster } from './raster.js';
import { SAMPLE_SIZE, lowDct32, popcount32, wordsToHash } from './phash.js';

/**
 * Region hashes: hashes of parts of an image (the whole image, the image with uniform borders
 * trimmed, fixed crop windows) that can be mirrored and turned without decoding again.
 *
 * A region is resampled to 32x32, transformed by the DCT, and hashed as the SIGNS of its 255
 * lowest AC coefficients (v, u < 16). Mirroring an image only negates the coefficients of odd
 * horizontal (or vertical) frequency and a transpose swaps the two frequency axes, so the hash of
 * each of the eight mirror/quarter-turn variants follows from the stored bits by a fixed
 * permutation and XOR. (The SPEC pHash thresholds at the median instead of zero, so its variants
 * cannot be derived from its bits; it stays the primary fingerprint.)
 *
 * 64 of the bits, the 8x8 block with the always-positive DC replaced by (8, 8), form the key that
 * the similarity index searches; all 255 bits verify a candidate.
 */

/** Left, top, right, bottom as fractions of the image width/height. */
export interface Region {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

export const WHOLE: Region = { left: 0, top: 0, right: 1, bottom: 1 };

/** A region hash: 256 bits (the last always 0) as 8 words, most significant first. */
export type RegionHash = Uint32Array;

export const REGION_HASH_BITS = 255;
export const REGION_WORDS = 8;
const HASH_BLOCK = 16;

/** (v, u) of each hashed coefficient, in bit order: v, u < 16 without DC, row by row. */
const COEFFICIENTS: ReadonlyArray<readonly [number, number]> = (() => {
  const list: [number, number][] = [];
  for (let v = 0; v < HASH_BLOCK; v++) for (let u = 0; u < HASH_BLOCK; u++) if (v + u > 0) list.push([v, u]);
  return list;
})();
const bitOf = (v: number, u: number) => v * HASH_BLOCK + u - 1;

/** Bit positions of the 64-bit index key, in key bit order. */
const KEY_BITS: readonly number[] = (() => {
  const bits: number[] = [bitOf(8, 8)];
  for (let v = 0; v < 8; v++) for (let u = 0; u < 8; u++) if (v + u > 0) bits.push(bitOf(v, u));
  return bits;
})();

/** The region of the luma sample (lumaSample in luma.ts) resampled to 32x32 by area averaging. */
export function resampleRegion(sample: Raster, region: Region): Float64Array {
  const { width, height } = sample;
  const window = { left: region.left * width, top: region.top * height, right: region.right * width, bottom: region.bottom * height };
  return resample(sample, window, SAMPLE_SIZE);
}

/**
 * Below this RMS of the hashed AC coefficients (about one grey level of texture) the signs are
 * noise: two plain or nearly plain regions would "match" whatever their content, so such a region
 * gets no hash.
 */
const MIN_AC_RMS = 1;

/** The region's hash, or null when the region is too plain to hash reliably. */
export function regionHash(sample: Raster, region: Region): RegionHash | null {
  const dct = lowDct32(resampleRegion(sample, region));
  const hash = new Uint32Array(REGION_WORDS);
  let energy = 0;
  COEFFICIENTS.forEach(([v, u], bit) => {
    const c = dct[v * SAMPLE_SIZE + u];
    energy += c * c;
    if (c > 0) hash[bit >>> 5] |= 1 << (31 - (bit & 31));
  });
  return Math.sqrt(energy / COEFFICIENTS.length) < MIN_AC_RMS ? null : hash;
}

const bitAt = (hash: RegionHash, bit: number) => (hash[bit >>> 5] >>> (31 - (bit & 31))) & 1;

/** The 64-bit similarity-index key of a region hash, as 16 hex digits. */
export function regionKey(hash: RegionHash): string {
  let high = 0;
  let low = 0;
  for (let i = 0; i < 32; i++) {
    high = (high << 1) | bitAt(hash, KEY_BITS[i]);
    low = (low << 1) | bitAt(hash, KEY_BITS[i + 32]);
  }
  return wordsToHash(high >>> 0, low >>> 0);
}

/** The index key's bits as words to AND: the key distance is the hash distance over them alone. */
const KEY_MASK = (() => {
  const mask = new Uint32Array(REGION_WORDS);
  for (const bit of KEY_BITS) mask[bit >>> 5] |= 1 << (31 - (bit & 31));
  return mask;
})();

export function regionKeyDistance(a: RegionHash, b: RegionHash): number {
  let distance = 0;
  for (let i = 0; i < REGION_WORDS; i++) distance += popcount32((a[i] ^ b[i]) & KEY_MASK[i]);
  return distance;
}

export function regionHashDistance(a: RegionHash, b: RegionHash): number {
  let distance = 0;
  for (let i = 0; i < REGION_WORDS; i++) distance += popcount32(a[i] ^ b[i]);
  return distance;
}

export function regionHashToHex(hash: RegionHash): string {
  return Array.from(hash, (word) => word.toString(16).padStart(8, '0')).join('');
}

const REGION_HEX = /^[0-9a-f]{64}$/;

export function regionHashFromHex(hex: string): RegionHash {
  if (!REGION_HEX.test(hex)) throw new TypeError(`not a region hash (64 lowercase hex digits): "${hex}"`);
  return Uint32Array.from({ length: REGION_WORDS }, (_, i) => parseInt(hex.slice(i * 8, i * 8 + 8), 16));
}

/**
 * The eight mirror/quarter-turn orientations. Each is: transpose (or not), then mirror
 * left-right, then mirror top-bottom; `rot90` is a quarter turn clockwise.
 */
export const ORIENTATIONS = ['identity', 'hflip', 'vflip', 'rot180', 'transpose', 'rot90', 'rot270', 'transverse'] as const;
export type Orientation = (typeof ORIENTATIONS)[number];

const ORIENTATION_STEPS: Record<Orientation, { transpose: boolean; hflip: boolean; vflip: boolean }> = {
  identity: { transpose: false, hflip: false, vflip: false },
  hflip: { transpose: false, hflip: true, vflip: false },
  vflip: { transpose: false, hflip: false, vflip: true },
  rot180: { transpose: false, hflip: true, vflip: true },
  transpose: { transpose: true, hflip: false, vflip: false },
  rot90: { transpose: true, hflip: true, vflip: false },
  rot270: { transpose: true, hflip: false, vflip: true },
  transverse: { transpose: true, hflip: true, vflip: true },
};

export const INVERSE_ORIENTATION: Record<Orientation, Orientation> = {
  identity: 'identity',
  hflip: 'hflip',
  vflip: 'vflip',
  rot180: 'rot180',
  transpose: 'transpose',
  rot90: 'rot270',
  rot270: 'rot90',
  transverse: 'transverse',
};

/**
 * For each output bit of a transposed region, its source bit: an orientation transposes the
 * coefficients or not, then flips the signs of some (SIGN_FLIPS), so the four orientations that
 * transpose share one permutation.
 */
const TRANSPOSED_SOURCE = Uint16Array.from(COEFFICIENTS, ([v, u]) => bitOf(u, v));

/** For each orientation, the bits whose coefficient's sign flips, as words to XOR. */
const SIGN_FLIPS = Object.fromEntries(
  ORIENTATIONS.map((orientation) => {
    const { hflip, vflip } = ORIENTATION_STEPS[orientation];
    const flips = new Uint32Array(REGION_WORDS);
    COEFFICIENTS.forEach(([v, u], bit) => {
      if ((hflip && u % 2 === 1) !== (vflip && v % 2 === 1)) flips[bit >>> 5] |= 1 << (31 - (bit & 31));
    });
    return [orientation, flips];
  }),
) as Record<Orientation, Uint32Array>;

/** Where a region of the image lies after the image is given this orientation. */
export function orientRegion(region: Region, orientation: Orientation): Region {
  const { transpose, hflip, vflip } = ORIENTATION_STEPS[orientation];
  let { left, top, right, bottom } = region;
  if (transpose) [left, top, right, bottom] = [top, left, bottom, right];
  if (hflip) [left, right] = [1 - right, 1 - left];
  if (vflip) [top, bottom] = [1 - bottom, 1 - top];
  return { left, top, right, bottom };
}

/**
 * The hashes the same region would have after the image is given each orientation, its
 * coefficients transposed once for the four that need it.
 */
export function everyOrientation(hash: RegionHash): Record<Orientation, RegionHash> {
  const turned = transposed(hash);
  const every = {} as Record<Orientation, RegionHash>;
  for (const orientation of ORIENTATIONS) every[orientation] = signsFlipped(ORIENTATION_STEPS[orientation].transpose ? turned : hash, orientation);
  return every;
}

function transposed(hash: RegionHash): RegionHash {
  const out = new Uint32Array(REGION_WORDS);
  for (let bit = 0; bit < REGION_HASH_BITS; bit++) {
    if (bitAt(hash, TRANSPOSED_SOURCE[bit])) out[bit >>> 5] |= 1 << (31 - (bit & 31));
  }
  return out;
}

function signsFlipped(hash: RegionHash, orientation: Orientation): RegionHash {
  if (orientation === 'identity') return hash;
  const [flips, out] = [SIGN_FLIPS[orientation], new Uint32Array(REGION_WORDS)];
  for (let i = 0; i < REGION_WORDS; i++) out[i] = hash[i] ^ flips[i];
  return out;
}

/** Sample `i` of the `line`-th line in from `side` (0 left, 1 top, 2 right, 3 bottom) of the 256x256 luma sample. */
type LineReader = (side: number, line: number, i: number) => number;

function lineReader(raster: Raster): LineReader {
  const S = SAMPLE_SIDE;
  const sample = raster.data;
  return (side, line, i) => {
    switch (side) {
      case 0:
        return sample[i * S + line];
      case 1:
        return sample[line * S + i];
      case 2:
        return sample[i * S + (S - 1 - line)];
      default:
        return sample[(S - 1 - line) * S + i];
    }
  };
}

/** A side's border colour: the median of its outermost line. */
function borderColour(at: LineReader, side: number): number {
  const outer = Float64Array.from({ length: SAMPLE_SIDE }, (_, i) => at(side, 0, i)).sort();
  return (outer[SAMPLE_SIDE / 2 - 1] + outer[SAMPLE_SIDE / 2]) / 2;
}

/** Grey levels a border sample may differ from the border's colour (JPEG noise, dithering). */
const BORDER_TOLERANCE = 12;
/** Share of a line allowed outside the tolerance before it counts as content. */
const BORDER_OUTLIERS = 0.02;
/** A trim that would leave less than this share of either side is a plain image, not a border. */
const MIN_CONTENT = 0.3;

/**
 * Grey levels an edge sample must differ from the border's colour to count as content: the plain
 * ground of a drawing is within 3 of it once averaged down to the sample, and the edge of a dark
 * photograph on a black pad differs by more on most of its length.
 */
const EDGE_TOLERANCE = 3;

/**
 * Per side (left, top, right, bottom): the share of the content's outermost line, one sample in
 * from its edge, that differs from that side's border colour. A frame or pad put around a picture
 * meets the picture along its whole edge (near 1); a drawing or silhouette on its own plain ground
 * touches the box around it at a few points (near 0).
 */
export function edgeFill(raster: Raster, content: Region): number[] {
  const S = SAMPLE_SIDE;
  const at = lineReader(raster);
  const inset = [content.left, content.top, 1 - content.right, 1 - content.bottom];
  return [0, 1, 2, 3].map((side) => {
    const colour = borderColour(at, side);
    const line = Math.min(S - 1, Math.ceil(inset[side] * S) + 1);
    // The content's span along this side: its top to bottom for the left and right sides.
    const [from, to] = side % 2 === 0 ? [inset[1], 1 - inset[3]] : [inset[0], 1 - inset[2]];
    const [first, last] = [Math.ceil(from * S) + 1, Math.floor(to * S) - 2];
    let differing = 0;
    for (let i = first; i <= last; i++) if (Math.abs(at(side, line, i) - colour) > EDGE_TOLERANCE) differing++;
    return last < first ? 0 : differing / (last - first + 1);
  });
}

/**
 * The content inside uniform borders, padding or letterboxing (each side on its own, each with
 * its own colour), or null when no side has a border. A side's colour is the median of its
 * outermost line; lines are peeled while nearly all their samples are within tolerance of it.
 */
export function contentRegion(raster: Raster): Region | null {
  const S = SAMPLE_SIDE;
  const at = lineReader(raster);
  const peeled = [0, 1, 2, 3].map((side) => {
    const colour = borderColour(at, side);
    let lines = 0;
    while (lines < S / 2) {
      let outliers = 0;
      for (let i = 0; i < S; i++) if (Math.abs(at(side, lines, i) - colour) > BORDER_TOLERANCE) outliers++;
      if (outliers > BORDER_OUTLIERS * S) break;
      lines++;
    }
    if (lines === 0 || lines >= S / 2 - 1) return lines;
    // The first content line straddles the border's edge (the sample is a linear downscale, so it
    // mixes border and content by their areas); how much border it holds places the edge between
    // samples. Without this, a trimmed copy keeps up to a sample of border, which costs key bits.
    const shares: number[] = [];
    for (let i = 0; i < S; i++) {
      const inside = at(side, lines + 1, i);
      if (Math.abs(colour - inside) < 4 * BORDER_TOLERANCE) continue;
      shares.push(Math.min(1, Math.max(0, (at(side, lines, i) - inside) / (colour - inside))));
    }
    if (shares.length < S / 10) return lines;
    shares.sort((a, b) => a - b);
    return lines + shares[shares.length >> 1];
  });
  const [left, top, right, bottom] = peeled;
  if (left + top + right + bottom < 1) return null;
  const region = { left: left / S, top: top / S, right: 1 - right / S, bottom: 1 - bottom / S };
  if (region.right - region.left < MIN_CONTENT || region.bottom - region.top < MIN_CONTENT) return null;
  return region;
}
