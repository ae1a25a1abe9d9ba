import { computeFingerprints } from '../../lib/images/fingerprint.js';
import { readFileSync } from 'node:fs';
import sharp, { type Sharp } from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { type Fingerprints, RobustIndex, matchFingerprints } from '../../lib/images/robust.js';

/**
 * Different photographs given the same frame, logo, caption bar, phone chrome or letterbox must
 * not match each other: shared content is where rights tools report their false positives, and a
 * false match flags an innocent submission as high risk.
 *
 * The photographs (48 today): each fixture photo cut into 12 tiles that do not overlap (a tile
 * shares no pixel with another), every other one blurred into the low-texture kind that shared
 * content dominates most easily, keeping the tiles with texture (MIN_PHOTO_STDEV). Each of the 12
 * kinds of shared content is checked over 48 x 47 ordered pairs with it on both sides and again
 * with it on the query only.
 */
const fixture = (name: string) => readFileSync(new URL(`../fixtures/images/${name}`, import.meta.url));
const SOURCES = ['astronaut.png', 'camera.png', 'chelsea.png', 'coffee.png', 'rocket.jpg'];
const THRESHOLD = 0.9;
const [W, H] = [400, 300];

/**
 * Grey-level standard deviation below which a tile is a patch of sky or wall rather than a
 * photograph: two such patches under the same logo or app chrome are the same picture to any
 * global fingerprint (the SPEC pHash included), and only the geometric check can tell them apart.
 */
const MIN_PHOTO_STDEV = 20;

async function photographs(): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for (const name of SOURCES) {
    const bytes = fixture(name);
    const { width, height } = await sharp(bytes).metadata();
    const [tw, th] = [Math.floor(width! / 4), Math.floor(height! / 3)];
    for (let i = 0; i < 12; i++) {
      let tile = sharp(bytes)
        .extract({ left: (i % 4) * tw, top: Math.floor(i / 4) * th, width: tw, height: th })
        .resize(W, H, { fit: 'fill' });
      if (i % 2 === 1) tile = sharp(await tile.png().toBuffer()).blur(3);
      const photo = await tile.removeAlpha().png().toBuffer();
      const { channels } = await sharp(photo).greyscale().stats();
      if (channels[0].stdev >= MIN_PHOTO_STDEV) out.push(photo);
    }
  }
  return out;
}

const svg = (width: number, height: number, body: string) =>
  Buffer.from(`<svg width="${width}" height="${height}" xmlns="http://www.w3.org/2000/svg">${body}</svg>`);
const jpeg = (image: Sharp) => image.jpeg({ quality: 90 }).toBuffer();
const framed = (share: number, background: string) => (photo: Buffer) => {
  const [x, y] = [Math.round(W * share), Math.round(H * share)];
  return jpeg(sharp(photo).extend({ left: x, right: x, top: y, bottom: y, background }));
};
const LOGO = svg(
  90,
  90,
  '<circle cx="45" cy="45" r="40" fill="#e02020"/><text x="45" y="55" font-size="28" text-anchor="middle" fill="white" font-family="sans-serif">TV</text>',
);
const CAPTION = svg(
  W,
  54,
  `<rect width="${W}" height="54" fill="#101830"/><text x="16" y="36" font-size="26" fill="white" font-family="sans-serif">BREAKING · 속보 · news</text>`,
);
const PHONE = { width: 360, height: 760 };
const STATUS = svg(
  PHONE.width,
  48,
  `<rect width="${PHONE.width}" height="48" fill="#ffffff"/><text x="14" y="32" font-size="20" font-family="sans-serif">9:41</text><rect x="290" y="18" width="50" height="16" rx="3" fill="#000"/><text x="70" y="32" font-size="18" font-family="sans-serif" fill="#333">@account · Follow</text>`,
);
const NAV = svg(
  PHONE.width,
  120,
  `<rect width="${PHONE.width}" height="120" fill="#ffffff"/><circle cx="40" cy="30" r="12" fill="#222"/><circle cx="90" cy="30" r="12" fill="#222"/><circle cx="140" cy="30" r="12" fill="#222"/><text x="14" y="80" font-size="16" font-family="sans-serif">1,024 likes · view all comments</text><rect x="130" y="100" width="100" height="6" rx="3" fill="#000"/>`,
);

/** The shared content, applied the same way to every photograph. */
const SHARED: { name: string; apply: (photo: Buffer) => Promise<Buffer> }[] = [
  { name: 'white frame 3 %', apply: framed(0.03, '#ffffff') },
  { name: 'white frame 5 %', apply: framed(0.05, '#ffffff') },
  { name: 'white frame 10 %', apply: framed(0.1, '#ffffff') },
  { name: 'white frame 20 %', apply: framed(0.2, '#ffffff') },
  { name: 'black frame 3 %', apply: framed(0.03, '#000000') },
  { name: 'black frame 10 %', apply: framed(0.1, '#000000') },
  { name: 'black frame 20 %', apply: framed(0.2, '#000000') },
  { name: 'corner logo', apply: (p) => jpeg(sharp(p).composite([{ input: LOGO, left: W - 100, top: H - 100 }])) },
  { name: 'caption bar', apply: (p) => jpeg(sharp(p).composite([{ input: CAPTION, left: 0, top: H - 54 }])) },
  {
    name: 'phone screenshot',
    apply: async (p) =>
      jpeg(
        sharp({ create: { ...PHONE, channels: 3, background: '#ffffff' } }).composite([
          { input: STATUS, left: 0, top: 0 },
          { input: await sharp(p).resize(PHONE.width, 270).toBuffer(), left: 0, top: 120 },
          { input: NAV, left: 0, top: 400 },
        ]),
      ),
  },
  {
    name: 'letterbox 4:3 → 1:1',
    apply: (p) => jpeg(sharp(p).resize(W, W, { fit: 'contain', background: '#000000' })),
  },
  {
    name: 'pillarbox 4:3 → 16:9',
    apply: (p) => jpeg(sharp(p).resize(Math.round((H * 16) / 9), H, { fit: 'contain', background: '#000000' })),
  },
];

const plain: Fingerprints[] = [];
const shared = new Map<string, Fingerprints[]>();

beforeAll(async () => {
  const photos = await photographs();
  for (const photo of photos) plain.push(await computeFingerprints(photo));
  for (const { name, apply } of SHARED) shared.set(name, await Promise.all(photos.map(async (p) => computeFingerprints(await apply(p)))));
}, 120_000);

describe('different photographs that share a frame, logo, caption, chrome or letterbox', () => {
  it('are at least 40 photographs that do not match each other to begin with', () => {
    expect(plain.length).toBeGreaterThanOrEqual(40);
    for (let i = 0; i < plain.length; i++)
      for (let j = 0; j < plain.length; j++) {
        if (i !== j) expect(matchFingerprints(plain[i], plain[j], THRESHOLD), `${i} vs ${j}`).toBeNull();
      }
  });

  it.each(SHARED.map(({ name }) => name))('%s: no two different photographs match in pairs', (name) => {
    const set = shared.get(name)!;
    const falseMatches: string[] = [];
    for (let i = 0; i < set.length; i++)
      for (let j = 0; j < set.length; j++) {
        if (i === j) continue;
        const found = matchFingerprints(set[i], set[j], THRESHOLD);
        if (found) falseMatches.push(`${i}~${j} ${found.transform} ${found.similarity.toFixed(2)}`);
        // Nor does one with the shared content match another photograph without it.
        const acrossPlain = matchFingerprints(set[i], plain[j], THRESHOLD);
        if (acrossPlain) falseMatches.push(`${i}~plain ${j} ${acrossPlain.transform}`);
      }
    expect(falseMatches).toEqual([]);
  });

  it.each(SHARED.map(({ name }) => name))('%s: the index returns only the photograph itself', (name) => {
    const set = shared.get(name)!;
    const index = new RobustIndex<number>();
    set.forEach((fingerprints, i) => index.add(i, fingerprints));
    for (let i = 0; i < set.length; i++) {
      expect(
        index.query(set[i], THRESHOLD).map((m) => m.key),
        `photo ${i}`,
      ).toEqual([i]);
    }
  });

  it('still finds each photograph from its framed, captioned or letterboxed copy', () => {
    // Shared content must not hide the photo's own copy: the frames and letterboxes are trimmed.
    for (const name of ['white frame 5 %', 'white frame 20 %', 'black frame 10 %', 'letterbox 4:3 → 1:1']) {
      const set = shared.get(name)!;
      const found = set.filter((copy, i) => matchFingerprints(copy, plain[i], THRESHOLD) !== null).length;
      expect(found, name).toBe(set.length);
    }
  });
});
