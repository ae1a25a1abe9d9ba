import { bilinear, SAMPLE_SIDE, type Raster } from './raster.js';

/**
 * A picture turned by a few degrees on a larger canvas (sharp's and most editors' rotate: the canvas
 * grows to hold the whole picture, and its corner wedges are filled with black, white or a blurred
 * copy). The region hashes see the canvas, not the picture; finding the turn and turning the
 * picture back upright gives a region that compares with the original's whole image.
 *
 * The canvas fixes the picture's size for every angle (a W x H picture turned by t fills a canvas of
 * W cos t + H sin t by W sin t + H cos t), so each candidate angle places the picture's four edges
 * exactly. A turn is found where, at some angle, the canvas outside those edges is plain along most
 * of their length (black, white), or else much smoother than the picture inside them (a blurred
 * copy); the angle is then the one with the strongest step across the edges.
 */

export interface Turn {
  /** Degrees, clockwise positive (as sharp's rotate). */
  degrees: number;
  /** The picture's width and height, in units of the canvas height. */
  width: number;
  height: number;
  /** The canvas's width over its height. */
  aspect: number;
}

/**
 * What the turn finder looks for and how it decides, by concern: the angles tried, the points read
 * along the picture's edges at each angle, and the canvases of a blurred copy.
 */
const SEARCH = {
  angles: {
    // Under 1° the region hashes still see the picture; over 12° the geometric check finds it.
    min: 1,
    max: 12,
    coarseStep: 0.5,
    fineStep: 0.05,
    // Angles whose share of edge points is within this of the best one's are near the true angle.
    plateau: 0.05,
  },
  edge: {
    // Points read along each edge of the picture, and how far (in sample pixels) either side of it.
    points: 48,
    offset: 1.5,
    // The angle is refined with points half as far from the edge, which places it more closely (on
    // the robust-recall set's tuning half, upright hashes close enough to the original's: 55 -> 61
    // of 63 turns on white, 62 -> 63 on black).
    fineOffset: 0.75,
    // An edge point is the picture's edge when the canvas just outside it is plain (a grey-level
    // gradient under plainCanvas over two sample pixels each way) and either the grey level steps
    // across the edge (more than step) or the picture just inside is more textured than the canvas
    // (by texture): the picture's own dark or pale edge on a canvas of the same tone.
    plainCanvas: 2.5,
    step: 6,
    texture: 4,
    // The step counted towards the mean at most (so that a few strong edges of the picture do not
    // decide the angle).
    stepCap: 64,
    // The share of edge points that must be the picture's edge. Measured on a third of the
    // robust-recall set's photographs turned 2°, 5° and -8°: on black and white canvases at least
    // 0.77 at the true angle; the photographs as they stand at most 0.29 at any angle.
    share: 0.5,
  },
  blurred: {
    // A canvas of a blurred copy: the picture just inside its edges at least this many times as
    // textured as the canvas just outside (textureRatio). On half of the robust-recall set's
    // photographs: blurred canvases 2.24 or more at their best angle, the photographs as they stand
    // 1.57 at most at any angle.
    ratio: 2,
    // Angles whose texture ratio is within this share of the best one's are near the true angle.
    plateau: 0.85,
    textureCap: 40,
  },
} as const;

/** The sample's grey level at (x, y) in sample pixels, bilinear; null outside the sample. */
function read(sample: Raster, x: number, y: number): number | null {
  const value = bilinear(sample.data, SAMPLE_SIDE, SAMPLE_SIDE, x, y);
  return Number.isNaN(value) ? null : value;
}

/** The grey-level change over two sample pixels across and along, at (x, y); null outside the sample. */
function gradient(sample: Raster, x: number, y: number): number | null {
  const l = read(sample, x - 1, y);
  const r = read(sample, x + 1, y);
  const t = read(sample, x, y - 1);
  const b = read(sample, x, y + 1);
  return l === null || r === null || t === null || b === null ? null : Math.abs(r - l) + Math.abs(b - t);
}

/** The picture a turn by `degrees` leaves on a canvas of this aspect, or null when none fits. */
function pictureOf(aspect: number, degrees: number): Turn | null {
  const [c, s] = [Math.cos((degrees * Math.PI) / 180), Math.abs(Math.sin((degrees * Math.PI) / 180))];
  const det = c * c - s * s;
  const [width, height] = [(c * aspect - s) / det, (c - s * aspect) / det];
  return width > 0.2 && height > 0.2 ? { degrees, width, height, aspect } : null;
}

/**
 * The sample as seen from the upright picture under a turn: where a point of the picture (u, v from
 * its centre, canvas-height units) lies in the sample (pixel centres at whole numbers), and the grey
 * level and gradient there. The edge searches read thousands of points an image: the turn's cosine
 * and sine are taken once, and a point's place is two numbers, never a pair to allocate.
 */
function turnedView(sample: Raster, turn: Turn) {
  const t = (turn.degrees * Math.PI) / 180;
  const cos = Math.cos(t);
  const sin = Math.sin(t);
  const x = (u: number, v: number) => ((turn.aspect / 2 + u * cos - v * sin) / turn.aspect) * SAMPLE_SIDE - 0.5;
  const y = (u: number, v: number) => (0.5 + u * sin + v * cos) * SAMPLE_SIDE - 0.5;
  return {
    x,
    y,
    read: (u: number, v: number) => read(sample, x(u, v), y(u, v)),
    gradient: (u: number, v: number) => gradient(sample, x(u, v), y(u, v)),
  };
}

/**
 * Along the picture's four edges: the share of points that look like the picture's edge on a plain
 * canvas, or 0 as soon as the share cannot reach `atLeast` (most angles of most pictures, whose
 * canvas is no canvas: the texture outside is read first); and the mean step across the edges
 * (capped, so that a few strong edges of the picture's own do not decide).
 */
function edgeSteps(sample: Raster, turn: Turn, atLeast = 0, offset: number = SEARCH.edge.offset): { share: number; mean: number } {
  const [w, h] = [turn.width / 2, turn.height / 2];
  const view = turnedView(sample, turn);
  // One sample pixel in canvas-height units (the sample squeezes the width by the aspect).
  const d = offset / SAMPLE_SIDE;
  const allowedMisses = 4 * SEARCH.edge.points * (1 - atLeast);
  let [steps, points, total] = [0, 0, 0];
  for (const [u0, v0, du, dv] of edgesOf(w, h)) {
    const length = Math.hypot(du, dv);
    const [nu, nv] = [dv / length, -du / length];
    for (let k = 0; k < SEARCH.edge.points; k++) {
      const t = 0.05 + (0.9 * (k + 0.5)) / SEARCH.edge.points;
      const u = u0 + du * t;
      const v = v0 + dv * t;
      // Texture in the canvas just outside the picture, the step across its edge, texture just inside.
      const beyond = view.gradient(u + 3 * nu * d, v + 3 * nv * d);
      const inside = view.read(u - nu * d, v - nv * d);
      const outside = view.read(u + nu * d, v + nv * d);
      if (beyond === null || inside === null || outside === null) continue;
      points++;
      const step = Math.abs(inside - outside);
      total += Math.min(step, SEARCH.edge.stepCap);
      if (beyond < SEARCH.edge.plainCanvas && (step > SEARCH.edge.step || (view.gradient(u - 3 * nu * d, v - 3 * nv * d) ?? 0) > beyond + SEARCH.edge.texture))
        steps++;
      else if (points - steps > allowedMisses) return { share: 0, mean: 0 };
    }
  }
  return points < SEARCH.edge.points ? { share: 0, mean: 0 } : { share: steps / points, mean: total / points };
}

/**
 * How much more textured the picture is just inside its edges than the canvas just outside them
 * (mean gradients, each capped at SEARCH.blurred.textureCap, plus one grey level per point so
 * that two plain sides give 1): a canvas filled with a blurred copy of the picture is smoother than
 * the picture.
 * Every other edge point is read.
 */
function textureRatio(sample: Raster, turn: Turn): number {
  const [w, h] = [turn.width / 2, turn.height / 2];
  const view = turnedView(sample, turn);
  const d = (3 * SEARCH.edge.offset) / SAMPLE_SIDE;
  let [within, beyond, points] = [0, 0, 0];
  for (const [u0, v0, du, dv] of edgesOf(w, h)) {
    const length = Math.hypot(du, dv);
    const [nu, nv] = [dv / length, -du / length];
    for (let k = 0; k < SEARCH.edge.points; k += 2) {
      const t = 0.05 + (0.9 * (k + 0.5)) / SEARCH.edge.points;
      const u = u0 + du * t;
      const v = v0 + dv * t;
      const outside = view.gradient(u + nu * d, v + nv * d);
      const inside = view.gradient(u - nu * d, v - nv * d);
      if (outside === null || inside === null) continue;
      points++;
      within += Math.min(inside, SEARCH.blurred.textureCap);
      beyond += Math.min(outside, SEARCH.blurred.textureCap);
    }
  }
  return points < SEARCH.edge.points / 2 ? 0 : within / (beyond + points);
}

/** The picture's four edges as [u, v of the start, du, dv along it], clockwise, so the outward normal is (dv, -du). */
const edgesOf = (w: number, h: number): [number, number, number, number][] => [
  [-w, -h, 2 * w, 0],
  [w, -h, 0, 2 * h],
  [w, h, -2 * w, 0],
  [-w, h, 0, -2 * h],
];

/**
 * The turn of a picture on its canvas, or null when the sample shows none between 1° and 12° either
 * way. The edges look right over a range of angles around the true one (a point a pixel or two off
 * the edge still has the canvas outside it), so the angle is the one with the strongest mean step
 * across the edges within that range.
 */
export function findTurn(sample: Raster, aspect: number): Turn | null {
  const coarse: { degrees: number; share: number; ratio: number }[] = [];
  for (let a = SEARCH.angles.min; a <= SEARCH.angles.max + 1e-9; a += SEARCH.angles.coarseStep) {
    for (const degrees of [a, -a]) {
      const turn = pictureOf(aspect, degrees);
      if (turn) coarse.push({ degrees, share: edgeSteps(sample, turn, SEARCH.edge.share - SEARCH.angles.plateau).share, ratio: textureRatio(sample, turn) });
    }
  }
  const [share, ratio] = [Math.max(0, ...coarse.map((c) => c.share)), Math.max(0, ...coarse.map((c) => c.ratio))];
  // A plain canvas (black, white) first; else a canvas smoother than the picture (a blurred copy).
  const near =
    share >= SEARCH.edge.share
      ? (c: (typeof coarse)[number]) => c.share >= share - SEARCH.angles.plateau
      : ratio >= SEARCH.blurred.ratio
        ? (c: (typeof coarse)[number]) => c.ratio >= ratio * SEARCH.blurred.plateau
        : null;
  if (!near) return null;
  const sign = Math.sign(coarse.find((c) => (share >= SEARCH.edge.share ? c.share === share : c.ratio === ratio))!.degrees);
  const range = coarse.filter((c) => Math.sign(c.degrees) === sign && near(c)).map(({ degrees }) => degrees);
  let fine: { turn: Turn; mean: number } | null = null;
  for (let a = Math.min(...range) - SEARCH.angles.coarseStep; a <= Math.max(...range) + SEARCH.angles.coarseStep + 1e-9; a += SEARCH.angles.fineStep) {
    const turn = Math.abs(a) >= SEARCH.angles.min - SEARCH.angles.coarseStep ? pictureOf(aspect, a) : null;
    const mean = turn ? edgeSteps(sample, turn, 0, SEARCH.edge.fineOffset).mean : 0;
    if (turn && (!fine || mean > fine.mean)) fine = { turn, mean };
  }
  return fine?.turn ?? null;
}

/** The picture turned back upright, as a square sample like the luma sample of an upright image. */
export function uprightSample(sample: Raster, turn: Turn): Raster {
  const S = SAMPLE_SIDE;
  const view = turnedView(sample, turn);
  const data = new Float64Array(S * S);
  for (let y = 0; y < S; y++) {
    for (let x = 0; x < S; x++) {
      const u = ((x + 0.5) / S - 0.5) * turn.width;
      const v = ((y + 0.5) / S - 0.5) * turn.height;
      const sx = view.x(u, v);
      const sy = view.y(u, v);
      data[y * S + x] = read(sample, Math.min(S - 1, Math.max(0, sx)), Math.min(S - 1, Math.max(0, sy))) ?? 0;
    }
  }
  return { width: S, height: S, data, window: { left: 0, top: 0, right: S, bottom: S } };
}
