/**
 * Builds the robust-matching evaluation set into outputs/eval-set/ from photographs that ship in
 * Debian packages (and the repository's fixture photos): each original, downscaled once, plus one
 * file per transform. Nothing here is committed; the set is rebuilt from the installed packages.
 *
 *   apt-get install plasma-workspace-wallpapers mate-backgrounds lomiri-wallpapers-16.04 lomiri-wallpapers-20.04
 *   npx tsx bench/eval-set.ts
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp, { type Sharp } from 'sharp';
import { coverBox } from '../test/helpers/geometry-transforms.js';

export interface EvalPhoto {
  id: string;
  /** Debian package the photograph ships in, or `fixtures` for the repository's own test photos. */
  source: string;
  file: string;
}

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const EVAL_SET_DIR = path.join(ROOT, 'outputs', 'eval-set');

const plasma = (name: string, size = '1920x1080') => ({
  id: `plasma-${name}`,
  source: 'plasma-workspace-wallpapers',
  file: `/usr/share/wallpapers/${name}/contents/images/${size}.jpg`,
});
const mate = (name: string) => ({
  id: `mate-${name}`,
  source: 'mate-backgrounds',
  file: `/usr/share/backgrounds/mate/nature/${name}.jpg`,
});
const lomiri = (name: string, source = 'lomiri-wallpapers-16.04') => ({
  id: `lomiri-${name.split('_by_')[0]}`,
  source,
  file: `/usr/share/backgrounds/${name}.jpg`,
});
const fixture = (name: string) => ({
  id: `fixture-${name.replace(/\.\w+$/, '')}`,
  source: 'fixtures',
  file: path.join(ROOT, 'test', 'fixtures', 'images', name),
});

/**
 * Only photographs: the packages' drawings, renders, gradients and logos are left out, because a
 * copy-detection benchmark on synthetic art would say little about submitted photos.
 */
export const EVAL_PHOTOS: EvalPhoto[] = [
  ...['astronaut.png', 'camera.png', 'chelsea.png', 'coffee.png', 'rocket.jpg'].map(fixture),
  ...['BytheWater', 'ColdRipple', 'DarkestHour', 'EveningGlow', 'FallenLeaf', 'Grey', 'OneStandsOut', 'Path', 'summer_1am', 'Kite'].map((n) => plasma(n)),
  plasma('ColorfulCups', '2560x1600'),
  ...['Aqua', 'Blinds', 'Dune', 'FreshFlower', 'Garden', 'GreenMeadow', 'LadyBird', 'RainDrops', 'Storm', 'TwoWings', 'Wood', 'YellowFlower'].map(mate),
  ...[
    'Bridge_by_Sander_Klootwijk',
    'Dragonfly_by_Bolly',
    'Picture_0B_by_freespace',
    'Picture_1A_by_freespace',
    'Wine_by_Jakkub_Mede',
    'aitzgorri_by_Aitzol_Berasategi',
    'free_by_Peter_Nerlich',
    'friends_by_Aitzol_Berasategi',
    'greentock_by_Peter_Nerlich',
    'life_by_Aitzol_Berasategi',
    'picosdeeuropa_by_Aitzol_Berasategi',
    'seeding_by_Clements_Engelhardt',
    'sunset_by_Aitzol_Berasategi',
  ].map((n) => lomiri(n)),
  lomiri('Kleiber_by_Lukas_Baubkus', 'lomiri-wallpapers-20.04'),
];

/**
 * The geometric check's clean hold-out (bench/geometry.ts only): photographs nobody tuned a
 * threshold on, from a package the robust-recall set does not use (`apt-get install opencv-doc`).
 * One of each stereo or sequence pair (aero, aloe, basketball, leuven, rubberwhale) and only the
 * original of ela_*, so that no two fresh photographs show the same scene; HappyFish (a drawing) and
 * smarties (a render) are left out. Built into its own folder by buildEvalSet(FRESH_SET_DIR, FRESH_PHOTOS).
 */
export const FRESH_SET_DIR = path.join(ROOT, 'outputs', 'eval-set-fresh');
export const FRESH_PHOTOS: EvalPhoto[] = [
  'aero1.jpg',
  'aloeL.jpg',
  'apple.jpg',
  'baboon.jpg',
  'basketball1.png',
  'box_in_scene.png',
  'building.jpg',
  'butterfly.jpg',
  'ela_original.jpg',
  'fruits.jpg',
  'graf1.png',
  'home.jpg',
  'leuvenA.jpg',
  'messi5.jpg',
  'orange.jpg',
  'rubberwhale1.png',
  'squirrel_cls.jpg',
  'stuff.jpg',
  'sudoku.png',
].map((name) => ({
  id: `opencv-${name.replace(/\.\w+$/, '')}`,
  source: 'opencv-doc',
  file: `/usr/share/doc/opencv-doc/examples/data/${name}`,
}));

/**
 * A second clean hold-out (bench/geometry.ts only), chosen after the near-miss retry took all the
 * reference's keypoints as well: the photographs of scikit-image's sample data
 * (`apt-get install python3-skimage`) that the fixtures do not already hold, and no drawing,
 * synthetic image or picture under 300 px (microaneurysms); one of the motorcycle stereo pair.
 * Many are hard on purpose: textures (brick, grass, gravel), microscopy, a motion-blurred clock,
 * text on paper. Built into its own folder by buildEvalSet(SKIMAGE_SET_DIR, SKIMAGE_PHOTOS).
 */
export const SKIMAGE_SET_DIR = path.join(ROOT, 'outputs', 'eval-set-skimage');
export const SKIMAGE_PHOTOS: EvalPhoto[] = [
  'brick.png',
  'cell.png',
  'clock_motion.png',
  'coins.png',
  'grass.png',
  'gravel.png',
  'hubble_deep_field.jpg',
  'ihc.png',
  'moon.png',
  'motorcycle_left.png',
  'page.png',
  'retina.jpg',
  'text.png',
].map((name) => ({
  id: `skimage-${name.replace(/\.\w+$/, '')}`,
  source: 'python3-skimage',
  file: `/usr/lib/python3/dist-packages/skimage/data/${name}`,
}));

export interface Transform {
  name: string;
  /** Whether the issue sets a recall target for it (the others are reported for information). */
  target: number | null;
  apply: (original: Buffer, width: number, height: number, index: number) => Promise<Buffer>;
}

const jpeg = (image: Sharp) => image.jpeg({ quality: 90 }).toBuffer();
const cropBox = (width: number, height: number, left: number, top: number, right: number, bottom: number) => {
  const x = Math.round(width * left);
  const y = Math.round(height * top);
  return { left: x, top: y, width: Math.round(width * (1 - right)) - x, height: Math.round(height * (1 - bottom)) - y };
};
const watermark = (width: number, height: number) =>
  Buffer.from(
    `<svg width="${width}" height="${height}"><text x="50%" y="90%" text-anchor="middle" font-family="sans-serif" font-size="${Math.round(height / 12)}" fill="white" fill-opacity="0.6">© stock photo</text></svg>`,
  );

export const TRANSFORMS: Transform[] = [
  { name: 'jpeg_q50', target: 1, apply: (o) => sharp(o).jpeg({ quality: 50 }).toBuffer() },
  { name: 'half_size', target: 1, apply: (o, w) => jpeg(sharp(o).resize(Math.round(w / 2))) },
  { name: 'brightness_15', target: 1, apply: (o) => jpeg(sharp(o).modulate({ brightness: 1.15 })) },
  { name: 'blur', target: 1, apply: (o) => jpeg(sharp(o).blur(2)) },
  { name: 'grayscale', target: 1, apply: (o) => jpeg(sharp(o).greyscale()) },
  { name: 'watermark', target: 1, apply: (o, w, h) => jpeg(sharp(o).composite([{ input: watermark(w, h) }])) },
  { name: 'hflip', target: 0.99, apply: (o) => jpeg(sharp(o).flop()) },
  { name: 'vflip', target: 0.99, apply: (o) => jpeg(sharp(o).flip()) },
  { name: 'rot90', target: 0.99, apply: (o) => jpeg(sharp(o).rotate(90)) },
  { name: 'rot180', target: 0.99, apply: (o) => jpeg(sharp(o).rotate(180)) },
  { name: 'rot270', target: 0.99, apply: (o) => jpeg(sharp(o).rotate(270)) },
  { name: 'crop_5', target: 0.8, apply: (o, w, h) => jpeg(sharp(o).extract(cropBox(w, h, 0.05, 0.05, 0.05, 0.05))) },
  { name: 'crop_10', target: 0.8, apply: (o, w, h) => jpeg(sharp(o).extract(cropBox(w, h, 0.1, 0.1, 0.1, 0.1))) },
  {
    // 10 % off two adjacent sides; which corner survives rotates with the photo's index.
    name: 'crop_10_corner',
    target: 0.8,
    apply: (o, w, h, i) => {
      const [left, top] = [
        [0.1, 0.1],
        [0, 0.1],
        [0, 0],
        [0.1, 0],
      ][i % 4];
      return jpeg(sharp(o).extract(cropBox(w, h, left, top, 0.1 - left, 0.1 - top)));
    },
  },
  {
    name: 'pad_20',
    target: 0.8,
    apply: (o, w, h) => {
      const [x, y] = [Math.round(w * 0.2), Math.round(h * 0.2)];
      return jpeg(sharp(o).extend({ left: x, right: x, top: y, bottom: y, background: '#000000' }));
    },
  },
  {
    name: 'border_5_white',
    target: 0.8,
    apply: (o, w, h) => {
      const [x, y] = [Math.round(w * 0.05), Math.round(h * 0.05)];
      return jpeg(sharp(o).extend({ left: x, right: x, top: y, bottom: y, background: '#ffffff' }));
    },
  },
  // Reported for information, no target in the issue.
  {
    name: 'crop_random_10',
    target: null,
    apply: (o, w, h, i) => {
      const side = (k: number) => ((i * 7919 + k * 104729) % 101) / 1000;
      return jpeg(sharp(o).extract(cropBox(w, h, side(1), side(2), side(3), side(4))));
    },
  },
  {
    name: 'hflip_crop_5',
    target: null,
    apply: (o, w, h) =>
      jpeg(
        sharp(o)
          .flop()
          .extract(cropBox(w, h, 0.05, 0.05, 0.05, 0.05)),
      ),
  },
  {
    name: 'rot90_border_5',
    target: null,
    apply: async (o, w, h) => {
      const [x, y] = [Math.round(w * 0.05), Math.round(h * 0.05)];
      return jpeg(sharp(await sharp(o).extend({ left: x, right: x, top: y, bottom: y, background: '#ffffff' }).toBuffer()).rotate(90));
    },
  },
  { name: 'rotate_3deg', target: null, apply: (o) => jpeg(sharp(o).rotate(3, { background: '#000000' })) },
  // Between the crop windows' steps and cover crops to another shape (decision 0061), no target in an issue.
  { name: 'crop_7_5', target: null, apply: (o, w, h) => jpeg(sharp(o).extract(cropBox(w, h, 0.075, 0.075, 0.075, 0.075))) },
  { name: 'cover_1x1', target: null, apply: (o, w, h) => jpeg(sharp(o).extract(coverBox(w, h, 1))) },
  { name: 'cover_4x5', target: null, apply: (o, w, h) => jpeg(sharp(o).extract(coverBox(w, h, 4 / 5))) },
  { name: 'cover_16x9', target: null, apply: (o, w, h) => jpeg(sharp(o).extract(coverBox(w, h, 16 / 9))) },
  // Twice the brightness change: where clipped highlights start to defeat the matching.
  { name: 'brightness_30', target: null, apply: (o) => jpeg(sharp(o).modulate({ brightness: 1.3 })) },
];

export interface EvalImage {
  photo: string;
  transform: string;
  file: string;
}

const ORIGINAL_MAX_SIDE = 1024;

/** Writes originals/<id>.png and variants/<id>/<transform>.jpg; returns the missing packages. */
export async function buildEvalSet(dir = EVAL_SET_DIR, photos = EVAL_PHOTOS): Promise<{ originals: EvalImage[]; variants: EvalImage[]; missing: string[] }> {
  const missing = new Set<string>();
  const originals: EvalImage[] = [];
  const variants: EvalImage[] = [];
  await mkdir(path.join(dir, 'originals'), { recursive: true });
  const available = photos.filter((photo) => {
    if (existsSync(photo.file)) return true;
    missing.add(photo.source);
    return false;
  });
  for (const [index, photo] of available.entries()) {
    // PNG keeps the original free of a second round of JPEG loss before the transforms.
    const original = await sharp(await readFile(photo.file))
      .rotate()
      .resize(ORIGINAL_MAX_SIDE, ORIGINAL_MAX_SIDE, { fit: 'inside', withoutEnlargement: true })
      .flatten({ background: '#ffffff' })
      .png()
      .toBuffer();
    const originalFile = path.join(dir, 'originals', `${photo.id}.png`);
    await writeFile(originalFile, original);
    originals.push({ photo: photo.id, transform: 'original', file: originalFile });
    const { width, height } = await sharp(original).metadata();
    await mkdir(path.join(dir, 'variants', photo.id), { recursive: true });
    for (const transform of TRANSFORMS) {
      const file = path.join(dir, 'variants', photo.id, `${transform.name}.jpg`);
      await writeFile(file, await transform.apply(original, width, height, index));
      variants.push({ photo: photo.id, transform: transform.name, file });
    }
  }
  const manifest = {
    photos: available.map(({ id, source, file }) => ({ id, source, file: source === 'fixtures' ? path.relative(ROOT, file) : file })),
    transforms: TRANSFORMS.map(({ name, target }) => ({ name, target })),
  };
  await writeFile(path.join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2));
  return { originals, variants, missing: [...missing] };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { originals, variants, missing } = await buildEvalSet();
  console.log(`eval set: ${originals.length} photographs, ${variants.length} transformed copies in ${path.relative(ROOT, EVAL_SET_DIR)}/`);
  if (missing.length > 0) console.log(`missing photographs; install them with: apt-get install ${missing.filter((s) => s !== 'fixtures').join(' ')}`);
}
