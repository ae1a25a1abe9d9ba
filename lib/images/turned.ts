import { SAMPLE_SIDE, type Raster } from './raster.js';

/**
 * A picture turned by a few degrees on a larger canvas (sharp's and most editors' rotate: the canvas
 * grows to hold the whole picture, and its corner wedges are filled with black, white or a blurred
 * copy). The region hashes see the canvas, not the picture; finding the turn and turning the
 * picture back upright gives a region that compares with the original's whole image.
 *
 * The canvas fixes the picture's size for every angle (a W x H picture turned by t fills a canvas of
 * W cos t + H sin t by W sin t + H cos t), so each candidate angle places the picture's four edges
 * exactly; the angle whose edges show a step in grey level along most of their length is the turn.
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

/** Turns looked for: under 1° the region hashes still see the picture; over 12° the geometric check finds it. */
const MIN_DEGREES = 1;
const MAX_DEGREES = 12;
const COARSE_STEP = 0.25;
const FINE_STEP = 0.05;
/** Angles whose share of edge points is within this of the best one's are near the true angle. */
const PLATEAU = 0.05;
/** Points read along each edge of the picture, and how far (in sample pixels) either side of it. */
const EDGE_POINTS = 48;
const EDGE_OFFSET = 1.5;
/**
 * An edge point is the picture's edge when the canvas just outside it is plain (a grey-level
 * gradient under PLAIN_CANVAS over two sample pixels each way) and either the grey level steps
 * across the edge (more than EDGE_STEP) or the picture just inside is more textured than the canvas
 * (by EDGE_TEXTURE): the picture's own dark or pale edge on a canvas of the same tone.
 */
const PLAIN_CANVAS = 2.5;
const EDGE_STEP = 6;
const EDGE_TEXTURE = 4;
/** The step counted towards the mean at most (so that a few strong edges of the picture do not decide the angle). */
const STEP_CAP = 64;
/**
 * The share of edge points that must be the picture's edge. Measured on a third of the
 * robust-recall set's photographs turned 2°, 5° and -8°: on black and white canvases at least
 * 0.77 at the true angle; the photographs as they stand at most 0.29 at any angle.
 */
const EDGE_SHARE = 0.5;

/** The sample's grey level at (x, y) in sample pixels, bilinear; null outside the sample. */
function read(sample: Raster, x: number, y: number): number | null {
  const S = SAMPLE_SIDE;
  if (x < 0 || y < 0 || x > S - 1 || y > S - 1) return null;
  const [x0, y0] = [Math.min(S - 2, Math.floor(x)), Math.min(S - 2, Math.floor(y))];
  const [fx, fy] = [x - x0, y - y0];
  const d = sample.data;
  const top = d[y0 * S + x0] * (1 - fx) + d[y0 * S + x0 + 1] * fx;
  const bottom = d[(y0 + 1) * S + x0] * (1 - fx) + d[(y0 + 1) * S + x0 + 1] * fx;
  return top * (1 - fy) + bottom * fy;
}

/** The grey-level change over two sample pixels across and along, at (x, y); null outside the sample. */
function gradient(sample: Raster, x: number, y: number): number | null {
  const [l, r, t, b] = [read(sample, x - 1, y), read(sample, x + 1, y), read(sample, x, y - 1), read(sample, x, y + 1)];
  return l === null || r === null || t === null || b === null ? null : Math.abs(r - l) + Math.abs(b - t);
}

/** The picture a turn by `degrees` leaves on a canvas of this aspect, or null when none fits. */
function pictureOf(aspect: number, degrees: number): Turn | null {
  const [c, s] = [Math.cos((degrees * Math.PI) / 180), Math.abs(Math.sin((degrees * Math.PI) / 180))];
  const det = c * c - s * s;
  const [width, height] = [(c * aspect - s) / det, (c - s * aspect) / det];
  return width > 0.2 && height > 0.2 ? { degrees, width, height, aspect } : null;
}

/** Where a point of the upright picture (u, v from its centre, canvas-height units) lies in the sample (pixel centres at whole numbers). */
function toSample(turn: Turn, u: number, v: number): [number, number] {
  const t = (turn.degrees * Math.PI) / 180;
  const [x, y] = [turn.aspect / 2 + u * Math.cos(t) - v * Math.sin(t), 0.5 + u * Math.sin(t) + v * Math.cos(t)];
  return [(x / turn.aspect) * SAMPLE_SIDE - 0.5, y * SAMPLE_SIDE - 0.5];
}

/**
 * Along the picture's four edges: the share of points that look like the picture's edge on a plain
 * canvas, and the mean step across them (capped, so that a few strong edges do not decide).
 */
function edgeSteps(sample: Raster, turn: Turn): { share: number; mean: number } {
  const [w, h] = [turn.width / 2, turn.height / 2];
  // One sample pixel in canvas-height units (the sample squeezes the width by the aspect).
  const d = EDGE_OFFSET / SAMPLE_SIDE;
  const edges: [number, number, number, number][] = [
    // [u, v of the edge's start, du, dv along it] with the outward normal implied by the side.
    [-w, -h, 2 * w, 0],
    [w, -h, 0, 2 * h],
    [w, h, -2 * w, 0],
    [-w, h, 0, -2 * h],
  ];
  let [steps, points, total] = [0, 0, 0];
  for (const [u0, v0, du, dv] of edges) {
    const length = Math.hypot(du, dv);
    const [nu, nv] = [dv / length, -du / length];
    for (let k = 0; k < EDGE_POINTS; k++) {
      const t = 0.05 + (0.9 * (k + 0.5)) / EDGE_POINTS;
      const [u, v] = [u0 + du * t, v0 + dv * t];
      const [inside, outside] = [read(sample, ...toSample(turn, u - nu * d, v - nv * d)), read(sample, ...toSample(turn, u + nu * d, v + nv * d))];
      // Texture just inside the picture, and in the canvas just outside it.
      const within = gradient(sample, ...toSample(turn, u - 3 * nu * d, v - 3 * nv * d));
      const beyond = gradient(sample, ...toSample(turn, u + 3 * nu * d, v + 3 * nv * d));
      if (inside === null || outside === null || within === null || beyond === null) continue;
      points++;
      const step = Math.abs(inside - outside);
      total += Math.min(step, STEP_CAP);
      const hit = beyond < PLAIN_CANVAS && (step > EDGE_STEP || within > beyond + EDGE_TEXTURE);
      if (hit) steps++;
    }
  }
  return points < EDGE_POINTS ? { share: 0, mean: 0 } : { share: steps / points, mean: total / points };
}

/**
 * The turn of a picture on its canvas, or null when the sample shows none between 1° and 12° either
 * way. The edges look right over a range of angles around the true one (a point a pixel or two off
 * the edge still has the canvas outside it), so the angle is the one with the strongest mean step
 * across the edges within that range.
 */
export function findTurn(sample: Raster, aspect: number): Turn | null {
  const coarse: { degrees: number; share: number }[] = [];
  for (let a = MIN_DEGREES; a <= MAX_DEGREES + 1e-9; a += COARSE_STEP) {
    for (const degrees of [a, -a]) {
      const turn = pictureOf(aspect, degrees);
      if (turn) coarse.push({ degrees, share: edgeSteps(sample, turn).share });
    }
  }
  const best = Math.max(0, ...coarse.map(({ share }) => share));
  if (best < EDGE_SHARE) return null;
  const sign = Math.sign(coarse.find(({ share }) => share === best)!.degrees);
  const range = coarse.filter(({ degrees, share }) => Math.sign(degrees) === sign && share >= best - PLATEAU).map(({ degrees }) => degrees);
  let fine: { turn: Turn; mean: number } | null = null;
  for (let a = Math.min(...range) - COARSE_STEP; a <= Math.max(...range) + COARSE_STEP + 1e-9; a += FINE_STEP) {
    const turn = Math.abs(a) >= MIN_DEGREES - COARSE_STEP ? pictureOf(aspect, a) : null;
    const mean = turn ? edgeSteps(sample, turn).mean : 0;
    if (turn && (!fine || mean > fine.mean)) fine = { turn, mean };
  }
  return fine?.turn ?? null;
}

/** The picture turned back upright, as a square sample like the luma sample of an upright image. */
export function uprightSample(sample: Raster, turn: Turn): Raster {
  const S = SAMPLE_SIDE;
  const data = new Float64Array(S * S);
  for (let y = 0; y < S; y++) {
    for (let x = 0; x < S; x++) {
      const [u, v] = [((x + 0.5) / S - 0.5) * turn.width, ((y + 0.5) / S - 0.5) * turn.height];
      const [sx, sy] = toSample(turn, u, v);
      data[y * S + x] = read(sample, Math.min(S - 1, Math.max(0, sx)), Math.min(S - 1, Math.max(0, sy))) ?? 0;
    }
  }
  return { width: S, height: S, data, window: { left: 0, top: 0, right: S, bottom: S } };
}
