import sharp, { type Sharp } from 'sharp';

/**
 * The edits that only a geometric check can see through (issue 14): random crops of 0-30 % per
 * side, rotations of 3-45 degrees, the photo as 25-50 % of a collage or of a web-page screenshot,
 * and a photo of a screen showing it (mild perspective, bezel, blur, exposure). Shared by
 * test/images/geometry.test.ts and bench/geometry.ts; `random` makes every choice, so a seeded
 * generator gives the same set on every run.
 */
export type Random = () => number;

const jpeg = (image: Sharp, quality = 90) => image.jpeg({ quality }).toBuffer();
const between = (random: Random, low: number, high: number) => low + (high - low) * random();
const size = async (photo: Buffer) => {
  const { width, height } = await sharp(photo).metadata();
  return { width: width!, height: height! };
};
const text = (width: number, height: number, lines: string[], fill = '#222') =>
  Buffer.from(
    `<svg width="${width}" height="${height}" xmlns="http://www.w3.org/2000/svg">${lines
      .map((line, i) => `<text x="12" y="${30 + i * 28}" font-size="18" font-family="sans-serif" fill="${fill}">${line}</text>`)
      .join('')}</svg>`,
  );

/** The centred part of a width x height picture of that shape (width / height), as a cover crop cuts it. */
export function coverBox(width: number, height: number, shape: number): { left: number; top: number; width: number; height: number } {
  const [w, h] = shape < width / height ? [Math.round(height * shape), height] : [width, Math.round(width / shape)];
  return { left: Math.floor((width - w) / 2), top: Math.floor((height - h) / 2), width: w, height: h };
}

export async function randomCrop(photo: Buffer, random: Random): Promise<Buffer> {
  const { width, height } = await size(photo);
  const [left, top, right, bottom] = [0, 1, 2, 3].map(() => between(random, 0, 0.3));
  const x = Math.round(width * left);
  const y = Math.round(height * top);
  return jpeg(sharp(photo).extract({ left: x, top: y, width: Math.round(width * (1 - right)) - x, height: Math.round(height * (1 - bottom)) - y }));
}

/** Turned by 3-45 degrees either way on a black canvas that grows to hold it. */
export async function randomRotation(photo: Buffer, random: Random): Promise<Buffer> {
  const degrees = between(random, 3, 45) * (random() < 0.5 ? -1 : 1);
  return jpeg(sharp(photo).rotate(degrees, { background: '#000000' }));
}

/**
 * A pale copy (`contrast` of the original's, around a light grey) of the photo cut to 512x384,
 * turned by `degrees` on black: different pictures turned by about the same angle match by the
 * region hashes, whose low frequencies the canvas corners dominate (the geometric veto's case).
 */
export async function turnedPale(file: string, contrast: number, degrees: number): Promise<Buffer> {
  // Two pipelines: in one, sharp turns the picture before it resizes, and the cover crop cuts the canvas away.
  const pale = await sharp(file)
    .resize(512, 384, { fit: 'cover' })
    .linear(contrast, 128 * (1 - contrast) + 40)
    .png()
    .toBuffer();
  return jpeg(sharp(pale).rotate(degrees, { background: '#000000' }));
}

/** The photo as `share` (25-50 %) of a collage's area, over a 2x2 grid of the other photos. */
export async function collage(photo: Buffer, others: Buffer[], random: Random): Promise<Buffer> {
  const [W, H] = [1200, 900];
  const share = between(random, 0.25, 0.5);
  const { width, height } = await size(photo);
  const scale = Math.sqrt((share * W * H) / (width * height));
  const [w, h] = [Math.min(W, Math.round(width * scale)), Math.min(H, Math.round(height * scale))];
  const tiles = await Promise.all(
    others.slice(0, 4).map((other) =>
      sharp(other)
        .resize(W / 2, H / 2, { fit: 'cover' })
        .toBuffer(),
    ),
  );
  const placed = await sharp(photo).resize(w, h, { fit: 'fill' }).toBuffer();
  return jpeg(
    sharp({ create: { width: W, height: H, channels: 3, background: '#ffffff' } }).composite([
      ...tiles.map((tile, i) => ({ input: tile, left: (i % 2) * (W / 2), top: Math.floor(i / 2) * (H / 2) })),
      { input: placed, left: Math.round(random() * (W - w)), top: Math.round(random() * (H - h)) },
    ]),
  );
}

/** Blog collage layouts (issue 29): cells as [left, top, width, height] in units of a 4:3 cell (500x375 px unless told). */
export const COLLAGE_LAYOUTS = {
  /** Two by two: the photograph a quarter of the collage. */
  '2x2': [
    [0, 0, 1, 1],
    [1, 0, 1, 1],
    [0, 1, 1, 1],
    [1, 1, 1, 1],
  ],
  /** Three by three: a ninth. */
  '3x3': Array.from({ length: 9 }, (_, i) => [i % 3, Math.floor(i / 3), 1, 1]),
  /** One large cell beside two small ones stacked: two thirds, or a sixth. */
  '1+2': [
    [0, 0, 2, 2],
    [2, 0, 1, 1],
    [2, 1, 1, 1],
  ],
  /** A strip of three side by side: a third. */
  'strip of 3': [
    [0, 0, 1, 1],
    [1, 0, 1, 1],
    [2, 0, 1, 1],
  ],
} satisfies Record<string, number[][]>;
export type CollageLayout = keyof typeof COLLAGE_LAYOUTS;

export interface GridCollageOptions {
  layout: CollageLayout;
  /** Cover: the part outside the cell's shape cut away (most blogs); contain: the whole photograph fitted, on the background. */
  fit: 'cover' | 'contain';
  /** White space between and around the cells, in px (0: cells touch). */
  gutter: number;
  /** Width of one unit cell in px (its height is three quarters of it). */
  cell?: number;
  /** The cell the photo takes, by its place in the layout; random unless told. */
  at?: number;
}

/**
 * The photo in a random cell of a blog collage, the other cells filled with `others` (as many as
 * the layout needs, reused in turn), each cell resized to its 4:3 shape by `fit`; JPEG quality 88.
 */
export async function gridCollage(
  photo: Buffer,
  others: Buffer[],
  random: Random,
  { layout, fit, gutter, cell = 500, at = -1 }: GridCollageOptions,
): Promise<Buffer> {
  const cells = COLLAGE_LAYOUTS[layout];
  const [unitWidth, unitHeight] = [cell, Math.round((cell * 3) / 4)];
  const [W, H] = [Math.max(...cells.map(([x, , w]) => x + w)) * unitWidth + gutter, Math.max(...cells.map(([, y, , h]) => y + h)) * unitHeight + gutter];
  const photoCell = at >= 0 ? at : Math.floor(random() * cells.length);
  const tiles = await Promise.all(
    cells.map(async ([x, y, w, h], i) => {
      const [width, height] = [w * unitWidth - gutter, h * unitHeight - gutter];
      const source = i === photoCell ? photo : others[(i - (i > photoCell ? 1 : 0)) % others.length];
      const input = await sharp(source).resize(width, height, { fit, background: '#ffffff' }).flatten({ background: '#ffffff' }).toBuffer();
      return { input, left: x * unitWidth + gutter, top: y * unitHeight + gutter };
    }),
  );
  return jpeg(sharp({ create: { width: W, height: H, channels: 3, background: '#ffffff' } }).composite(tiles), 88);
}

/** A web page screenshot: header bar, the photo as 25-50 % of the page, and a column of text. */
export async function screenshot(photo: Buffer, random: Random): Promise<Buffer> {
  const [W, H] = [1280, 800];
  const share = between(random, 0.25, 0.5);
  const { width, height } = await size(photo);
  const scale = Math.min(Math.sqrt((share * W * H) / (width * height)), (H - 80) / height, (W - 300) / width);
  const [w, h] = [Math.round(width * scale), Math.round(height * scale)];
  const lines = ['Photo of the day', 'Posted by @account · 3 h', '1,024 likes', 'view all 88 comments', 'Related posts', 'Share · Save · Report'];
  return jpeg(
    sharp({ create: { width: W, height: H, channels: 3, background: '#ffffff' } }).composite([
      { input: Buffer.from(`<svg width="${W}" height="60"><rect width="${W}" height="60" fill="#202830"/></svg>`), left: 0, top: 0 },
      { input: text(W, 60, ['example.test/photos/today    Home  Explore  Profile'], '#ffffff'), left: 0, top: 0 },
      { input: await sharp(photo).resize(w, h, { fit: 'fill' }).toBuffer(), left: 20, top: 70 },
      { input: text(W - w - 40, H - 80, lines), left: w + 40, top: 70 },
    ]),
  );
}

/** Solves the 8 unknowns of the homography taking `from` corners to `to` corners (Gaussian elimination). */
function homography(from: [number, number][], to: [number, number][]): number[] {
  const rows: number[][] = [];
  from.forEach(([x, y], i) => {
    const [u, v] = to[i];
    rows.push([x, y, 1, 0, 0, 0, -u * x, -u * y, u]);
    rows.push([0, 0, 0, x, y, 1, -v * x, -v * y, v]);
  });
  for (let c = 0; c < 8; c++) {
    const pivot = rows.slice(c).reduce((best, row, i) => (Math.abs(row[c]) > Math.abs(rows[best][c]) ? c + i : best), c);
    [rows[c], rows[pivot]] = [rows[pivot], rows[c]];
    for (let r = 0; r < 8; r++) {
      if (r === c) continue;
      const f = rows[r][c] / rows[c][c];
      for (let k = c; k < 9; k++) rows[r][k] -= f * rows[c][k];
    }
  }
  return [...rows.map((row, i) => row[8] / row[i]), 1];
}

/**
 * A photo of a screen showing the photo: a dark bezel, the corners pulled by up to 6 % each (mild
 * perspective), softer focus, a brighter exposure and a lower JPEG quality.
 */
export async function screenPhoto(photo: Buffer, random: Random): Promise<Buffer> {
  const bezel = 0.06;
  const framed = await sharp(photo)
    .extend({ top: 40, bottom: 40, left: 40, right: 40, background: '#181818' })
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const { width, height } = framed.info;
  const corners: [number, number][] = [
    [0, 0],
    [width, 0],
    [width, height],
    [0, height],
  ];
  const moved = corners.map(([x, y]): [number, number] => [
    x + (x === 0 ? 1 : -1) * between(random, 0, bezel) * width,
    y + (y === 0 ? 1 : -1) * between(random, 0, bezel) * height,
  ]);
  // Output pixel -> source pixel.
  const h = homography(moved, corners);
  const out = Buffer.alloc(width * height * 3, 12);
  const source = framed.data;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const w = h[6] * x + h[7] * y + h[8];
      const sx = (h[0] * x + h[1] * y + h[2]) / w;
      const sy = (h[3] * x + h[4] * y + h[5]) / w;
      if (sx < 0 || sy < 0 || sx >= width - 1 || sy >= height - 1) continue;
      const [x0, y0] = [Math.floor(sx), Math.floor(sy)];
      const [fx, fy] = [sx - x0, sy - y0];
      for (let c = 0; c < 3; c++) {
        const at = (px: number, py: number) => source[(py * width + px) * 3 + c];
        const top = at(x0, y0) * (1 - fx) + at(x0 + 1, y0) * fx;
        const bottom = at(x0, y0 + 1) * (1 - fx) + at(x0 + 1, y0 + 1) * fx;
        out[(y * width + x) * 3 + c] = Math.round(top * (1 - fy) + bottom * fy);
      }
    }
  }
  return jpeg(
    sharp(out, { raw: { width, height, channels: 3 } })
      .blur(1)
      .modulate({ brightness: 1.12 })
      .gamma(2.4, 2.2),
    75,
  );
}
