import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import { MAX_CELLS } from './collage-cells.js';
import { COARSE_SIDE, FEATURE_MAX_SIDE, type GeometryFeatures, type KeypointSet, MAX_FEATURES, QUERY_FEATURES, SPARSE_KEYPOINTS } from './geometry.js';

/**
 * A picture's keypoints (its GeometryFeatures: mirror, coarse set, thumbnail, collage cells) as the
 * bytes of one file, for the keypoints kept across processes (keypoint-store.ts), and back. Such a
 * file is read only by the code that wrote it: its header names the version of the computation
 * (FEATURES_FORMAT, the parameters, libvips' version and the text of the modules that compute
 * keypoints and cells), and a file of another version, cut short or altered anywhere (a SHA-256 of
 * what follows the header) reads as nothing, so that the picture is computed again.
 */

/** Raised by hand when the layout below changes. */
const FEATURES_FORMAT = 1;
const MAGIC = 'KPTS';
/** Magic, version (32), whether the mirror's and coarse keypoints are in (1), payload length (4), its SHA-256 (32). */
const HEADER = 4 + 32 + 1 + 4 + 32;

/**
 * The modules whose code decides what a picture's keypoints are: an edit to any of them (a
 * parameter, the contrast stretch, the seams of a collage) makes every kept file another version's.
 * Read from beside this one, as the geometric check loads its worker.
 */
const SOURCES = ['./geometry.ts', './geometry-worker.mjs', './collage-cells.ts', './decode.ts', './raster.ts'];

/**
 * The version of the keypoints this code computes; null when its sources cannot be read (no file is
 * then trusted or written). Read once, when the service loads this module with the ones it names,
 * so that an update of the files under a running service does not label its keypoints as the new
 * code's.
 */
export const FEATURES_VERSION = ((): Buffer | null => {
  const digest = createHash('sha256').update(
    JSON.stringify({ FEATURES_FORMAT, FEATURE_MAX_SIDE, MAX_FEATURES, QUERY_FEATURES, SPARSE_KEYPOINTS, COARSE_SIDE, MAX_CELLS, vips: sharp.versions.vips }),
  );
  try {
    for (const source of SOURCES) digest.update(readFileSync(new URL(source, import.meta.url)));
    return digest.digest();
  } catch {
    return null;
  }
})();

/** The file's bytes: header, then the payload (the features, mirror's and coarse ones included when `mirror`). */
export function encodeFeatures(features: GeometryFeatures, mirror: boolean, featuresAt: Buffer): Buffer {
  const parts: Buffer[] = [];
  const u32 = (value: number) => {
    const bytes = Buffer.alloc(4);
    bytes.writeUInt32LE(value);
    parts.push(bytes);
  };
  const raw = (array: Float32Array | Uint8Array | Float64Array) => parts.push(Buffer.from(array.buffer, array.byteOffset, array.byteLength));
  const set = ({ points, descriptors }: KeypointSet) => {
    u32(points.length / 2);
    raw(points);
    raw(descriptors);
  };
  const picture = (f: GeometryFeatures) => {
    u32(f.width);
    u32(f.height);
    set(f);
    set(f.mirror);
    set(f.coarse);
    u32(f.thumbnail.width);
    u32(f.thumbnail.height);
    raw(f.thumbnail.pixels);
    u32(f.tooManyCells ?? 0);
    u32(f.cells.length);
    for (const cell of f.cells) {
      raw(new Float64Array(cell.box));
      picture(cell.features);
    }
  };
  picture(features);
  const payload = Buffer.concat(parts);
  const header = Buffer.alloc(HEADER);
  header.write(MAGIC, 0, 'latin1');
  featuresAt.copy(header, 4);
  header.writeUInt8(mirror ? 1 : 0, 36);
  header.writeUInt32LE(payload.length, 37);
  createHash('sha256').update(payload).digest().copy(header, 41);
  return Buffer.concat([header, payload]);
}

/**
 * The features a file holds, when it is this version's, whole and unaltered, and holds the mirror's
 * keypoints if they are `wanted`; null otherwise.
 */
export function decodeFeatures(file: Buffer, wanted: { mirror: boolean }, featuresAt: Buffer): GeometryFeatures | null {
  if (file.length < HEADER || file.toString('latin1', 0, 4) !== MAGIC || !file.subarray(4, 36).equals(featuresAt)) return null;
  if (wanted.mirror && file.readUInt8(36) !== 1) return null;
  const payload = file.subarray(HEADER);
  if (payload.length !== file.readUInt32LE(37) || !createHash('sha256').update(payload).digest().equals(file.subarray(41, HEADER))) return null;
  try {
    return readPayload(payload);
  } catch {
    // Whole and of this version, yet not readable: written by a bug, not trusted either.
    return null;
  }
}

function readPayload(payload: Buffer): GeometryFeatures {
  let at = 0;
  const take = (length: number) => {
    if (at + length > payload.length) throw new RangeError('the keypoints file ends early');
    // A copy, aligned for the typed arrays and free of the file's buffer.
    const bytes = new Uint8Array(payload.subarray(at, at + length));
    at += length;
    return bytes;
  };
  const u32 = () => new DataView(take(4).buffer).getUint32(0, true);
  const set = (): KeypointSet => {
    const count = u32();
    return { points: new Float32Array(take(8 * count).buffer), descriptors: take(32 * count) };
  };
  const picture = (): GeometryFeatures => {
    const [width, height] = [u32(), u32()];
    const { points, descriptors } = set();
    const [mirror, coarse] = [set(), set()];
    const [thumbWidth, thumbHeight] = [u32(), u32()];
    const thumbnail = { width: thumbWidth, height: thumbHeight, pixels: take(thumbWidth * thumbHeight) };
    const tooManyCells = u32();
    const cells = Array.from({ length: u32() }, () => {
      const box = Array.from(new Float64Array(take(32).buffer)) as [number, number, number, number];
      return { box, features: picture() };
    });
    return { width, height, points, descriptors, mirror, coarse, thumbnail, cells, ...(tooManyCells > 0 ? { tooManyCells } : {}) };
  };
  const features = picture();
  if (at !== payload.length) throw new RangeError('the keypoints file runs on past its features');
  return features;
}
