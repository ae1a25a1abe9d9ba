import sharp from 'sharp';
import { decodeFailure, decodeOptions } from './decode.js';
import { clipped, GEOMETRY_THRESHOLDS, type ConfirmedGeometry } from './geometry.js';
import { readImageHeader } from './header.js';
import { readJpeg } from './jpeg-dc-pool.js';
import { jpegLuma, luma } from './luma.js';
import { bilinear, resample, type Raster } from './raster.js';

/**
 * The pixel rules of the geometric check applied to an edit the region hashes already name, without
 * keypoints: a mirror, a crop of up to 14 % per side or a cover crop to another shape, a change of
 * brightness or of size. The hashes say how the query relates to the reference (`hflip`, `crop`,
 * `hflip+crop`, `identity`); the two images are decoded to small grey copies, a crop's scale and
 * place are found by a search over them, and the pixels must agree there as the geometric check
 * asks of a fit (lib/images/geometry.ts). A pair that passes needs no keypoints (about 100 ms an
 * image) nor a fit; one that does not goes to the geometric check, so this can only confirm what
 * the check would have looked at, never refuse.
 */

/** Longer side of the grey copies compared: the geometric check's pixel copies are as large. */
const PIXEL_SIDE = 160;
/** Side of the grid of cells whose correlations must all pass (the check's 3x3) and of the brightness patches (6x6). */
const CELLS = 3;
const PATCHES = 6;
const SAMPLES = 30;
/** Grey-level standard deviation under which a cell is flat: it says nothing. */
const FLAT_CELL = 6;
/**
 * A cell of little texture (standard deviation under FAINT_CELL) must correlate FAINT_CORRELATION,
 * the others GEOMETRY_THRESHOLDS.minCellCorrelation. At 160 px a faint cell's few grey levels are
 * mostly the JPEG's and the resampling's noise, and a crop placed within the search's half-percent
 * step reads it a fraction of a pixel off: true crops scored 0.67-0.74 there and went to keypoints.
 * Counting such cells as flat instead would take away the textured cells a pale picture needs.
 * decisions/0068 gives the rules tried and the pairs each confirmed.
 */
const FAINT_CELL = 20;
const FAINT_CORRELATION = 0.5;
/**
 * Cells with texture a confirmation needs, the centre one among them: twice what the geometric
 * check asks, since nothing else (no keypoints) speaks for the pair. Two different pale pictures
 * turned by the same angle agree in every cell their canvas reaches (correlation 0.99: the canvas's
 * edge is all the texture there), and no turn's canvas reaches the centre: there the pictures
 * themselves must agree, or the geometric check decides.
 */
const MIN_TEXTURED_CELLS = 6;
const CENTRE_CELL = 4;
/** The share of the other image's width a crop of the same shape may keep: the crop windows cut at most 12.5 % per side. */
const MIN_CROP = 0.72;
/**
 * Whole images must have about the same shape; a crop keeps its original's within this, or is a
 * cover crop to another shape (a shape window of the region hashes): it then spans the other
 * image's whole height (a narrower shape) or width (a wider one), and only its offset is searched.
 */
const ASPECT_TOLERANCE = 0.04;

/** A small grey copy of an image, as the check compares it (greyCopy). */
export interface Grey {
  width: number;
  height: number;
  pixels: Uint8Array;
}

/** x_b = scale * x_a' + dx, y_b = scale * y_a + dy, where x_a' is x_a mirrored when `mirrored`. */
interface Placement {
  scale: number;
  dx: number;
  dy: number;
}

/**
 * The image as a grey copy of at most PIXEL_SIDE px in Rec. 601 luma, the fingerprints' grey
 * (luma.ts); `ImageRejected` when it is not an image. A JPEG of at least 8 * PIXEL_SIDE px on its
 * longer side is area-averaged from its 1/8-scale luma grid, read in the JPEG reader's worker
 * threads (7.3 CPU ms for a 1600 px photograph of the copies corpus, where libvips took 11.3, on
 * machine E); anything else is decoded by libvips and its luma taken here, so that both ways give
 * one grey.
 */
export async function greyCopy(bytes: Buffer, maxPixels: number): Promise<Grey> {
  // The header says whether the grid is large enough before the whole file is read for it.
  const header = readImageHeader(bytes);
  const grid = header?.format === 'jpeg' && Math.max(header.width, header.height) >= 8 * PIXEL_SIDE ? jpegLuma(await readJpeg(bytes, maxPixels)) : null;
  if (grid) return areaAveraged(grid);
  try {
    // Twice as large, then area-averaged as the grid's blocks are: the two ways then blur alike
    // (decoded straight to PIXEL_SIDE, a half-size copy of a photograph of boards failed the cells
    // against its original's grid).
    const { data, info } = await sharp(bytes, decodeOptions(maxPixels))
      .resize(2 * PIXEL_SIDE, 2 * PIXEL_SIDE, { fit: 'inside', withoutEnlargement: true })
      .flatten({ background: '#ffffff' })
      .toColourspace('srgb')
      .raw()
      .toBuffer({ resolveWithObject: true });
    if (info.channels !== 3) throw new Error(`expected an RGB raster, got ${info.channels} channels`);
    const window = { left: 0, top: 0, right: info.width, bottom: info.height };
    return areaAveraged({ width: info.width, height: info.height, data: luma(data), window });
  } catch (error) {
    throw decodeFailure(error);
  }
}

/** The raster's image part area-averaged to PIXEL_SIDE px on its longer side (or as it is when smaller), the other in proportion as libvips sizes it. */
function areaAveraged(raster: Raster): Grey {
  const [spanX, spanY] = [raster.window.right - raster.window.left, raster.window.bottom - raster.window.top];
  const scale = Math.min(1, PIXEL_SIDE / Math.max(spanX, spanY));
  const [width, height] = [Math.max(1, Math.round(spanX * scale)), Math.max(1, Math.round(spanY * scale))];
  return { width, height, pixels: rounded(resample(raster, raster.window, width, height)) };
}

function rounded(values: Float64Array): Uint8Array {
  const out = new Uint8Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = Math.round(values[i]);
  return out;
}

/** Grey level at (x, y), bilinear; NaN outside. */
function tap(grey: Grey, x: number, y: number): number {
  return bilinear(grey.pixels, grey.width, grey.height, x - 0.5, y - 0.5);
}

/**
 * What is made of a grey copy once for every check it takes part in (its mirror, its blurred copy):
 * the images port keeps a copy while its picture is checked again and again (local-service.ts).
 */
function madeOnce(make: (grey: Grey) => Grey): (grey: Grey) => Grey {
  const made = new WeakMap<Grey, Grey>();
  return (grey) => {
    let found = made.get(grey);
    if (!found) made.set(grey, (found = make(grey)));
    return found;
  };
}

/** The image mirrored left to right: a mirror image is compared as the picture it shows. */
const mirror = madeOnce((grey) => {
  const pixels = new Uint8Array(grey.pixels.length);
  for (let y = 0; y < grey.height; y++) for (let x = 0; x < grey.width; x++) pixels[y * grey.width + x] = grey.pixels[y * grey.width + grey.width - 1 - x];
  return { ...grey, pixels };
});

/**
 * Pairs of grey levels sampled on a side x side grid over the part of `a` that the placement puts
 * inside `b`, with the grid cell each falls in.
 */
function samples(a: Grey, b: Grey, place: Placement, side: number): { fromA: number[]; fromB: number[]; at: number[] } {
  const [left, top] = [Math.max(0, -place.dx / place.scale), Math.max(0, -place.dy / place.scale)];
  const [right, bottom] = [Math.min(a.width, (b.width - place.dx) / place.scale), Math.min(a.height, (b.height - place.dy) / place.scale)];
  const [fromA, fromB, at] = [[] as number[], [] as number[], [] as number[]];
  if (!(right > left && bottom > top)) return { fromA, fromB, at };
  for (let row = 0; row < side; row++) {
    for (let col = 0; col < side; col++) {
      const x = left + ((col + 0.5) / side) * (right - left);
      const y = top + ((row + 0.5) / side) * (bottom - top);
      const va = tap(a, x, y);
      const vb = tap(b, place.scale * x + place.dx, place.scale * y + place.dy);
      if (Number.isNaN(va) || Number.isNaN(vb) || clipped(va) || clipped(vb)) continue;
      fromA.push(va);
      fromB.push(vb);
      at.push(row * side + col);
    }
  }
  return { fromA, fromB, at };
}

function correlation(x: number[], y: number[]): { r: number; deviation: number } {
  const n = x.length;
  if (n < 2) return { r: 0, deviation: 0 };
  let mx = 0;
  let my = 0;
  for (let i = 0; i < n; i++) {
    mx += x[i];
    my += y[i];
  }
  mx /= n;
  my /= n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    const dx = x[i] - mx;
    const dy = y[i] - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  return { r: sxx > 0 && syy > 0 ? sxy / Math.sqrt(sxx * syy) : 0, deviation: Math.sqrt(sxx / n) };
}

/**
 * Scores a placement of `small` (a crop) inside `big`: the correlation of a side x side grid of
 * samples over all of `small` with `big` there, -1 where the grid leaves `big`. The small side's
 * samples are read once per grid. A grid's columns share their x and its rows their y, so a
 * placement's bilinear taps are set up once per column and row, not per sample: the search scores
 * hundreds of placements a pair, and a 12x12 score takes 2.7 µs against 3.6 (machine E). Each sample
 * is the value tap gives, summed in the same order.
 */
function scorer(small: Grey, big: Grey, side: number): (place: Placement) => number {
  const [xs, ys, values] = [new Float64Array(side), new Float64Array(side), new Float64Array(side * side)];
  for (let k = 0; k < side; k++) {
    xs[k] = (k + 0.5) * (small.width / side);
    ys[k] = (k + 0.5) * (small.height / side);
  }
  let mean = 0;
  for (let i = 0; i < side * side; i++) {
    values[i] = tap(small, xs[i % side], ys[Math.floor(i / side)]);
    mean += values[i] / (side * side);
  }
  let spread = 0;
  for (let i = 0; i < values.length; i++) {
    values[i] -= mean;
    spread += values[i] * values[i];
  }
  const columns = axisTaps(side, big.width);
  const rows = axisTaps(side, big.height);
  const pixels = big.pixels;
  return (place) => {
    if (!columns.place(xs, place.scale, place.dx) || !rows.place(ys, place.scale, place.dy)) return -1;
    let sum = 0;
    let sumSquares = 0;
    let cross = 0;
    for (let row = 0; row < side; row++) {
      const above = rows.first[row] * big.width;
      const below = rows.second[row] * big.width;
      const fy = rows.fraction[row];
      for (let col = 0; col < side; col++) {
        const left = columns.first[col];
        const right = columns.second[col];
        const fx = columns.fraction[col];
        const top = pixels[above + left] * (1 - fx) + pixels[above + right] * fx;
        const bottom = pixels[below + left] * (1 - fx) + pixels[below + right] * fx;
        const v = top * (1 - fy) + bottom * fy;
        sum += v;
        sumSquares += v * v;
        cross += v * values[row * side + col];
      }
    }
    const variance = sumSquares - (sum * sum) / values.length;
    return spread > 0 && variance > 0 ? cross / Math.sqrt(spread * variance) : -1;
  };
}

/**
 * The bilinear taps along one axis of `length` pixels for `count` positions (raster.ts's bilinear,
 * as tap offsets it): the two pixels and the second's weight; `place` sets them for positions
 * scale * p + offset, false when one lies outside the pixel centres.
 */
function axisTaps(count: number, length: number) {
  const [first, second, fraction] = [new Int32Array(count), new Int32Array(count), new Float64Array(count)];
  return {
    first,
    second,
    fraction,
    place(positions: Float64Array, scale: number, offset: number): boolean {
      for (let k = 0; k < count; k++) {
        const at = scale * positions[k] + offset - 0.5;
        if (!(at >= 0 && at <= length - 1)) return false;
        first[k] = Math.floor(at);
        second[k] = Math.min(first[k] + 1, length - 1);
        fraction[k] = at - first[k];
      }
      return true;
    },
  };
}

/** A placement of one image inside the other and its score; `turned` when `b` is placed inside `a`. */
interface Lead {
  place: Placement;
  value: number;
  turned: boolean;
}

/**
 * The coarse search of `small` inside `big`: over the share of `big`'s width it covers (`shares`)
 * and its offset in steps of 4 %, 8x8 samples.
 */
function coarseLeads(small: Grey, big: Grey, shares: number[], turned: boolean): Lead[] {
  const coarse = scorer(small, big, 8);
  const leads: Lead[] = [];
  for (const share of shares) {
    const scale = (share * big.width) / small.width;
    const [spanX, spanY] = [big.width - scale * small.width, big.height - scale * small.height];
    const step = 0.04 * big.width;
    for (let dx = 0; dx <= spanX + step / 2; dx += step) {
      for (let dy = 0; dy <= spanY + step / 2; dy += step) {
        const place = { scale, dx: Math.min(dx, Math.max(0, spanX)), dy: Math.min(dy, Math.max(0, spanY)) };
        leads.push({ place, value: coarse(place), turned });
      }
    }
  }
  return leads;
}

/**
 * A coarse lead moved to the best of each step's 3x3x3 neighbourhood of scale and offset, halving
 * the step (4 %, 2 %, 1 %, then 0.5 %), scored with `fine` (12x12 samples).
 */
function refined(lead: Lead, fine: (place: Placement) => number, bigWidth: number): Lead {
  let best = { ...lead, value: fine(lead.place) };
  for (const step of [0.04, 0.02, 0.01, 0.005]) {
    const around = best.place;
    for (const f of [-1, 0, 1]) {
      for (const ox of [-1, 0, 1]) {
        for (const oy of [-1, 0, 1]) {
          // The centre is the best so far, already scored.
          if (f === 0 && ox === 0 && oy === 0) continue;
          const place = { scale: around.scale * (1 + f * step), dx: around.dx + ox * step * bigWidth, dy: around.dy + oy * step * bigWidth };
          const value = fine(place);
          if (value > best.value) best = { place, value, turned: lead.turned };
        }
      }
    }
  }
  return best;
}

/**
 * The image under a 5x5 box blur, cut at its edges: the search's sparse samples then read the
 * picture's shapes rather than its grain, and a placement a little off still scores near the right one.
 */
const blurred = madeOnce(({ width, height, pixels }) => ({
  width,
  height,
  pixels: boxPass(boxPass(pixels, height, width, 1, width), width, height, width, 1),
}));

/**
 * Each of `lines` lines (`stride` apart, `length` values `step` apart) averaged over the 5 values
 * around each of its values, as many as the line holds there, rounded: a running sum, one value in
 * and one out per step.
 */
function boxPass(source: Uint8Array, lines: number, length: number, step: number, stride: number): Uint8Array {
  const out = new Uint8Array(source.length);
  for (let line = 0; line < lines; line++) {
    const start = line * stride;
    let sum = 0;
    let count = 0;
    for (let i = 0; i < Math.min(2, length); i++, count++) sum += source[start + i * step];
    for (let i = 0; i < length; i++) {
      if (i + 2 < length) {
        sum += source[start + (i + 2) * step];
        count++;
      }
      if (i >= 3) {
        sum -= source[start + (i - 3) * step];
        count--;
      }
      out[start + i * step] = Math.round(sum / count);
    }
  }
  return out;
}

/** The shares of `big`'s width searched for a crop `small` of it: a range for the same shape, one for a cover crop. */
function cropShares(small: Grey, big: Grey): number[] {
  const aspect = small.width / small.height / (big.width / big.height);
  if (Math.abs(aspect - 1) > ASPECT_TOLERANCE) return [Math.min(1, aspect)];
  return Array.from({ length: Math.floor((1 - MIN_CROP) / 0.04 + 1e-9) + 1 }, (_, i) => MIN_CROP + i * 0.04);
}

/**
 * Coarse placements refined: the best few, since a coarse grid can rank a near miss first. They are
 * the best of both ways together: the refinement is most of the search, and the way a crop does not
 * go seldom places a lead among them.
 */
const REFINED = 6;

/**
 * A crop's placement of `a` in `b`: `a` a crop of `b`, or `b` one of `a` (then turned round). The
 * coarse placements of both ways are ranked together and the best refined, on blurred copies.
 */
function findCrop(sharpA: Grey, sharpB: Grey): Placement {
  const [a, b] = [blurred(sharpA), blurred(sharpB)];
  const fine = { inside: scorer(a, b, 12), around: scorer(b, a, 12) };
  const refine = (lead: Lead) => (lead.turned ? refined(lead, fine.around, a.width) : refined(lead, fine.inside, b.width));
  const best = [...coarseLeads(a, b, cropShares(a, b), false), ...coarseLeads(b, a, cropShares(b, a), true)]
    .sort((x, y) => y.value - x.value)
    .slice(0, REFINED)
    .map(refine)
    .reduce((x, y) => (y.value > x.value ? y : x));
  if (!best.turned) return best.place;
  const { scale, dx, dy } = best.place;
  return { scale: 1 / scale, dx: -dx / scale, dy: -dy / scale };
}

/** The pixel rules over the placement: every textured cell correlates, and the brightness follows one line. */
function pixelsAgree(a: Grey, b: Grey, place: Placement): number | null {
  const { fromA, fromB, at } = samples(a, b, place, SAMPLES);
  const group = (per: number) => {
    const groups = Array.from({ length: per * per }, () => ({ a: [] as number[], b: [] as number[] }));
    at.forEach((index, i) => {
      const row = Math.floor(index / SAMPLES);
      const col = index % SAMPLES;
      const g = groups[Math.floor((row * per) / SAMPLES) * per + Math.floor((col * per) / SAMPLES)];
      g.a.push(fromA[i]);
      g.b.push(fromB[i]);
    });
    return groups;
  };
  const cells = group(CELLS)
    .map((cell, index) => ({ index, ...(cell.a.length >= 30 ? correlation(cell.a, cell.b) : { r: 0, deviation: 0 }) }))
    .filter(({ deviation }) => deviation >= FLAT_CELL);
  if (cells.length < MIN_TEXTURED_CELLS || !cells.some(({ index }) => index === CENTRE_CELL)) return null;
  if (cells.some(({ r, deviation }) => r < (deviation < FAINT_CELL ? FAINT_CORRELATION : GEOMETRY_THRESHOLDS.minCellCorrelation))) return null;
  const weakest = Math.min(...cells.map(({ r }) => r));
  const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;
  const means = group(PATCHES)
    .filter((patch) => patch.a.length >= 8)
    .map((patch) => [mean(patch.a), mean(patch.b)]);
  const [centreA, centreB] = [mean(means.map(([x]) => x)), mean(means.map(([, y]) => y))];
  const spread = means.reduce((sum, [x]) => sum + (x - centreA) ** 2, 0);
  const gain = spread > 0 ? means.reduce((sum, [x, y]) => sum + (x - centreA) * (y - centreB), 0) / spread : 0;
  const off = means.filter(([x, y]) => Math.abs(y - centreB - gain * (x - centreA)) > GEOMETRY_THRESHOLDS.patchBrightnessTolerance).length;
  return off / means.length <= GEOMETRY_THRESHOLDS.maxShareOffBrightness ? weakest : null;
}

/** The edits this check can place: the mirror or not, and a crop or the whole image. */
export function parseEdit(edit: string): { mirrored: boolean; crop: boolean } | null {
  const parts = edit.split('+').filter((part) => part !== 'identity');
  if (parts.some((part) => part !== 'hflip' && part !== 'crop')) return null;
  return { mirrored: parts.includes('hflip'), crop: parts.includes('crop') };
}

/**
 * Whether the pixels confirm that `query` is `b` (the reference) under the edit the region hashes named;
 * the match as the geometric check would answer it (the regions the placement gives, the weakest
 * cell correlation, 0 inliers: no keypoints were matched), or null when they do not or the edit is
 * not one this check places (turns, trimmed borders: the geometric check decides those).
 */
export function confirmEdit(query: Grey, b: Grey, edit: string): ConfirmedGeometry | null {
  const parsed = parseEdit(edit);
  if (!parsed) return null;
  const a = parsed.mirrored ? mirror(query) : query;
  const aspect = a.width / a.height / (b.width / b.height);
  if (!parsed.crop && Math.abs(aspect - 1) > ASPECT_TOLERANCE) return null;
  const place = parsed.crop ? findCrop(a, b) : { scale: b.width / a.width, dx: 0, dy: 0 };
  const weakest = pixelsAgree(a, b, place);
  if (weakest === null) return null;
  return { confirmed: true, inliers: 0, inlierShare: 0, mirrored: parsed.mirrored, ...regions(a, b, parsed.mirrored, place), correlation: weakest };
}

/** Each image's part that the other shows, as fractions of it (top-left, top-right, bottom-right, bottom-left). */
function regions(a: Grey, b: Grey, mirrored: boolean, place: Placement) {
  const clamp = (v: number) => Math.min(1, Math.max(0, v));
  // The part of `b` that `a` covers, and back.
  const [bl, bt] = [clamp(place.dx / b.width), clamp(place.dy / b.height)];
  const [br, bb] = [clamp((place.dx + place.scale * a.width) / b.width), clamp((place.dy + place.scale * a.height) / b.height)];
  const back = (x: number, y: number): [number, number] => [
    (x * b.width - place.dx) / place.scale / a.width,
    (y * b.height - place.dy) / place.scale / a.height,
  ];
  const [[al, at], [ar, ab]] = [back(bl, bt), back(br, bb)].map(([x, y]) => [clamp(x), clamp(y)]);
  // The query's own coordinates: a mirror image's left is the reference's right.
  const [left, right] = mirrored ? [1 - ar, 1 - al] : [al, ar];
  const quad = (l: number, t: number, r: number, bo: number): [number, number][] => [
    [l, t],
    [r, t],
    [r, bo],
    [l, bo],
  ];
  return {
    regionA: quad(left, at, right, ab),
    regionB: quad(bl, bt, br, bb),
    coverageA: (right - left) * (ab - at),
    coverageB: (br - bl) * (bb - bt),
  };
}
