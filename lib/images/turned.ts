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

/** The sample's grey level at (x, y) in sample pixels (pixel centres at whole numbers), bilinear; NaN outside the sample. */
const read = (data: ArrayLike<number>, x: number, y: number): number => bilinear(data, SAMPLE_SIDE, SAMPLE_SIDE, x, y);

/** What a probe of the turned view reads: the grey level at a point, or the gradient there. */
const GREY = 0;
const GRADIENT = 1;
// The reads of each kind of probe, as offsets in sample pixels from the point: a grey level reads
// the point (index 0), a gradient its right, left, lower and upper neighbours (1-4).
const READ_X = [0, 1, -1, 0, 0];
const READ_Y = [0, 0, 0, 1, -1];
const reads = new Float64Array(5);

/** The picture a turn by `degrees` leaves on a canvas of this aspect, or null when none fits. */
function pictureOf(aspect: number, degrees: number): Turn | null {
  const [c, s] = [Math.cos((degrees * Math.PI) / 180), Math.abs(Math.sin((degrees * Math.PI) / 180))];
  const det = c * c - s * s;
  const [width, height] = [(c * aspect - s) / det, (c - s * aspect) / det];
  return width > 0.2 && height > 0.2 ? { degrees, width, height, aspect } : null;
}

/**
 * The sample as seen from the upright picture under a turn: where a point of the picture (u, v from
 * its centre, canvas-height units) lies in the sample, and what a probe reads there. The edge
 * searches probe thousands of points an image.
 *
 * Every value here is a plain number, NaN outside the sample, never null, and each search's loop
 * calls `probe` at as few places as it can (one loop over a point's probes), so that V8 inlines
 * `probe` and `read` there: a number returned from a call V8 does not inline is boxed on the heap.
 * When the reads went through several small functions, more than V8's inlining budget, every
 * value came back boxed (decisions/0067 gives the garbage and time before and after).
 */
class TurnedView {
  private readonly data: ArrayLike<number>;
  private readonly aspect: number;
  private readonly cos: number;
  private readonly sin: number;

  constructor(sample: Raster, turn: Turn) {
    const t = (turn.degrees * Math.PI) / 180;
    this.data = sample.data;
    this.aspect = turn.aspect;
    this.cos = Math.cos(t);
    this.sin = Math.sin(t);
  }

  x(u: number, v: number): number {
    return ((this.aspect / 2 + u * this.cos - v * this.sin) / this.aspect) * SAMPLE_SIDE - 0.5;
  }

  y(u: number, v: number): number {
    return (0.5 + u * this.sin + v * this.cos) * SAMPLE_SIDE - 0.5;
  }

  /** The grey level (GREY) or the grey-level change over two sample pixels across and along (GRADIENT) at (u, v). */
  probe(u: number, v: number, kind: typeof GREY | typeof GRADIENT): number {
    const x = this.x(u, v);
    const y = this.y(u, v);
    const end = kind === GREY ? 1 : 5;
    for (let i = kind === GREY ? 0 : 1; i < end; i++) reads[i] = read(this.data, x + READ_X[i]!, y + READ_Y[i]!);
    return kind === GREY ? reads[0]! : Math.abs(reads[1]! - reads[2]!) + Math.abs(reads[3]! - reads[4]!);
  }
}

/**
 * Along the picture's four edges: the share of points that look like the picture's edge on a plain
 * canvas, or 0 as soon as the share cannot reach `atLeast` (most angles of most pictures, whose
 * canvas is no canvas: the texture outside is read first); and the mean step across the edges
 * (capped, so that a few strong edges of the picture's own do not decide).
 */
function edgeSteps(sample: Raster, turn: Turn, atLeast = 0, offset: number = SEARCH.edge.offset): { share: number; mean: number } {
  const view = new TurnedView(sample, turn);
  // One sample pixel in canvas-height units (the sample squeezes the width by the aspect).
  const d = offset / SAMPLE_SIDE;
  const allowedMisses = EDGE_POINTS * (1 - atLeast);
  let steps = 0;
  let points = 0;
  let total = 0;
  placeEdgePoints(turn);
  for (let i = 0; i < EDGE_POINTS; i++) {
    const u = edgeU[i]!;
    const v = edgeV[i]!;
    const nu = normalU[i]!;
    const nv = normalV[i]!;
    // Texture in the canvas just outside the picture, the grey levels just inside and outside
    // its edge (one loop: see TurnedView), and only when it decides, texture just inside.
    for (let j = 0; j < ACROSS.length; j++) across[j] = view.probe(u + ACROSS[j]! * nu * d, v + ACROSS[j]! * nv * d, j === 0 ? GRADIENT : GREY);
    const beyond = across[0]!;
    const inside = across[1]!;
    const outside = across[2]!;
    if (Number.isNaN(beyond) || Number.isNaN(inside) || Number.isNaN(outside)) continue;
    points++;
    const step = Math.abs(inside - outside);
    total += Math.min(step, SEARCH.edge.stepCap);
    if (beyond < SEARCH.edge.plainCanvas && (step > SEARCH.edge.step || textured(view.probe(u - 3 * nu * d, v - 3 * nv * d, GRADIENT), beyond))) steps++;
    else if (points - steps > allowedMisses) return { share: 0, mean: 0 };
  }
  return points < SEARCH.edge.points ? { share: 0, mean: 0 } : { share: steps / points, mean: total / points };
}

/** Where edgeSteps probes across an edge, in steps of its outward normal: beyond it (a gradient), just inside and just outside (grey levels). */
const ACROSS = [3, -1, 1];
const across = new Float64Array(3);

/** Outside, then inside an edge, in steps of its outward normal. */
const SIDES = [1, -1];

/** Whether the picture just inside (its gradient, NaN outside the sample) is more textured than the canvas beyond by SEARCH.edge.texture. */
const textured = (inside: number, beyond: number) => (Number.isNaN(inside) ? 0 : inside) > beyond + SEARCH.edge.texture;

/**
 * How much more textured the picture is just inside its edges than the canvas just outside them
 * (mean gradients, each capped at SEARCH.blurred.textureCap, plus one grey level per point so
 * that two plain sides give 1): a canvas filled with a blurred copy of the picture is smoother than
 * the picture.
 * Every other edge point is read.
 */
function textureRatio(sample: Raster, turn: Turn): number {
  const view = new TurnedView(sample, turn);
  const d = (3 * SEARCH.edge.offset) / SAMPLE_SIDE;
  let within = 0;
  let beyond = 0;
  let points = 0;
  placeEdgePoints(turn);
  for (let i = 0; i < EDGE_POINTS; i += 2) {
    const u = edgeU[i]!;
    const v = edgeV[i]!;
    const nu = normalU[i]!;
    const nv = normalV[i]!;
    // Outside, then inside: one loop (see TurnedView).
    for (let j = 0; j < 2; j++) across[j] = view.probe(u + SIDES[j]! * nu * d, v + SIDES[j]! * nv * d, GRADIENT);
    const outside = across[0]!;
    const inside = across[1]!;
    if (Number.isNaN(outside) || Number.isNaN(inside)) continue;
    points++;
    within += Math.min(inside, SEARCH.blurred.textureCap);
    beyond += Math.min(outside, SEARCH.blurred.textureCap);
  }
  return points < SEARCH.edge.points / 2 ? 0 : within / (beyond + points);
}

/** The points the edge searches read, SEARCH.edge.points along each of the picture's four edges. */
const EDGE_POINTS = 4 * SEARCH.edge.points;
// Each point's place (u, v) and its edge's outward normal (nu, nv), for the turn placeEdgePoints
// was last given: numbers in arrays, so that the searches' loops allocate nothing.
const edgeU = new Float64Array(EDGE_POINTS);
const edgeV = new Float64Array(EDGE_POINTS);
const normalU = new Float64Array(EDGE_POINTS);
const normalV = new Float64Array(EDGE_POINTS);

/**
 * Places the edge points of the picture a turn leaves: along its four edges clockwise from the
 * top-left corner (so the outward normal of an edge running (du, dv) is (dv, -du)), from 5 % to 95 %
 * of each edge's length.
 */
function placeEdgePoints(turn: Turn): void {
  const w = turn.width / 2;
  const h = turn.height / 2;
  const edges = [-w, -h, 2 * w, 0, w, -h, 0, 2 * h, w, h, -2 * w, 0, -w, h, 0, -2 * h];
  for (let edge = 0; edge < 4; edge++) {
    const u0 = edges[4 * edge]!;
    const v0 = edges[4 * edge + 1]!;
    const du = edges[4 * edge + 2]!;
    const dv = edges[4 * edge + 3]!;
    const length = Math.hypot(du, dv);
    for (let k = 0; k < SEARCH.edge.points; k++) {
      const t = 0.05 + (0.9 * (k + 0.5)) / SEARCH.edge.points;
      const i = edge * SEARCH.edge.points + k;
      edgeU[i] = u0 + du * t;
      edgeV[i] = v0 + dv * t;
      normalU[i] = dv / length;
      normalV[i] = -du / length;
    }
  }
}

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
  const view = new TurnedView(sample, turn);
  const data = new Float64Array(S * S);
  for (let y = 0; y < S; y++) {
    for (let x = 0; x < S; x++) {
      const u = ((x + 0.5) / S - 0.5) * turn.width;
      const v = ((y + 0.5) / S - 0.5) * turn.height;
      const sx = view.x(u, v);
      const sy = view.y(u, v);
      // Clamped into the sample, so always a number.
      data[y * S + x] = read(sample.data, Math.min(S - 1, Math.max(0, sx)), Math.min(S - 1, Math.max(0, sy)));
    }
  }
  return { width: S, height: S, data, window: { left: 0, top: 0, right: S, bottom: S } };
}
