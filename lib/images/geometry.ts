import sharp from 'sharp';
import { workerPool } from '../threads/worker-pool.js';
import { decodeGrey } from './decode.js';
import { type CellBox, collageCells, MAX_CELLS } from './collage-cells.js';
import { bilinear } from './raster.js';

/**
 * Geometric verification (issue 14): local features (ORB keypoints and descriptors) of each image,
 * computed once and kept, and a check of one pair that matches the descriptors, fits a transform
 * (affine, else a homography) with RANSAC and confirms the match only when the fit is a plausible
 * view of the same picture and the pixels on both sides of it agree. It answers which region of
 * each image corresponds (the other image's outline brought over by the fit: a quadrilateral,
 * clipped to the image) and how many keypoint pairs agree with the fit. OpenCV's wasm build runs in
 * worker threads (geometry-worker.mjs, on lib/threads/worker-pool.ts); this module decodes with
 * sharp and decides.
 */

/** Longer side the image is decoded to before detection: a collage's part keeps enough detail. */
export const FEATURE_MAX_SIDE = 640;
/** Keypoints a check matches on each side: the strongest of each pyramid level in proportion, spread over the image. */
export const MAX_FEATURES = 1000;
/**
 * Keypoints an image keeps (the MAX_FEATURES above first). A near miss is tried again with all of
 * them on the query's side, then on both: a photograph filling a quarter of a collage or a
 * screenshot keeps only a quarter of the query's keypoints, and a crop of a small part of the
 * reference holds only that part's share of the reference's strongest. Searching with all of
 * them on every pair tripled its time.
 */
export const QUERY_FEATURES = 2000;
/**
 * Fewer keypoints than this (of QUERY_FEATURES asked) and the image is dark or smooth: its
 * keypoints are detected again after a local contrast stretch (see the worker). A dark cell of a
 * 4x4 grid with fewer than its sixteenth of them is stretched the same way (a dark photograph
 * inside a collage).
 */
export const SPARSE_KEYPOINTS = 300;
/**
 * Longer side of a reference's second, coarser detection: a photograph in a ninth of a collage is
 * about a third of the collage's FEATURE_MAX_SIDE there, and its keypoints find few counterparts
 * among a full-size reference's (whose coarse pyramid levels hold few keypoints).
 */
export const COARSE_SIDE = 320;
/** Lowe's ratio: a descriptor match counts only when clearly closer than the runner-up. */
const RATIO = 0.8;
/** RANSAC reprojection tolerance in pixels of the decoded (<= 640 px) image. */
const REPROJECTION = 4;

/**
 * The decision thresholds, chosen on the tuning half of the robust-recall set (bench/geometry.ts:
 * even-numbered photographs and their edited copies) and reported on the held-out half; see the
 * README for the margins.
 */
export const GEOMETRY_THRESHOLDS = {
  /** RANSAC inliers a confirmed match needs. */
  minInliers: 20,
  /**
   * Inliers over the keypoints inside the matched region, on the side where that share is lower;
   * where the region is at most smallPart of one image (a photograph in a collage's cell), on that
   * image's side: the original's finer keypoints have no counterpart in the smaller copy.
   * A shared frame or app chrome matches at its own keypoints only, a small share of the region.
   */
  minInlierShare: 0.02,
  smallPart: 1 / 3,
  /** Share of at least one image the matched region must cover: a shared logo covers little. */
  minCoverage: 0.2,
  /**
   * A fit refused with at least this many inliers (and fewer than minInliers) is a near miss, tried
   * again with all the query's keypoints, then with all of both sides' (the reference's mirror
   * keeps only its strongest). Only pairs with minInliers descriptor pairs are fitted
   * (fitting fewer doubled the time of a pair of different photographs), so most never get here.
   */
  nearMissInliers: 8,
  /**
   * The matched region of `a` is cut into 3x3 cells; in every cell with texture the pixels of `a`
   * and of `b` brought onto it by the fitted transform must correlate at least this much
   * (normalised cross-correlation of small grey copies). Shared page chrome, a frame or a logo fit
   * a transform at their own keypoints, but the photographs beside them do not agree.
   */
  minCellCorrelation: 0.75,
  /**
   * The brightness of the whole region, flat or not: cut into 6x6 patches, the patches' mean grey
   * levels in `b` follow those in `a` by one straight line (a copy's exposure or gamma), and at
   * most this share of the patches may be farther from it than patchBrightnessTolerance. A copy's
   * watermark or logo moves a patch or two; a different picture inside the same page chrome moves
   * many, even when both are near-plain and their flat cells escape the correlation.
   */
  maxShareOffBrightness: 0.1,
  /** Grey levels a patch may stray from the brightness line. */
  patchBrightnessTolerance: 20,
};

export interface KeypointSet {
  /** x, y pairs in pixels of the decoded image. */
  points: Float32Array;
  /** 32 bytes per keypoint. */
  descriptors: Uint8Array;
}

export interface GeometryFeatures extends KeypointSet {
  /** Size of the decoded image the points refer to. */
  width: number;
  height: number;
  /**
   * Keypoints of the image mirrored left to right, points mapped back: finds flipped copies. Only
   * the reference side of a check uses them; an image computed as a query only has none.
   */
  mirror: KeypointSet;
  /**
   * Keypoints of the image at COARSE_SIDE px, points in pixels of the decoded image: the last
   * try for a small part of a collage. Only the reference side of a check uses them; empty for a
   * query, or an image not much larger than COARSE_SIDE.
   */
  coarse: KeypointSet;
  /** A grey copy of at most THUMBNAIL_SIDE px on its longer side, for the pixel agreement check. */
  thumbnail: { width: number; height: number; pixels: Uint8Array };
  /** A collage's cells, each checked as its own query when the whole picture is refused; none for a picture without seams. */
  cells: CollageCell[];
  /** The number of cells (at least) of a picture of more than MAX_CELLS: none of them is checked. */
  tooManyCells?: number;
}

export interface CollageCell {
  /** Left, top, width and height as fractions of the collage's width and height. */
  box: [number, number, number, number];
  /** The cell's own keypoints and thumbnail (its mirror image's too when the collage is a reference's; no coarse ones, no cells). */
  features: GeometryFeatures;
}

const THUMBNAIL_SIDE = 160;
/** Longer side of the copy a collage's cells are cut from (none larger than the image itself). */
const CELL_SOURCE_SIDE = 4 * FEATURE_MAX_SIDE;

/**
 * A matched region: the other image's corners (top-left, top-right, bottom-right, bottom-left)
 * brought over by the fit and clipped to this image, as fractions of its width and height; the
 * clipping may add corners where the outline leaves the image.
 */
export type Quad = [number, number][];

export type ConfirmedGeometry = {
  confirmed: true;
  inliers: number;
  inlierShare: number;
  mirrored: boolean;
  regionA: Quad;
  regionB: Quad;
  coverageA: number;
  coverageB: number;
  correlation: number;
};
type Refusal = { confirmed: false; inliers: number; reason: string };

export type GeometryResult =
  | ConfirmedGeometry
  | (Refusal & {
      /**
       * Both images have texture (SPARSE_KEYPOINTS keypoints or more each) and no fit kept even
       * nearMissInliers pairs: no part of one is seen in the other. A match only the region hashes
       * made is refused on it (what they agreed on was the layout, e.g. the black canvas of two
       * pictures turned by about the same angle); a refusal by the pixel rules, with many
       * inliers, is not disjoint (a copy under a caption bar and a logo).
       */
      disjoint: boolean;
    });

/**
 * How long one request may keep its worker once the worker takes it up (the first one includes
 * OpenCV's start, which the worker gives up on after 30 s with a `fatal` message): keypoints of a
 * 640 px picture take about 100 ms and a fit less, so a request still running after a minute is
 * stuck, and its worker is replaced rather than holding a core for good.
 */
const GEOMETRY_DEADLINE_MS = 60_000;

const pool = workerPool<Record<string, unknown>, Record<string, unknown>>(new URL('./geometry-worker.mjs', import.meta.url));

/** One request to the least busy OpenCV worker; a refusal or a failure of its worker rejects with why. */
async function call(request: Record<string, unknown>, transfer: ArrayBuffer[] = []): Promise<Record<string, unknown>> {
  const outcome = await pool.call(request, { deadlineMs: GEOMETRY_DEADLINE_MS, transfer });
  if (outcome.ok) return outcome.answer;
  throw new Error(`geometric verification failed: ${outcome.why}`);
}

/**
 * Decodes the image (rejecting what is not one with `ImageRejected`) and detects its keypoints,
 * and those of its mirror image unless `mirror` is false (a query, e.g. a web candidate, is only
 * ever checked against a reference's mirror: half the detection). A collage's cells (see
 * collage-cells.ts) get their own keypoints, from a copy decoded larger.
 */
export async function computeGeometryFeatures(image: Buffer, maxPixels?: number, { mirror = true } = {}): Promise<GeometryFeatures> {
  const { data, width, height } = await decodeGrey(image, FEATURE_MAX_SIDE, maxPixels);
  const found = collageCells(data, width, height);
  const cells = 'cells' in found ? await cellFeatures(image, maxPixels, found.cells, width, height, mirror) : [];
  return { ...(await describeGrey(data, width, height, { mirror, coarse: mirror })), cells, ...('tooMany' in found ? { tooManyCells: found.tooMany } : {}) };
}

/**
 * Keypoints of each cell, cut from a copy decoded CELL_SOURCE_SIDE / FEATURE_MAX_SIDE times larger
 * than the raster the cells were found on (up to the image's own size) and brought to at most
 * FEATURE_MAX_SIDE: a ninth of a 1500 px collage keeps its 500 px there, not the 213 px it has at 640.
 */
async function cellFeatures(
  image: Buffer,
  maxPixels: number | undefined,
  boxes: CellBox[],
  width: number,
  height: number,
  mirror: boolean,
): Promise<CollageCell[]> {
  const source = await decodeGrey(image, CELL_SOURCE_SIDE, maxPixels);
  const [scaleX, scaleY] = [source.width / width, source.height / height];
  const cells: CollageCell[] = [];
  for (const box of boxes) {
    const left = Math.floor(box.left * scaleX);
    const top = Math.floor(box.top * scaleY);
    const cut = {
      left,
      top,
      width: Math.min(source.width, Math.ceil((box.left + box.width) * scaleX)) - left,
      height: Math.min(source.height, Math.ceil((box.top + box.height) * scaleY)) - top,
    };
    const { data, info } = await sharp(source.data, { raw: { width: source.width, height: source.height, channels: 1 } })
      .extract(cut)
      .resize(FEATURE_MAX_SIDE, FEATURE_MAX_SIDE, { fit: 'inside', withoutEnlargement: true })
      .extractChannel(0)
      .raw()
      .toBuffer({ resolveWithObject: true });
    const features = await describeGrey(new Uint8Array(data.buffer, data.byteOffset, info.width * info.height), info.width, info.height, {
      mirror,
      coarse: false,
    });
    cells.push({ box: [box.left / width, box.top / height, box.width / width, box.height / height], features: { ...features, cells: [] } });
  }
  return cells;
}

/** Keypoints (with the mirror image's and the coarse ones when asked: a reference's) and the thumbnail of a grey raster. */
async function describeGrey(
  grey: Uint8Array,
  width: number,
  height: number,
  { mirror, coarse: withCoarse }: { mirror: boolean; coarse: boolean },
): Promise<Omit<GeometryFeatures, 'cells'>> {
  const scale = Math.min(1, THUMBNAIL_SIDE / Math.max(width, height));
  const [thumbWidth, thumbHeight] = [Math.max(1, Math.round(width * scale)), Math.max(1, Math.round(height * scale))];
  const thumbnail = await sharp(grey, { raw: { width, height, channels: 1 } })
    .resize(thumbWidth, thumbHeight, { fit: 'fill' })
    .extractChannel(0)
    .raw()
    .toBuffer();
  const coarse = withCoarse ? await coarseKeypoints(grey, width, height) : { points: new Float32Array(0), descriptors: new Uint8Array(0) };
  const pixels = new Uint8Array(grey);
  const answer = await call({ op: 'features', width, height, pixels, maxFeatures: QUERY_FEATURES, strongest: MAX_FEATURES, sparse: SPARSE_KEYPOINTS, mirror }, [
    pixels.buffer,
  ]);
  return {
    width,
    height,
    points: answer.points as Float32Array,
    descriptors: answer.descriptors as Uint8Array,
    mirror: { points: answer.mirrorPoints as Float32Array, descriptors: answer.mirrorDescriptors as Uint8Array },
    coarse,
    thumbnail: { width: thumbWidth, height: thumbHeight, pixels: new Uint8Array(thumbnail.subarray(0, thumbWidth * thumbHeight)) },
  };
}

/** The keypoints of the grey raster shrunk to COARSE_SIDE, brought back to its own pixels (none when it is small already). */
async function coarseKeypoints(grey: Uint8Array, width: number, height: number): Promise<KeypointSet> {
  const scale = COARSE_SIDE / Math.max(width, height);
  if (scale > 2 / 3) return { points: new Float32Array(0), descriptors: new Uint8Array(0) };
  const [small, info] = await sharp(grey, { raw: { width, height, channels: 1 } })
    .resize(Math.round(width * scale), Math.round(height * scale), { fit: 'fill' })
    .extractChannel(0)
    .raw()
    .toBuffer({ resolveWithObject: true })
    .then(({ data, info }) => [new Uint8Array(data.subarray(0, info.width * info.height)), info] as const);
  const answer = await call(
    {
      op: 'features',
      width: info.width,
      height: info.height,
      pixels: small,
      maxFeatures: MAX_FEATURES,
      strongest: MAX_FEATURES,
      sparse: SPARSE_KEYPOINTS,
      mirror: false,
    },
    [small.buffer],
  );
  const points = answer.points as Float32Array;
  for (let i = 0; i < points.length; i += 2) {
    points[i] = ((points[i] + 0.5) * width) / info.width - 0.5;
    points[i + 1] = ((points[i + 1] + 0.5) * height) / info.height - 0.5;
  }
  return { points, descriptors: answer.descriptors as Uint8Array };
}

const project = (h: number[], x: number, y: number): [number, number] => {
  const w = h[6] * x + h[7] * y + h[8];
  return [(h[0] * x + h[1] * y + h[2]) / w, (h[3] * x + h[4] * y + h[5]) / w];
};

function invert(h: number[]): number[] | null {
  const [a, b, c, d, e, f, g, k, l] = h;
  const det = a * (e * l - f * k) - b * (d * l - f * g) + c * (d * k - e * g);
  if (!Number.isFinite(det) || Math.abs(det) < 1e-12) return null;
  return [e * l - f * k, c * k - b * l, b * f - c * e, f * g - d * l, a * l - c * g, c * d - a * f, d * k - e * g, b * g - a * k, a * e - b * d].map(
    (v) => v / det,
  );
}

/** Signed area (shoelace); NaN when a corner went to infinity. */
const area = (quad: [number, number][]) =>
  quad.reduce((sum, [x, y], i) => {
    const [nx, ny] = quad[(i + 1) % quad.length];
    return sum + x * ny - nx * y;
  }, 0) / 2;

/** Whether the quadrilateral is convex (every turn the same way), i.e. a possible view of a rectangle. */
function convex(quad: [number, number][]): boolean {
  let sign = 0;
  for (let i = 0; i < 4; i++) {
    const [ax, ay] = quad[i];
    const [bx, by] = quad[(i + 1) % 4];
    const [cx, cy] = quad[(i + 2) % 4];
    const turn = (bx - ax) * (cy - by) - (by - ay) * (cx - bx);
    if (!Number.isFinite(turn) || turn === 0) return false;
    if (sign !== 0 && Math.sign(turn) !== sign) return false;
    sign = Math.sign(turn);
  }
  return true;
}

/** Clips the polygon to the rectangle from (left, top) to (right, bottom), by default the image (Sutherland-Hodgman against its four sides). */
function clip(polygon: [number, number][], right: number, bottom: number, left = 0, top = 0): [number, number][] {
  const edges: [(p: [number, number]) => number][] = [[(p) => p[0] - left], [(p) => right - p[0]], [(p) => p[1] - top], [(p) => bottom - p[1]]];
  let out = polygon;
  for (const [inside] of edges) {
    const input = out;
    out = [];
    for (let i = 0; i < input.length; i++) {
      const current = input[i];
      const previous = input[(i + input.length - 1) % input.length];
      const ci = inside(current);
      const pi = inside(previous);
      const cross = (): [number, number] => {
        const t = pi / (pi - ci);
        return [previous[0] + t * (current[0] - previous[0]), previous[1] + t * (current[1] - previous[1])];
      };
      if (ci >= 0) {
        if (pi < 0) out.push(cross());
        out.push(current);
      } else if (pi >= 0) out.push(cross());
    }
  }
  return out;
}

function insidePolygon(polygon: [number, number][], x: number, y: number): boolean {
  let inside = false;
  for (let i = 0, j = polygon.length - 1; i < polygon.length; j = i++) {
    const [xi, yi] = polygon[i];
    const [xj, yj] = polygon[j];
    if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

/** Keypoints of the set that lie inside the polygon. */
function pointsInside(points: Float32Array, polygon: [number, number][]): number {
  let count = 0;
  for (let i = 0; i < points.length; i += 2) if (insidePolygon(polygon, points[i], points[i + 1])) count++;
  return count;
}

/** Grey level of the thumbnail at (x, y) in pixels of the decoded image, bilinear; NaN outside. */
function tap(features: GeometryFeatures, x: number, y: number): number {
  const { thumbnail } = features;
  const tx = (x * thumbnail.width) / features.width - 0.5;
  const ty = (y * thumbnail.height) / features.height - 0.5;
  return bilinear(thumbnail.pixels, thumbnail.width, thumbnail.height, tx, ty);
}

/**
 * The mean grey level over a sample's footprint (3x3 taps `step` apart), so that two images at
 * different scales are compared at the same blur rather than one aliasing against the other.
 */
function sample(features: GeometryFeatures, x: number, y: number, step: number): number {
  let sum = 0;
  for (let i = 0; i < 9; i++) sum += tap(features, x + ((i % 3) - 1) * step, y + (Math.floor(i / 3) - 1) * step);
  return sum / 9;
}

const CELLS = 3;
const SAMPLES_PER_CELL_SIDE = 10;
/** Patches per side for the brightness rule: each cell cut in 2x2, of 5x5 samples. */
const PATCHES = 6;
/** Grey-level standard deviation under which a cell is flat (sky, a plain band): it says nothing. */
const FLAT_CELL = 6;
/** Cells with texture a comparison needs. */
const MIN_TEXTURED_CELLS = 3;

/**
 * A grey level at an end of the scale, where a brightened or darkened copy clips: such a sample has
 * lost the level it had, so the cells' correlations and the patches' brightness leave it out on
 * both sides (a +25 % brighter copy holds its highlights at 255 where the original still varies).
 */
export const clipped = (grey: number) => grey >= 250 || grey <= 5;

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
/** The corners of a sample's footprint, in footprint steps from its centre. */
const FOOTPRINT_CORNERS: readonly [number, number][] = [
  [-1, -1],
  [1, -1],
  [1, 1],
  [-1, 1],
];

/**
 * How the pixels of `a` and `b`, sampled at the same points through the transform (30x30 over the
 * bounding box of regionA), agree: `correlation`, the lowest normalised cross-correlation over the
 * 3x3 cells with texture (0 when fewer than MIN_TEXTURED_CELLS have texture), and `offBrightness`,
 * the share of the 6x6 patches whose mean grey level in `b` is farther than the tolerance from the
 * straight line fitted through all the patches' means.
 */
function cellAgreement(a: GeometryFeatures, b: GeometryFeatures, toB: number[], regionA: [number, number][]): { correlation: number; offBrightness: number } {
  const xs = regionA.map(([x]) => x);
  const ys = regionA.map(([, y]) => y);
  const [left, top] = [Math.min(...xs), Math.min(...ys)];
  const [cellWidth, cellHeight] = [(Math.max(...xs) - left) / CELLS, (Math.max(...ys) - top) / CELLS];
  // A sample's footprint: a third of the distance between samples, in each image's own pixels.
  const stepA = Math.min(cellWidth, cellHeight) / SAMPLES_PER_CELL_SIDE / 3;
  const stepB = stepA * Math.sqrt(Math.abs(area(regionA.map(([x, y]) => project(toB, x, y))) / Math.abs(area(regionA))));
  // A region without area cannot be compared: no agreement.
  if (!(stepA > 0 && Number.isFinite(stepB) && stepB > 0)) return { correlation: 0, offBrightness: 1 };
  const side = CELLS * SAMPLES_PER_CELL_SIDE;
  const cells = Array.from({ length: CELLS * CELLS }, () => ({ a: [] as number[], b: [] as number[] }));
  const patches = Array.from({ length: PATCHES * PATCHES }, () => ({ a: [] as number[], b: [] as number[] }));
  for (let row = 0; row < side; row++) {
    for (let col = 0; col < side; col++) {
      const x = left + ((col + 0.5) / SAMPLES_PER_CELL_SIDE) * cellWidth;
      const y = top + ((row + 0.5) / SAMPLES_PER_CELL_SIDE) * cellHeight;
      // The whole footprint inside the region: a sample on its edge would average in the background.
      if (!FOOTPRINT_CORNERS.every(([dx, dy]) => insidePolygon(regionA, x + dx * 1.5 * stepA, y + dy * 1.5 * stepA))) continue;
      const [u, v] = project(toB, x, y);
      const fromA = sample(a, x, y, stepA);
      const fromB = sample(b, u, v, stepB);
      if (Number.isNaN(fromA) || Number.isNaN(fromB) || clipped(fromA) || clipped(fromB)) continue;
      const cell = cells[Math.floor((row * CELLS) / side) * CELLS + Math.floor((col * CELLS) / side)];
      const patch = patches[Math.floor((row * PATCHES) / side) * PATCHES + Math.floor((col * PATCHES) / side)];
      cell.a.push(fromA);
      cell.b.push(fromB);
      patch.a.push(fromA);
      patch.b.push(fromB);
    }
  }
  const correlations: number[] = [];
  // A cell the region only grazes says little.
  for (const cell of cells.filter(({ a: values }) => values.length >= 30)) {
    const [meanA, meanB] = [mean(cell.a), mean(cell.b)];
    let covariance = 0;
    let varianceA = 0;
    let varianceB = 0;
    for (let i = 0; i < cell.a.length; i++) {
      const da = cell.a[i] - meanA;
      const db = cell.b[i] - meanB;
      covariance += da * db;
      varianceA += da * da;
      varianceB += db * db;
    }
    if (Math.sqrt(varianceA / cell.a.length) < FLAT_CELL) continue;
    correlations.push(varianceB === 0 ? 0 : covariance / Math.sqrt(varianceA * varianceB));
  }
  // Two plain images under the same logo agree in the logo's cell alone: too little to go on.
  const correlation = correlations.length >= MIN_TEXTURED_CELLS ? Math.min(...correlations) : 0;
  // Least-squares line through the patches' (mean in a, mean in b); a patch the region grazes is left out.
  const means = patches.filter(({ a: values }) => values.length >= 8).map((patch) => [mean(patch.a), mean(patch.b)]);
  if (means.length === 0) return { correlation, offBrightness: 1 };
  const [centreA, centreB] = [mean(means.map(([x]) => x)), mean(means.map(([, y]) => y))];
  const spread = means.reduce((sum, [x]) => sum + (x - centreA) ** 2, 0);
  const gain = spread > 0 ? means.reduce((sum, [x, y]) => sum + (x - centreA) * (y - centreB), 0) / spread : 0;
  const off = means.filter(([x, y]) => Math.abs(y - centreB - gain * (x - centreA)) > GEOMETRY_THRESHOLDS.patchBrightnessTolerance).length;
  return { correlation, offBrightness: off / means.length };
}

interface Fit {
  /** From `a` to `b`, row-major 3x3. */
  transform: number[] | null;
  /** Index in `a`, index in `b` of each keypoint pair the fit keeps. */
  pairs: Int32Array;
}

/**
 * The part of regionA that the fit's inliers span (their bounding box in `a`), and the same part of
 * `b` through the transform; null when it has no area. A photograph cover-cropped into a collage's
 * cell shows only the cell's shape of itself, and its inliers lie in that cell.
 */
function inlierSpan(fit: Fit, aSet: KeypointSet, regionA: [number, number][], toB: number[], b: GeometryFeatures) {
  const [xs, ys] = [[] as number[], [] as number[]];
  for (let i = 0; i < fit.pairs.length; i += 2) {
    xs.push(aSet.points[2 * fit.pairs[i]]);
    ys.push(aSet.points[2 * fit.pairs[i] + 1]);
  }
  const spanA = clip(regionA, Math.max(...xs), Math.max(...ys), Math.min(...xs), Math.min(...ys));
  if (spanA.length < 3) return null;
  return {
    regionA: spanA,
    regionB: clip(
      spanA.map(([x, y]) => project(toB, x, y)),
      b.width,
      b.height,
    ),
  };
}

/**
 * The region of each image that the other one covers, clipped to the image, and the checks that
 * turn a RANSAC fit into a decision. `aSet` and `bSet` are the keypoint sets that were matched.
 */
function decide(fit: Fit, a: GeometryFeatures, aSet: KeypointSet, b: GeometryFeatures, bSet: KeypointSet, mirrored: boolean): ConfirmedGeometry | Refusal {
  const inliers = fit.pairs.length / 2;
  const { minInliers, smallPart, minInlierShare, minCoverage, minCellCorrelation, maxShareOffBrightness, patchBrightnessTolerance } = GEOMETRY_THRESHOLDS;
  if (!fit.transform || inliers < minInliers)
    return { confirmed: false, inliers, reason: `${inliers} keypoint pairs agree on one transform, ${minInliers} needed` };
  const toB = fit.transform;
  const toA = invert(toB);
  if (!toA) return { confirmed: false, inliers, reason: 'the fitted transform is degenerate' };
  const corners = (w: number, h: number): [number, number][] => [
    [0, 0],
    [w, 0],
    [w, h],
    [0, h],
  ];
  const aInB = corners(a.width, a.height).map(([x, y]) => project(toB, x, y));
  const bInA = corners(b.width, b.height).map(([x, y]) => project(toA, x, y));
  if (!convex(aInB) || !convex(bInA)) return { confirmed: false, inliers, reason: 'the fitted transform folds the image' };
  const regionB = clip(aInB, b.width, b.height);
  const regionA = clip(bInA, a.width, a.height);
  const coverageA = Math.abs(area(regionA)) / (a.width * a.height);
  const coverageB = Math.abs(area(regionB)) / (b.width * b.height);
  if (!(Math.max(coverageA, coverageB) >= minCoverage)) {
    return {
      confirmed: false,
      inliers,
      reason: `the matched region covers at most ${Math.round(100 * Math.max(coverageA, coverageB))} % of either image, ${100 * minCoverage} % needed`,
    };
  }
  const [shareA, shareB] = [inliers / Math.max(1, pointsInside(aSet.points, regionA)), inliers / Math.max(1, pointsInside(bSet.points, regionB))];
  // A photograph in a collage's cell is seen smaller there: only the collage's side says how much of the region agrees.
  const part = Math.min(coverageA, coverageB) <= smallPart;
  const inlierShare = part ? (coverageA < coverageB ? shareA : shareB) : Math.min(shareA, shareB);
  if (inlierShare < minInlierShare) {
    return {
      confirmed: false,
      inliers,
      reason: `${inliers} of the keypoints in the matched region agree (${Math.round(100 * inlierShare)} %), ${100 * minInlierShare} % needed`,
    };
  }
  let { correlation, offBrightness } = cellAgreement(a, b, toB, regionA);
  let [shownA, shownB, shownCoverageA, shownCoverageB] = [regionA, regionB, coverageA, coverageB];
  if (correlation < minCellCorrelation || offBrightness > maxShareOffBrightness) {
    // A photograph cover-cropped into a collage's cell: the fit brings the whole original's outline
    // over the neighbouring cells, whose pixels cannot agree. Compared again where its inliers lie.
    const span = inlierSpan(fit, aSet, regionA, toB, b);
    const spanCoverage = span ? [Math.abs(area(span.regionA)) / (a.width * a.height), Math.abs(area(span.regionB)) / (b.width * b.height)] : [0, 0];
    const narrowed = span && Math.max(...spanCoverage) >= minCoverage ? cellAgreement(a, b, toB, span.regionA) : null;
    if (span && narrowed && narrowed.correlation >= minCellCorrelation && narrowed.offBrightness <= maxShareOffBrightness) {
      ({ correlation, offBrightness } = narrowed);
      [shownA, shownB, shownCoverageA, shownCoverageB] = [span.regionA, span.regionB, spanCoverage[0], spanCoverage[1]];
    }
  }
  if (correlation < minCellCorrelation) {
    return {
      confirmed: false,
      inliers,
      reason: `the pixels of the matched regions do not agree everywhere (weakest correlation ${correlation.toFixed(2)}, ${minCellCorrelation} needed): shared content or too little texture, not the same picture`,
    };
  }
  if (offBrightness > maxShareOffBrightness) {
    return {
      confirmed: false,
      inliers,
      reason: `${Math.round(100 * offBrightness)} % of the matched region is more than ${patchBrightnessTolerance} grey levels off the brightness of the rest (${100 * maxShareOffBrightness} % allowed): shared content around different pictures`,
    };
  }
  const fraction = (quad: [number, number][], w: number, h: number): Quad =>
    quad.map(([x, y]) => [Math.min(1, Math.max(0, x / w)), Math.min(1, Math.max(0, y / h))]);
  return {
    confirmed: true,
    inliers,
    inlierShare,
    mirrored,
    regionA: fraction(shownA, a.width, a.height),
    regionB: fraction(shownB, b.width, b.height),
    coverageA: shownCoverageA,
    coverageB: shownCoverageB,
    correlation,
  };
}

/**
 * The transforms tried, in order: an affine one first (a crop, a turn, a flip, a collage or a
 * screenshot is a scale, rotation and shift of the picture, and six parameters fitted on keypoints
 * from one part of a small picture stay true over the rest of it, where a homography's eight
 * tilt its far edges), then a homography (a photo of a screen, seen in perspective).
 */
const MODELS = ['affine', 'homography'] as const;

/** Fits of each model to the descriptor pairs of `from` and `to` that pass the ratio test, lazily. */
async function* fits(from: KeypointSet, to: KeypointSet): AsyncGenerator<Fit> {
  const { pairs } = (await call({ op: 'match', from: from.descriptors, to: to.descriptors, ratio: RATIO })) as { pairs: Int32Array };
  // RANSAC's inliers are a subset of these pairs: too few already decides (most different photos).
  if (pairs.length / 2 < GEOMETRY_THRESHOLDS.minInliers) {
    yield { transform: null, pairs: new Int32Array(0) };
    return;
  }
  const [source, target] = [new Float32Array(pairs.length), new Float32Array(pairs.length)];
  for (let i = 0; i < pairs.length; i += 2) {
    source.set(from.points.subarray(pairs[i] * 2, pairs[i] * 2 + 2), i);
    target.set(to.points.subarray(pairs[i + 1] * 2, pairs[i + 1] * 2 + 2), i);
  }
  for (const model of MODELS) {
    const answer = (await call({ op: 'fit', source, target, model, reprojection: REPROJECTION })) as { transform: number[] | null; inliers: Uint8Array };
    const kept = pairs.filter((_, i) => answer.inliers[i >> 1] === 1);
    yield { transform: answer.transform, pairs: kept };
    // A photo of a screen is near enough to affine that the affine fit keeps part of it; when it
    // keeps fewer than a near miss, the pairs are a different picture's, and the homography's
    // RANSAC over them would only cost (100-200 ms on a few pairs of different photographs).
    if (kept.length / 2 < GEOMETRY_THRESHOLDS.nearMissInliers) return;
  }
}

/**
 * Checks whether `a` shows the same picture as `b` (or part of it, or is part of it), directly or
 * mirrored. regionA is the part of `a` that `b` shows, regionB the part of `b` that `a` shows.
 * When the whole of `a` is refused and either side is a collage, each of its cells is checked in
 * its place (a cell of the query as the query, a cell of the reference as the reference), and a
 * confirmed cell answers with its region placed in the whole collage: the same pair is found
 * whichever side is the query.
 */
export async function verifyGeometry(a: GeometryFeatures, b: GeometryFeatures): Promise<GeometryResult> {
  // A collage's cells take the place of the last try against the reference's coarse keypoints:
  // a cell is checked at its own size, not as a small part of the collage.
  const whole = await verifyWhole(a, b, { coarse: a.cells.length === 0 && b.cells.length === 0 });
  if (whole.confirmed) return withinCell(withinCell(whole, a.cells, 'A'), b.cells, 'B');
  let best = whole;
  const tries = [
    ...a.cells.map((cell) => ({ cell, side: 'A' as const, check: () => verifyWhole(cell.features, b, { coarse: false }) })),
    ...b.cells.map((cell) => ({ cell, side: 'B' as const, check: () => verifyWhole(a, cell.features, { coarse: false }) })),
  ];
  for (const { cell, side, check } of tries) {
    const result = await check();
    if (result.confirmed) return inCollage(result, cell.box, side);
    if (result.inliers > best.inliers) best = result;
  }
  // Disjoint only when no cell came near either: the veto drops a hash match on it.
  const disjoint = best === whole ? whole.disjoint : best.disjoint && whole.disjoint;
  const tooMany = a.tooManyCells ?? b.tooManyCells;
  const capped = tooMany ? `; the picture splits into more than ${MAX_CELLS} cells (${tooMany} or more), too many to check one by one` : '';
  return { ...best, reason: `${best.reason}${capped}`, disjoint };
}

type Side = 'A' | 'B';

/** The confirmed match with one side's region and coverage replaced. */
const withRegion = (result: ConfirmedGeometry, side: Side, region: Quad, coverage: number): ConfirmedGeometry =>
  side === 'A' ? { ...result, regionA: region, coverageA: coverage } : { ...result, regionB: region, coverageB: coverage };

/**
 * A match of a whole collage with its region cut to the cell it overlaps most: the original's
 * outline, brought over, runs past a cover-cropped cell into its neighbours.
 */
function withinCell(result: ConfirmedGeometry, cells: CollageCell[], side: Side): ConfirmedGeometry {
  if (cells.length === 0) return result;
  const region = side === 'A' ? result.regionA : result.regionB;
  const inside = ([left, top, width, height]: CollageCell['box']) => clip(region, left + width, top + height, left, top);
  const overlap = (box: CollageCell['box']) => Math.abs(area(inside(box)));
  const cut = inside(cells.map(({ box }) => box).reduce((most, box) => (overlap(box) > overlap(most) ? box : most)));
  return cut.length < 3 ? result : withRegion(result, side, cut, Math.abs(area(cut)));
}

/** A cell's confirmed match with the cell's region brought from the cell's fractions to the collage's. */
function inCollage(result: ConfirmedGeometry, [left, top, width, height]: CollageCell['box'], side: Side): ConfirmedGeometry {
  const [region, coverage] = side === 'A' ? [result.regionA, result.coverageA] : [result.regionB, result.coverageB];
  return withRegion(
    result,
    side,
    region.map(([x, y]) => [left + x * width, top + y * height]),
    coverage * width * height,
  );
}

/**
 * The check of the whole of `a` against `b`. Matches the strongest MAX_FEATURES keypoints of each
 * side; when the best fit is a near miss (nearMissInliers up to minInliers), it is matched again
 * with all the query's keypoints, then with all of both sides', and last (when `coarse`) against
 * the reference's COARSE_SIDE keypoints.
 * Answers the first fit that is confirmed, or the refusal of the fit with the most inliers.
 */
async function verifyWhole(a: GeometryFeatures, b: GeometryFeatures, { coarse }: { coarse: boolean }): Promise<GeometryResult> {
  const strongest = (set: KeypointSet): KeypointSet => ({
    points: set.points.subarray(0, 2 * MAX_FEATURES),
    descriptors: set.descriptors.subarray(0, 32 * MAX_FEATURES),
  });
  let refused: Refusal | null = null;
  let nearMiss: { bSet: KeypointSet; mirrored: boolean } | null = null;
  const attempt = async (aSet: KeypointSet, bSet: KeypointSet, mirrored: boolean): Promise<ConfirmedGeometry | null> => {
    for await (const fit of fits(aSet, bSet)) {
      const result = decide(fit, a, aSet, b, bSet, mirrored);
      if (result.confirmed) return result;
      if (!refused || result.inliers > refused.inliers) {
        refused = result;
        const { nearMissInliers, minInliers } = GEOMETRY_THRESHOLDS;
        nearMiss = result.inliers >= nearMissInliers && result.inliers < minInliers ? { bSet, mirrored } : null;
      }
    }
    return null;
  };
  for (const [bSet, mirrored] of [
    [strongest(b), false],
    [b.mirror, true],
  ] as const) {
    if (mirrored && bSet.points.length === 0) break;
    const confirmed = await attempt(strongest(a), bSet, mirrored);
    if (confirmed) return confirmed;
  }
  // Only the best near miss is tried again: with all the query's keypoints (a photograph in a
  // quarter of a collage), then with all of the reference's too (a crop of a small part of it).
  // Not both at once: a reference's weaker keypoints make Lowe's ratio test stricter for every
  // query keypoint, and a collage's copy lost more pairs than it gained (collage recall 90.5 -> 81 %).
  const retry = nearMiss as { bSet: KeypointSet; mirrored: boolean } | null;
  if (retry) {
    const tries: [KeypointSet, KeypointSet][] = [];
    if (a.points.length > 2 * MAX_FEATURES) tries.push([a, retry.bSet]);
    if (!retry.mirrored && b.points.length > retry.bSet.points.length) tries.push([a, b]);
    for (const [aSet, bSet] of tries) {
      const confirmed = await attempt(aSet, bSet, retry.mirrored);
      if (confirmed) return confirmed;
    }
  }
  // Last, the reference at COARSE_SIDE: the query may hold it small (a cell of a 3x3 collage).
  if (coarse && b.coarse.points.length > 0) {
    const confirmed = await attempt(a, b.coarse, false);
    if (confirmed) return confirmed;
  }
  const best = refused as Refusal | null;
  const textured = (features: GeometryFeatures) => features.points.length / 2 >= SPARSE_KEYPOINTS;
  return { ...best!, disjoint: best!.inliers < GEOMETRY_THRESHOLDS.nearMissInliers && textured(a) && textured(b) };
}
