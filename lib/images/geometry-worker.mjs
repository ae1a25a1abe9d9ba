// Geometric verification worker: OpenCV's wasm build (ORB keypoints, Hamming matching, RANSAC fits
// of an affine transform or a homography), so the wasm never runs on the main thread. Plain .mjs
// because workers started from .ts files are not transformed reliably by vitest or tsx. It only sees already decoded,
// downscaled grey pixels (sharp decodes in the main thread), so a malformed file never reaches it.
// Protocol, one message per request, answered in order:
//   in:  { id, op: 'features', width, height, pixels: Uint8Array (grey, row-major), maxFeatures,
//          strongest, sparse, mirror }
//   out: { id, points: Float32Array (x, y pairs), descriptors: Uint8Array (32 bytes each;
//          up to maxFeatures, ordered so that the first `strongest` are the strongest of each
//          pyramid level in proportion), mirrorPoints, mirrorDescriptors (`strongest` keypoints of
//          the image mirrored left to right, with x mapped back into the unmirrored image; empty
//          when mirror is false); an image with fewer than `sparse` keypoints also gets those of a
//          local contrast stretch, and an image's dark parts with few keypoints those of the
//          stretch there }
//   in:  { id, op: 'match', from: Uint8Array, to: Uint8Array (descriptors), ratio }
//   out: { id, pairs: Int32Array (from index, to index of each pair that passes Lowe's ratio test) }
//   in:  { id, op: 'fit', source: Float32Array, target: Float32Array (x, y of each pair's two
//          keypoints), model: 'affine' | 'homography', reprojection }
//   out: { id, transform: number[9] | null (row-major, source -> target; an affine one
//          ends 0, 0, 1), inliers: Uint8Array (1 for each pair RANSAC kept) }
//   any: { id, error } (that request alone failed)
//   { fatal } once, when OpenCV cannot start: the pool (lib/threads/worker-pool.ts) then drops this
//   worker, every request it owed failing with that reason.
import { createRequire } from 'node:module';
import { parentPort } from 'node:worker_threads';

const require = createRequire(import.meta.url);
const cv = require('@techstark/opencv-js');
const ready = new Promise((resolve, reject) => {
  if (cv.Mat) return resolve();
  cv.onRuntimeInitialized = resolve;
  setTimeout(() => reject(new Error('OpenCV did not start within 30 s')), 30_000).unref();
});
ready.catch((error) => parentPort.postMessage({ fatal: `OpenCV could not start: ${error.message}` }));

const DESCRIPTOR_BYTES = 32;

/** Runs `work` with a list that collects every OpenCV object it allocates, then frees them all. */
function withMats(work) {
  const owned = [];
  const own = (object) => (owned.push(object), object);
  try {
    return work(own);
  } finally {
    for (const object of owned) object.delete();
  }
}

// ORB ignores a border of 31 px (its patch size); a smaller image has no keypoint to offer.
const MIN_SIDE = 2 * 31 + 1;

const NONE = { points: new Float32Array(0), descriptors: new Uint8Array(0) };

/** Side of the grid over which keypoints are spread and dark parts are found. */
const GRID = 4;
/** ORB is asked for this many times the keypoints kept, so that the spread has weaker ones to choose from. */
const CANDIDATES = 2;

const cellOf = (x, y, width, height) => Math.min(GRID - 1, Math.floor((y * GRID) / height)) * GRID + Math.min(GRID - 1, Math.floor((x * GRID) / width));

/**
 * ORB keypoints of the grey image (only inside `mask` when given), x mapped by mapX, ordered so
 * that the first `strongest` are spread over the image: the strongest of each pyramid level in
 * proportion, taken from each cell of a 4x4 grid in turn. A check uses those, and all of them only
 * to try again a near miss. Without the spread, a smooth photograph filling a third of a collage
 * beside grass or moss kept next to none of the collage's keypoints (ORB keeps the strongest
 * responses of the whole image), and the pair found no descriptor match at all.
 */
function detect(grey, maxFeatures, own, mapX, strongest, mask = own(new cv.Mat())) {
  if (grey.rows < MIN_SIDE || grey.cols < MIN_SIDE) return NONE;
  const orb = own(new cv.ORB(CANDIDATES * maxFeatures));
  const keypoints = own(new cv.KeyPointVector());
  const descriptors = own(new cv.Mat());
  orb.detectAndCompute(grey, mask, keypoints, descriptors);
  const count = keypoints.size();
  if (count === 0 || descriptors.rows !== count) return NONE;
  let all = Array.from({ length: count }, (_, i) => ({ i, ...keypoints.get(i) }));
  if (strongest < count) {
    // Rank within its level, as a fraction of the level: ordering by it interleaves the levels.
    const levels = new Map();
    for (const keypoint of all) {
      if (!levels.has(keypoint.octave)) levels.set(keypoint.octave, []);
      levels.get(keypoint.octave).push(keypoint);
    }
    for (const level of levels.values()) level.sort((x, y) => y.response - x.response).forEach((keypoint, rank) => (keypoint.rank = rank / level.length));
    // Then each cell's next one in turn: a cell's turn is how many of its own come before.
    const taken = new Int32Array(GRID * GRID);
    all
      .sort((x, y) => x.rank - y.rank)
      .forEach((keypoint, order) => {
        keypoint.turn = taken[cellOf(keypoint.pt.x, keypoint.pt.y, grey.cols, grey.rows)]++;
        keypoint.order = order;
      });
    all = all.sort((x, y) => x.turn - y.turn || x.order - y.order);
  }
  const kept = all.slice(0, maxFeatures);
  const points = new Float32Array(kept.length * 2);
  const bytes = new Uint8Array(kept.length * DESCRIPTOR_BYTES);
  kept.forEach(({ i, pt }, k) => {
    points[k * 2] = mapX(pt.x);
    points[k * 2 + 1] = pt.y;
    bytes.set(descriptors.data.subarray(i * DESCRIPTOR_BYTES, (i + 1) * DESCRIPTOR_BYTES), k * DESCRIPTOR_BYTES);
  });
  return { points, descriptors: bytes };
}

/**
 * CLAHE's clip limit and tiles for a sparse image: FAST's fixed threshold (20 grey levels, which
 * the wasm build cannot lower) finds next to nothing on a dark or smooth photograph, and a local
 * contrast stretch raises the differences it looks at where they are small. Only for such images
 * and for the dark cells of others (for every image it doubled the keypoint time and cost recall
 * elsewhere).
 */
const CLIP_LIMIT = 8;
const TILES = 8;
/** A stretched image's keypoint this close (px) to one of the plain image's is the same one. */
const SAME_PLACE = 3;

/** Mean grey level under which a grid cell with few keypoints is dark (its keypoints need the stretch). */
const DARK_CELL = 80;

/**
 * The cells of the grid (see cellOf) that are dark and hold fewer than their share of `sparse`
 * keypoints: a dark photograph inside a collage or a page, whose own stretched keypoints the copy
 * would otherwise lack (the whole copy is not sparse). Bright flat cells (sky, a page's white) are
 * left alone: stretched, they give noise that took the places of a photograph's real keypoints.
 */
function darkCells(pixels, width, height, points, sparse) {
  const [counts, sums, sizes] = [new Int32Array(GRID * GRID), new Float64Array(GRID * GRID), new Int32Array(GRID * GRID)];
  for (let i = 0; i < points.length; i += 2) counts[cellOf(points[i], points[i + 1], width, height)]++;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const cell = cellOf(x, y, width, height);
      sums[cell] += pixels[y * width + x];
      sizes[cell]++;
    }
  }
  return [...counts.keys()].filter((cell) => counts[cell] < sparse / (GRID * GRID) && sums[cell] < DARK_CELL * sizes[cell]);
}

/**
 * The plain keypoints with the stretched image's ones that are elsewhere: the first `strongest`
 * are the plain ones but `quota` of them, then up to `quota` stretched ones; then the rest of each.
 * A keypoint found twice would fail the ratio test against its own double.
 */
function combine(plain, stretched, strongest, quota, count) {
  const fresh = [];
  for (let k = 0; k < stretched.points.length / 2; k++) {
    const x = stretched.points[k * 2];
    const y = stretched.points[k * 2 + 1];
    let near = false;
    for (let i = 0; i < plain.points.length && !near; i += 2)
      near = Math.abs(plain.points[i] - x) <= SAME_PLACE && Math.abs(plain.points[i + 1] - y) <= SAME_PLACE;
    if (!near) fresh.push(k);
  }
  const plainCount = plain.points.length / 2;
  const [head, extra] = [Math.min(plainCount, strongest - Math.min(quota, fresh.length)), Math.min(quota, fresh.length)];
  const order = [
    ...Array.from({ length: head }, (_, i) => [plain, i]),
    ...fresh.slice(0, extra).map((k) => [stretched, k]),
    ...Array.from({ length: plainCount - head }, (_, i) => [plain, head + i]),
    ...fresh.slice(extra).map((k) => [stretched, k]),
  ].slice(0, count);
  const out = { points: new Float32Array(order.length * 2), descriptors: new Uint8Array(order.length * DESCRIPTOR_BYTES) };
  order.forEach(([set, k], at) => {
    out.points.set(set.points.subarray(k * 2, k * 2 + 2), at * 2);
    out.descriptors.set(set.descriptors.subarray(k * DESCRIPTOR_BYTES, (k + 1) * DESCRIPTOR_BYTES), at * DESCRIPTOR_BYTES);
  });
  return out;
}

function features({ width, height, pixels, maxFeatures, strongest, sparse, mirror }) {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) throw new Error(`invalid raster size ${width}x${height}`);
  if (!(pixels instanceof Uint8Array) || pixels.length !== width * height) throw new Error(`expected ${width * height} grey bytes, got ${pixels?.length}`);
  return withMats((own) => {
    const grey = own(new cv.Mat(height, width, cv.CV_8UC1));
    grey.data.set(pixels);
    const unmirror = (x) => width - 1 - x;
    let direct = detect(grey, maxFeatures, own, (x) => x, strongest);
    let flipped = NONE;
    if (mirror) {
      const mirrored = own(new cv.Mat());
      cv.flip(grey, mirrored, 1);
      // Only a reference's mirror is ever searched, and only with its strongest keypoints.
      flipped = detect(mirrored, strongest, own, unmirror, strongest);
    }
    const stretch = () => {
      const stretched = own(new cv.Mat());
      own(new cv.CLAHE(CLIP_LIMIT, new cv.Size(TILES, TILES))).apply(grey, stretched);
      return stretched;
    };
    const plainCount = direct.points.length / 2;
    if (plainCount < sparse) {
      // Sparse as a whole: the stretched keypoints fill the strongest after the plain ones.
      const stretched = stretch();
      direct = combine(
        direct,
        detect(stretched, maxFeatures, own, (x) => x, strongest),
        strongest,
        strongest - plainCount,
        maxFeatures,
      );
      if (mirror) {
        const mirrored = own(new cv.Mat());
        cv.flip(stretched, mirrored, 1);
        flipped = combine(flipped, detect(mirrored, strongest, own, unmirror, strongest), strongest, strongest - flipped.points.length / 2, strongest);
      }
    } else {
      // Dark parts: stretched keypoints there take those cells' share of the strongest.
      const cells = darkCells(pixels, width, height, direct.points, sparse);
      if (cells.length > 0) {
        const mask = own(cv.Mat.zeros(height, width, cv.CV_8UC1));
        for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) if (cells.includes(cellOf(x, y, width, height))) mask.data[y * width + x] = 255;
        const quota = Math.round((strongest * cells.length) / (GRID * GRID));
        direct = combine(
          direct,
          detect(stretch(), maxFeatures, own, (x) => x, strongest, mask),
          strongest,
          quota,
          maxFeatures,
        );
      }
    }
    return { ...direct, mirrorPoints: flipped.points, mirrorDescriptors: flipped.descriptors };
  });
}

const WORDS = DESCRIPTOR_BYTES / 4;

const popcount = (x) => {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
};

/**
 * The nearest and second nearest descriptor of `to` for each of `from`, by Hamming distance, among
 * the descriptors that share at least one whole byte with it (a byte-position index): two ORB
 * descriptors close enough to pass the ratio test share a byte with near certainty (at distance 40
 * of 256 bits, 31 of 32 bytes differ with probability below 1e-4), and the index skips about 85 %
 * of the comparisons that a brute-force search makes. Returns [to index, distance, second distance] per `from`.
 */
function nearestTwo(from, to) {
  const countFrom = from.length / DESCRIPTOR_BYTES;
  const countTo = to.length / DESCRIPTOR_BYTES;
  const start = new Int32Array(DESCRIPTOR_BYTES * 256 + 1);
  for (let i = 0; i < countTo; i++) for (let p = 0; p < DESCRIPTOR_BYTES; p++) start[p * 256 + to[i * DESCRIPTOR_BYTES + p] + 1]++;
  for (let k = 1; k < start.length; k++) start[k] += start[k - 1];
  const fill = start.slice(0, -1);
  const members = new Int32Array(countTo * DESCRIPTOR_BYTES);
  for (let i = 0; i < countTo; i++) for (let p = 0; p < DESCRIPTOR_BYTES; p++) members[fill[p * 256 + to[i * DESCRIPTOR_BYTES + p]]++] = i;
  const a = new Uint32Array(from.buffer.slice(from.byteOffset, from.byteOffset + from.length));
  const b = new Uint32Array(to.buffer.slice(to.byteOffset, to.byteOffset + to.length));
  const seen = new Int32Array(countTo).fill(-1);
  const result = new Int32Array(countFrom * 3);
  for (let q = 0; q < countFrom; q++) {
    let best = -1;
    let first = 1 << 30;
    let second = 1 << 30;
    for (let p = 0; p < DESCRIPTOR_BYTES; p++) {
      const bucket = p * 256 + from[q * DESCRIPTOR_BYTES + p];
      for (let m = start[bucket]; m < start[bucket + 1]; m++) {
        const t = members[m];
        if (seen[t] === q) continue;
        seen[t] = q;
        // Half the words first: already at the runner-up's distance, it cannot be nearer (most
        // candidates; written out, as a loop with the early exit measured slower, not faster).
        const x = q * WORDS;
        const y = t * WORDS;
        let distance = popcount(a[x] ^ b[y]) + popcount(a[x + 1] ^ b[y + 1]) + popcount(a[x + 2] ^ b[y + 2]) + popcount(a[x + 3] ^ b[y + 3]);
        if (distance >= second) continue;
        distance += popcount(a[x + 4] ^ b[y + 4]) + popcount(a[x + 5] ^ b[y + 5]) + popcount(a[x + 6] ^ b[y + 6]) + popcount(a[x + 7] ^ b[y + 7]);
        if (distance < first) {
          second = first;
          first = distance;
          best = t;
        } else if (distance < second) second = distance;
      }
    }
    result.set([best, first, second], q * 3);
  }
  return result;
}

function match({ from, to, ratio }) {
  if (from.length < 4 * DESCRIPTOR_BYTES || to.length < 4 * DESCRIPTOR_BYTES) return { pairs: new Int32Array(0) };
  const nearest = nearestTwo(from, to);
  // Lowe's ratio test; each keypoint of `to` is used once (the closer claim wins).
  const best = new Map();
  for (let q = 0; q < nearest.length / 3; q++) {
    const [train, first, second] = nearest.subarray(q * 3, q * 3 + 3);
    if (train < 0 || first >= ratio * second) continue;
    const held = best.get(train);
    if (!held || held.distance > first) best.set(train, { query: q, distance: first });
  }
  const pairs = new Int32Array(best.size * 2);
  let i = 0;
  for (const [train, { query }] of best) pairs.set([query, train], 2 * i++);
  return { pairs };
}

function fit({ source, target, model, reprojection }) {
  const count = source.length / 2;
  if (count < 4 || target.length !== source.length) return { transform: null, inliers: new Uint8Array(0) };
  return withMats((own) => {
    const from = own(cv.matFromArray(count, 1, cv.CV_32FC2, Array.from(source)));
    const to = own(cv.matFromArray(count, 1, cv.CV_32FC2, Array.from(target)));
    const mask = own(new cv.Mat());
    let transform = null;
    if (model === 'affine') {
      const affine = own(cv.estimateAffine2D(from, to, mask, cv.RANSAC, reprojection, 2000, 0.995, 10));
      if (affine.rows === 2 && affine.cols === 3) transform = [...affine.data64F, 0, 0, 1];
    } else if (model === 'homography') {
      const homography = own(cv.findHomography(from, to, cv.RANSAC, reprojection, mask, 2000, 0.995));
      if (homography.rows === 3 && homography.cols === 3) transform = Array.from(homography.data64F);
    } else throw new Error(`unknown model ${model}`);
    if (!transform || mask.rows !== count) return { transform: null, inliers: new Uint8Array(0) };
    return { transform, inliers: new Uint8Array(mask.data.slice(0, count)) };
  });
}

/** OpenCV's wasm build throws the address of a C++ exception; its message is readable from there. */
function describeError(error) {
  if (error instanceof Error) return error.message;
  if (typeof error === 'number' && typeof cv.exceptionFromPtr === 'function') {
    try {
      return `OpenCV: ${cv.exceptionFromPtr(error).msg}`;
    } catch {
      // Not an OpenCV exception after all.
    }
  }
  return String(error);
}

const OPERATIONS = { features, match, fit };
let queue = ready;

parentPort.on('message', (request) => {
  queue = queue
    .then(() => {
      const operation = OPERATIONS[request.op];
      if (!operation) throw new Error(`unknown operation ${request.op}`);
      return operation(request);
    })
    .then(
      (result) => parentPort.postMessage({ id: request.id, ...result }),
      (error) => parentPort.postMessage({ id: request.id, error: describeError(error) }),
    );
});
