/**
 * The cells of a collage (issue 29), found on a grey raster before the geometric check: blog
 * collages tile photographs in a grid whose cells meet along straight seams running the whole
 * width or height of the picture (or of one of its parts: a 1+2 layout is one vertical seam, then
 * a horizontal one in one half). A seam is either a plain band (a gutter) or a line across which
 * the pixels jump at most rows while the two sides' along-seam detail does not continue (two
 * photographs side by side); at a half, a third or a quarter of a part, jumps at fewer rows do
 * when one side's detail is much stronger than the other's (a blurred photograph beside a sharp
 * one). Each cell is then checked as its own query: a photograph in a ninth
 * of a collage is a crop of the original there, and crops are found. A photograph whose horizon,
 * door frame or brick joints run straight across it mostly fails the second test (its two sides
 * continue each other's detail) or splits into cells that are crops of itself, which the check's
 * pixel rules treat like any crop.
 */

/** A cell in pixels of the raster it was found on. */
export interface CellBox {
  left: number;
  top: number;
  width: number;
  height: number;
}

export type Cells = { cells: CellBox[] } | { tooMany: number };

/** Cells the check tries one by one; a picture of more tiles (a wall of thumbnails) gets none, and says so. */
export const MAX_CELLS = 16;
/** Shortest side of a cell, in raster pixels (of a 640 px raster): a fiftieth of a 2000x750 wall of tiles is 64x48. */
const MIN_CELL = 40;
/** What makes a line a seam between two cells: a plain band (a gutter), or a jump between two photographs. */
const SEAM = {
  // A plain line: its grey levels within `plainSpread` of its mean at `plainShare` of its pixels.
  plainSpread: 6,
  plainShare: 0.98,
  // A jump across the seam counts at a row when it exceeds `jump` grey levels and `jumpRatio` times
  // the step between pixels as far apart on either side; a seam has such jumps at `jumpShare` of
  // its rows (two photographs side by side: 0.45-0.9; a horizon or a door frame in one photograph
  // can reach 0.8, the next test tells them apart).
  jump: 8,
  jumpRatio: 2,
  jumpShare: 0.45,
  // The along-seam detail on the two sides (grey-level steps from one pixel to the next along the
  // seam, two pixels off it on either side) correlates at most this much across a seam: two
  // different photographs, about 0 (-0.15 to 0.15), or below when resampling and JPEG ring across
  // the seam (the two sides then step against each other: -0.26 to -0.54 at the seams of 2x2 grids
  // without gutter that were left uncut in the tuning half); an edge inside one photograph, more
  // (its detail continues across).
  maxCorrelation: 0.2,
  // Blog collages divide a part into equal cells. At a half, a third or a quarter of a part (within
  // `divisionSlack` lines), the correlation is read again without `endLines` lines at either end of
  // the seam: fitted neighbours of one shape end their white bands at the same rows, and the two
  // steps there made the sides of the tuning half's refused seams correlate 0.2-0.8 (-0.1 to 0.2
  // without them). Anywhere else, or with a slack of 3, it cut cells of the tuning half's collages
  // along a horizon or an upright (a photograph's middle is a half too): such an edge correlates
  // only through the ends of its cell, where a gutter's white bands meet both sides alike.
  divisionSlack: 2,
  endLines: 3,
  // At an equal division, fewer jumps (`weakJumpShare` of the lines) make a seam when the detail
  // along it is `contrast` times as strong on one side as on the other (its mean step over
  // `contrastLines` lines on each side): a blurred, near-plain or darkened photograph beside a
  // sharp one jumps at a third of the lines only, where the plain and the sharp meet in the same
  // grey. Chosen on the tuning half's collages of every layout with their photographs as they are,
  // motion-blurred and darkened: 0.3 and 3 gave 12 more of 1,047 photographs their own cell, lost
  // none, and cut no photograph that is not a collage (decision 0063).
  weakJumpShare: 0.3,
  contrast: 3,
  contrastLines: 3,
} as const;

/** The grey raster seen along one axis, each line (a column, or a row) contiguous: pixel j of line i at i * stride + j. */
interface View {
  data: Uint8Array;
  stride: number;
}

function views(grey: Uint8Array, width: number, height: number): { columns: View; rows: View } {
  const transposed = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) transposed[x * height + y] = grey[y * width + x];
  return { columns: { data: transposed, stride: height }, rows: { data: grey, stride: width } };
}

/** Whether line `i` is plain from `from` to `to` (exclusive). */
function plain({ data, stride }: View, i: number, from: number, to: number): boolean {
  const line = i * stride;
  let sum = 0;
  for (let j = from; j < to; j++) sum += data[line + j];
  const mean = sum / (to - from);
  let off = 0;
  for (let j = from; j < to; j++) if (Math.abs(data[line + j] - mean) > SEAM.plainSpread) off++;
  return off <= (1 - SEAM.plainShare) * (to - from);
}

function correlation(p: number[], q: number[]): number {
  let sp = 0;
  let sq = 0;
  let spp = 0;
  let sqq = 0;
  let spq = 0;
  for (let i = 0; i < p.length; i++) {
    sp += p[i];
    sq += q[i];
    spp += p[i] * p[i];
    sqq += q[i] * q[i];
    spq += p[i] * q[i];
  }
  const n = p.length;
  const variance = (spp - (sp * sp) / n) * (sqq - (sq * sq) / n);
  return variance > 0 ? (spq - (sp * sq) / n) / Math.sqrt(variance) : 0;
}

/**
 * The share of the lines from `from` to `to` at which the pixels jump across the boundary before
 * line b (its two neighbours skipped: resizing blends the seam into them).
 */
function jumpShare({ data, stride }: View, b: number, from: number, to: number): number {
  let jumps = 0;
  for (let j = from; j < to; j++) {
    const near = data[(b - 2) * stride + j];
    const across = data[(b + 1) * stride + j];
    const jump = Math.abs(across - near);
    if (jump > SEAM.jump && jump > SEAM.jumpRatio * Math.max(Math.abs(near - data[(b - 5) * stride + j]), Math.abs(data[(b + 4) * stride + j] - across)))
      jumps++;
  }
  return jumps / (to - from);
}

/** The grey-level steps along line i, from one pixel to the next between `from` and `to`. */
function lineSteps({ data, stride }: View, i: number, from: number, to: number): number[] {
  return Array.from({ length: to - from - 1 }, (_, k) => data[i * stride + from + k + 1] - data[i * stride + from + k]);
}

/** The mean step along line i, from `from` to `to`. */
function stepStrength(view: View, i: number, from: number, to: number): number {
  const steps = lineSteps(view, i, from, to);
  return steps.reduce((sum, step) => sum + Math.abs(step), 0) / steps.length;
}

/**
 * How many times stronger the detail along the seam is on one side of the boundary before line b
 * than on the other; a side's strength is taken as at least half a grey level, so that two plain
 * sides are not told apart by their JPEG noise.
 */
function detailContrast(view: View, b: number, from: number, to: number): number {
  let before = 0;
  let after = 0;
  for (let k = 0; k < SEAM.contrastLines; k++) {
    before += stepStrength(view, b - 2 - k, from, to);
    after += stepStrength(view, b + 1 + k, from, to);
  }
  const strength = (sum: number) => Math.max(0.5, sum / SEAM.contrastLines);
  return strength(Math.max(before, after)) / strength(Math.min(before, after));
}

/** Correlation of the along-seam steps two pixels before and after the boundary before line b. */
function detailCorrelation(view: View, b: number, from: number, to: number): number {
  return correlation(lineSteps(view, b - 2, from, to), lineSteps(view, b + 1, from, to));
}

/** Whether line b is at a half, a third or a quarter of the span [start, end), within SEAM.divisionSlack lines. */
function atEqualDivision(b: number, start: number, end: number): boolean {
  return [2, 3, 4].some((parts) =>
    Array.from({ length: parts - 1 }, (_, k) => start + ((k + 1) * (end - start)) / parts).some((at) => Math.abs(b - at) <= SEAM.divisionSlack),
  );
}

/**
 * Whether the two sides of the boundary before line b do not continue each other's detail. At an
 * equal division of the part, the detail is read again without the lines at its two ends: there
 * the part was trimmed of the white bands of fitted cells, and neighbours of one shape end their
 * bands at the same rows, whose two large steps alone make the sides correlate.
 */
function uncorrelated(view: View, b: number, start: number, end: number, from: number, to: number): boolean {
  if (detailCorrelation(view, b, from, to) <= SEAM.maxCorrelation) return true;
  return atEqualDivision(b, start, end) && detailCorrelation(view, b, from + SEAM.endLines, to - SEAM.endLines) <= SEAM.maxCorrelation;
}

/**
 * The seams across the span [start, end) of lines, each line running [from, to): bands of plain
 * lines inside the span, and boundaries where two photographs meet. Each seam as the lines it
 * takes up, [first, last) (a boundary takes none: first = last).
 */
function seams(view: View, start: number, end: number, from: number, to: number): [number, number][] {
  const found: [number, number][] = [];
  let band = -1;
  for (let i = start; i <= end; i++) {
    const isPlain = i < end && plain(view, i, from, to);
    if (isPlain && band < 0) band = i;
    if (!isPlain && band >= 0) {
      if (band > start && i < end) found.push([band, i]);
      band = -1;
    }
  }
  const shares = new Map<number, number>();
  for (let b = start + MIN_CELL; b <= end - MIN_CELL; b++) shares.set(b, jumpShare(view, b, from, to));
  for (const [b, share] of shares) {
    const jumps =
      share >= SEAM.jumpShare || (share >= SEAM.weakJumpShare && atEqualDivision(b, start, end) && detailContrast(view, b, from, to) >= SEAM.contrast);
    if (!jumps) continue;
    // The strongest boundary of its neighbourhood: resizing spreads one seam over two or three lines.
    let strongest = true;
    for (let d = -3; d <= 3; d++) if (d !== 0 && (shares.get(b + d) ?? 0) > share) strongest = false;
    if (!strongest || !uncorrelated(view, b, start, end, from, to)) continue;
    if (found.some(([first, last]) => b >= first - 3 && b <= last + 3)) continue;
    found.push([b, b]);
  }
  return found.sort((x, y) => x[0] - y[0]);
}

/** The box without its plain margins (a fitted photograph's background, a gutter around the grid). */
function trim(box: CellBox, { columns, rows }: { columns: View; rows: View }): CellBox {
  let [left, right, top, bottom] = [box.left, box.left + box.width, box.top, box.top + box.height];
  while (left < right && plain(columns, left, top, bottom)) left++;
  while (right > left && plain(columns, right - 1, top, bottom)) right--;
  while (top < bottom && plain(rows, top, left, right)) top++;
  while (bottom > top && plain(rows, bottom - 1, left, right)) bottom--;
  return { left, top, width: right - left, height: bottom - top };
}

/**
 * The collage's cells, left to right and top to bottom within each split; none (an empty list)
 * when the picture has no seam, and `tooMany` (a lower bound) past MAX_CELLS.
 */
export function collageCells(grey: Uint8Array, width: number, height: number): Cells {
  const lines = views(grey, width, height);
  const cells: CellBox[] = [];
  const split = (whole: CellBox): boolean => {
    const box = trim(whole, lines);
    if (box.width < MIN_CELL || box.height < MIN_CELL) return true;
    const right = box.left + box.width;
    const bottom = box.top + box.height;
    const across = seams(lines.columns, box.left, right, box.top, bottom);
    const down = across.length > 0 ? [] : seams(lines.rows, box.top, bottom, box.left, right);
    if (across.length === 0 && down.length === 0) {
      cells.push(box);
      return cells.length <= MAX_CELLS;
    }
    const [cuts, end] = across.length > 0 ? [across, right] : [down, bottom];
    let start = across.length > 0 ? box.left : box.top;
    for (const [first, last] of [...cuts, [end, end] as [number, number]]) {
      const part =
        across.length > 0
          ? { left: start, top: box.top, width: first - start, height: box.height }
          : { left: box.left, top: start, width: box.width, height: first - start };
      if (!split(part)) return false;
      start = last;
    }
    return true;
  };
  if (!split({ left: 0, top: 0, width, height })) return { tooMany: cells.length };
  return { cells: cells.length > 1 ? cells : [] };
}
