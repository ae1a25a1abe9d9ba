import { computeFingerprints, phash } from '../../lib/images/fingerprint.js';
import { readFileSync } from 'node:fs';
import sharp, { type Sharp } from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { ImageRejected } from '../../lib/images/rejected.js';
import { textPage } from '../helpers/text-page.js';
import { coverBox } from '../helpers/geometry-transforms.js';
import { similarity } from '../../lib/images/phash.js';
import { type Fingerprints, RobustIndex, SlotQuery, indexEntries, matchFingerprints, matchPair, type SlotProbe } from '../../lib/images/robust.js';
import {
  INVERSE_ORIENTATION,
  ORIENTATIONS,
  type Orientation,
  orientRegion,
  everyOrientation,
  regionHashFromHex,
  regionHashToHex,
} from '../../lib/images/robust-hash.js';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/images/${name}`, import.meta.url));
const PHOTOS = ['astronaut.png', 'camera.png', 'chelsea.png', 'coffee.png', 'rocket.jpg'];
const THRESHOLD = 0.9;

const jpeg = (image: Sharp) => image.jpeg({ quality: 90 }).toBuffer();
const cut = (width: number, height: number, share: number) => {
  const [x, y] = [Math.round(width * share), Math.round(height * share)];
  return { left: x, top: y, width: width - 2 * x, height: height - 2 * y };
};
const frame = (width: number, height: number, share: number, background: string) => {
  const [x, y] = [Math.round(width * share), Math.round(height * share)];
  return { left: x, right: x, top: y, bottom: y, background };
};

/** What was done to the copy, and the match_transform that must be reported for it. */
const COPIES: { change: string; transform: string; make: (original: Buffer, width: number, height: number) => Promise<Buffer> }[] = [
  { change: 'mirrored left-right', transform: 'hflip', make: (o) => jpeg(sharp(o).flop()) },
  { change: 'mirrored top-bottom', transform: 'vflip', make: (o) => jpeg(sharp(o).flip()) },
  { change: 'turned 90° clockwise', transform: 'rot90', make: (o) => jpeg(sharp(o).rotate(90)) },
  { change: 'turned 180°', transform: 'rot180', make: (o) => jpeg(sharp(o).rotate(180)) },
  { change: 'turned 270° clockwise', transform: 'rot270', make: (o) => jpeg(sharp(o).rotate(270)) },
  { change: 'cropped 5 % per side', transform: 'crop', make: (o, w, h) => jpeg(sharp(o).extract(cut(w, h, 0.05))) },
  { change: 'cropped 10 % per side', transform: 'crop', make: (o, w, h) => jpeg(sharp(o).extract(cut(w, h, 0.1))) },
  { change: 'padded 20 % per side in black', transform: 'trimmed', make: (o, w, h) => jpeg(sharp(o).extend(frame(w, h, 0.2, '#000000'))) },
  { change: 'framed by a 5 % white border', transform: 'trimmed', make: (o, w, h) => jpeg(sharp(o).extend(frame(w, h, 0.05, '#ffffff'))) },
  // Between the steps of the windows' ladder: 7.5 % was missed when the windows cut 5 % and 10 %.
  { change: 'cropped 7.5 % per side', transform: 'crop', make: (o, w, h) => jpeg(sharp(o).extract(cut(w, h, 0.075))) },
  { change: 'cut to a 4:5 portrait', transform: 'crop', make: (o, w, h) => jpeg(sharp(o).extract(coverBox(w, h, 4 / 5))) },
  { change: 'cut to a 16:9 banner', transform: 'crop', make: (o, w, h) => jpeg(sharp(o).extract(coverBox(w, h, 16 / 9))) },
];

/** +50 % brightness turns 40 % of camera.png and 16 % of coffee.png pure white. */
const brightened = async (name: string, turn = 0) =>
  computeFingerprints(await jpeg(sharp(await sharp(fixture(name)).modulate({ brightness: 1.5 }).png().toBuffer()).rotate(turn)));

const originals = new Map<string, Fingerprints>();
/** copies.get(photo)[i] is COPIES[i] applied to the photo. */
const copies = new Map<string, Fingerprints[]>();

beforeAll(async () => {
  for (const name of PHOTOS) {
    const bytes = fixture(name);
    const { width, height } = await sharp(bytes).metadata();
    originals.set(name, await computeFingerprints(bytes));
    copies.set(name, await Promise.all(COPIES.map(async ({ make }) => computeFingerprints(await make(bytes, width, height)))));
  }
});

describe('computeFingerprints', () => {
  it('keeps the SPEC pHash as the primary fingerprint', async () => {
    for (const name of PHOTOS) expect(originals.get(name)!.phash, name).toBe(await phash(fixture(name)));
  });

  it('stores the whole image, nine crop windows and the shape windows that fit it as 64-hex-digit hashes, in under 1,400 bytes of JSON', () => {
    for (const name of PHOTOS) {
      const { variants } = originals.get(name)!;
      for (const region of ['whole', 'c95', 'c90', 'c85', 'c80', 'c75', 'tl90', 'tr90', 'bl90', 'br90'] as const)
        expect(variants[region], `${name} ${region}`).toMatch(/^[0-9a-f]{64}$/);
      expect(JSON.stringify(originals.get(name)).length, name).toBeLessThan(1400);
    }
    // A square picture has no square window; a 3:2 one has no 3:2 window, and no 9:16 one (it would keep 37.5 % of its width).
    expect(Object.keys(originals.get('astronaut.png')!.variants).filter((region) => region.startsWith('s'))).toEqual([
      's4x5',
      's3x4',
      's2x3',
      's9x16',
      's4x3',
      's3x2',
      's16x9',
    ]);
    expect(Object.keys(originals.get('chelsea.png')!.variants).filter((region) => region.startsWith('s'))).toEqual([
      's1x1',
      's4x5',
      's3x4',
      's2x3',
      's4x3',
      's16x9',
    ]);
  });

  // Pinned so that a change to decoding, resampling, the DCT or the bit order is noticed: stored
  // fingerprints would silently stop matching new ones after such a change.
  it('gives the pinned whole-image region hash of a fixture photo', () => {
    expect(originals.get('chelsea.png')!.variants.whole).toBe(GOLDEN_CHELSEA_WHOLE);
  });

  it('adds a trimmed region only for an image with a uniform border', () => {
    expect(originals.get('chelsea.png')!.variants.trimmed).toBeUndefined();
    const framed = copies.get('chelsea.png')![COPIES.findIndex((c) => c.change.includes('white border'))];
    expect(framed.variants.trimmed).toMatch(/^[0-9a-f]{64}$/);
  });

  it('gives a plain image no region hashes, so it cannot match photos through them', async () => {
    const grey = await sharp({ create: { width: 300, height: 200, channels: 3, background: '#808080' } })
      .png()
      .toBuffer();
    const fingerprints = await computeFingerprints(grey);
    expect(fingerprints.variants).toEqual({});
    for (const name of PHOTOS) expect(matchFingerprints(fingerprints, originals.get(name)!, THRESHOLD), name).toBeNull();
  });

  it('rejects bytes that are not a decodable image', async () => {
    await expect(computeFingerprints(Buffer.from('not an image'))).rejects.toThrow(ImageRejected);
  });
});

describe('matchFingerprints', () => {
  for (const [i, { change, transform }] of COPIES.entries()) {
    it(`matches a copy ${change} with each fixture photo as "${transform}"`, () => {
      for (const name of PHOTOS) {
        const copy = copies.get(name)![i];
        const original = originals.get(name)!;
        const found = matchFingerprints(copy, original, THRESHOLD);
        expect(found, name).not.toBeNull();
        expect(found!.transform, name).toBe(transform);
        expect(found!.similarity, name).toBeGreaterThanOrEqual(THRESHOLD);
        expect(found!.plainSimilarity, name).toBe(similarity(copy.phash, original.phash));
      }
    });
  }

  it('needs the robust fingerprints for these copies: the plain pHash misses the flips, turns, pads and borders', () => {
    for (const name of PHOTOS) {
      for (const [i, { change }] of COPIES.entries()) {
        if (change.startsWith('cropped')) continue;
        expect(similarity(copies.get(name)![i].phash, originals.get(name)!.phash), `${name} ${change}`).toBeLessThan(THRESHOLD);
      }
    }
  });

  it('finds the original when the query is the uncropped image and the reference the crop', () => {
    const crop10 = COPIES.findIndex((c) => c.change === 'cropped 10 % per side');
    for (const name of PHOTOS) {
      expect(matchFingerprints(originals.get(name)!, copies.get(name)![crop10], THRESHOLD)?.transform, name).toBe('crop');
    }
  });

  it('calls a re-encoded copy identity and shows the pHash similarity', async () => {
    for (const name of PHOTOS) {
      const copy = await computeFingerprints(await jpeg(sharp(fixture(name)).resize(256)));
      const found = matchFingerprints(copy, originals.get(name)!, THRESHOLD);
      expect(found, name).toEqual({
        similarity: found!.plainSimilarity,
        transform: 'identity',
        plainSimilarity: similarity(copy.phash, originals.get(name)!.phash),
      });
      expect(found!.plainSimilarity, name).toBeGreaterThanOrEqual(THRESHOLD);
    }
  });

  it('never matches two different fixture photos, under any transform or direction', () => {
    for (const name of PHOTOS) {
      for (const other of PHOTOS) {
        if (other === name) continue;
        const reference = originals.get(other)!;
        expect(matchFingerprints(originals.get(name)!, reference, THRESHOLD), `${name} vs ${other}`).toBeNull();
        for (const [i, { change }] of COPIES.entries()) {
          expect(matchFingerprints(copies.get(name)![i], reference, THRESHOLD), `${name} ${change} vs ${other}`).toBeNull();
          expect(matchFingerprints(reference, copies.get(name)![i], THRESHOLD), `${other} vs ${name} ${change}`).toBeNull();
        }
      }
    }
  });

  it('matches a brightened copy whose highlights clip as identity (turned: rot90), though its pHash no longer matches', async () => {
    const copy = await brightened('camera.png');
    const original = originals.get('camera.png')!;
    expect(similarity(copy.phash, original.phash)).toBeLessThan(THRESHOLD);
    expect(matchFingerprints(copy, original, THRESHOLD)?.transform).toBe('identity');
    expect(matchFingerprints(await brightened('camera.png', 90), original, THRESHOLD)?.transform).toBe('rot90');
    for (const other of PHOTOS.filter((name) => name !== 'camera.png')) {
      expect(matchFingerprints(copy, originals.get(other)!, THRESHOLD), other).toBeNull();
    }
  });

  it('works on fingerprints read back from JSON, as stored in the database', () => {
    const stored = JSON.parse(JSON.stringify(originals.get('coffee.png'))) as Fingerprints;
    expect(matchFingerprints(copies.get('coffee.png')![0], stored, THRESHOLD)?.transform).toBe('hflip');
  });

  it('keeps a lower caller threshold from loosening the region checks', () => {
    for (const name of PHOTOS) {
      for (const other of PHOTOS) {
        if (other === name) continue;
        const found = matchFingerprints(copies.get(name)![0], originals.get(other)!, 0.7);
        // At 0.7 the plain pHash itself may call two photos alike; no region transform may.
        if (found) expect(found.transform, `${name} vs ${other}`).toBe('identity');
      }
    }
  });
});

describe('region hash orientations', () => {
  it('undoes every orientation with its inverse, bit for bit', () => {
    const hash = regionHashFromHex(originals.get('astronaut.png')!.variants.whole!);
    for (const orientation of ORIENTATIONS) {
      const turned = everyOrientation(hash)[orientation];
      expect(regionHashToHex(everyOrientation(turned)[INVERSE_ORIENTATION[orientation]]), orientation).toBe(regionHashToHex(hash));
      if (orientation !== 'identity') expect(regionHashToHex(turned), orientation).not.toBe(regionHashToHex(hash));
    }
  });
});

describe('orientRegion', () => {
  it('says where a marked region of an image lands after sharp mirrors or turns the image', async () => {
    const [width, height] = [200, 100];
    const region = { left: 0.1, top: 0.2, right: 0.4, bottom: 0.5 };
    const marked = await sharp({ create: { width, height, channels: 3, background: '#000000' } })
      .composite([
        {
          input: { create: { width: 60, height: 30, channels: 3, background: '#ffffff' } },
          left: region.left * width,
          top: region.top * height,
        },
      ])
      .png()
      .toBuffer();
    const turns: [Orientation, (image: Sharp) => Sharp][] = [
      ['hflip', (image) => image.flop()],
      ['vflip', (image) => image.flip()],
      ['rot90', (image) => image.rotate(90)],
      ['rot180', (image) => image.rotate(180)],
      ['rot270', (image) => image.rotate(270)],
    ];
    for (const [orientation, turn] of turns) {
      const { data, info } = await turn(sharp(marked)).greyscale().raw().toBuffer({ resolveWithObject: true });
      const xs: number[] = [];
      const ys: number[] = [];
      data.forEach((value, i) => {
        if (value < 128) return;
        xs.push(i % info.width);
        ys.push(Math.floor(i / info.width));
      });
      const found = {
        left: Math.min(...xs) / info.width,
        top: Math.min(...ys) / info.height,
        right: (Math.max(...xs) + 1) / info.width,
        bottom: (Math.max(...ys) + 1) / info.height,
      };
      const expected = orientRegion(region, orientation);
      for (const side of ['left', 'top', 'right', 'bottom'] as const) expect(found[side], `${orientation} ${side}`).toBeCloseTo(expected[side], 5);
    }
  });
});

describe('RobustIndex', () => {
  const build = () => {
    const index = new RobustIndex<string>();
    for (const name of PHOTOS) index.add(name, originals.get(name)!);
    return index;
  };

  it("finds each copy's original, with the transform, and no other photo", () => {
    const index = build();
    for (const name of PHOTOS) {
      for (const [i, { change, transform }] of COPIES.entries()) {
        const found = index.query(copies.get(name)![i], THRESHOLD);
        expect(
          found.map((match) => [match.key, match.transform]),
          `${name} ${change}`,
        ).toEqual([[name, transform]]);
      }
    }
  });

  it('finds the original of a mirrored page of text under 256 px high, and no other page or photo', async () => {
    const index = build();
    const pages = [
      { name: 'page 384x191', bytes: await textPage(384, 191, 2) },
      { name: 'page 360x180', bytes: await textPage(360, 180, 7) },
      { name: 'page 300x150', bytes: await textPage(300, 150, 5) },
    ];
    for (const { name, bytes } of pages) index.add(name, await computeFingerprints(bytes));
    for (const { name, bytes } of pages) {
      for (const [mirror, transform] of [
        [sharp(bytes).flop(), 'hflip'],
        [sharp(bytes).flip(), 'vflip'],
      ] as const) {
        const found = index.query(await computeFingerprints(await jpeg(mirror)), THRESHOLD);
        expect(
          found.map((match) => [match.key, match.transform]),
          `${name} ${transform}`,
        ).toEqual([[name, transform]]);
      }
    }
  });

  it('finds the original of a brightened copy whose highlights clip, and no other photo', async () => {
    const index = build();
    for (const name of ['camera.png', 'coffee.png']) {
      const found = index.query(await brightened(name), THRESHOLD);
      expect(
        found.map((match) => [match.key, match.transform]),
        name,
      ).toEqual([[name, 'identity']]);
    }
  });

  it('agrees with matchFingerprints on similarity and the shown pHash similarity', () => {
    const index = build();
    const copy = copies.get('rocket.jpg')![2];
    const [found] = index.query(copy, THRESHOLD);
    expect(found).toEqual({ key: 'rocket.jpg', ...matchFingerprints(copy, originals.get('rocket.jpg')!, THRESHOLD) });
  });

  it('finds a stored crop when the query is the uncropped image', () => {
    const index = new RobustIndex<string>();
    const crop5 = COPIES.findIndex((c) => c.change === 'cropped 5 % per side');
    for (const name of PHOTOS) index.add(`${name} cropped`, copies.get(name)![crop5]);
    for (const name of PHOTOS) {
      expect(
        index.query(originals.get(name)!, THRESHOLD).map((match) => [match.key, match.transform]),
        name,
      ).toEqual([[`${name} cropped`, 'crop']]);
    }
  });

  it('forgets a removed key and replaces the fingerprints of a key added again', () => {
    const index = build();
    const copy = copies.get('camera.png')![0];
    index.remove('camera.png');
    expect(index.query(copy, THRESHOLD)).toEqual([]);
    expect(index.size).toBe(PHOTOS.length - 1);
    index.add('chelsea.png', originals.get('camera.png')!);
    expect(index.query(copy, THRESHOLD).map((match) => match.key)).toEqual(['chelsea.png']);
    expect(index.query(copies.get('chelsea.png')![0], THRESHOLD)).toEqual([]);
    expect(index.size).toBe(PHOTOS.length - 1);
  });
});

describe('SlotQuery (the index kept in a database table)', () => {
  /** What the fingerprint_slots table holds, and the submissions a lookup of it finds. */
  const table = (entries: [string, Fingerprints][]) => {
    const rows = entries.flatMap(([id, fingerprints]) => indexEntries(fingerprints).map(([slot, key]) => ({ slot, id, key })));
    return (probe: SlotProbe | null) => {
      const ids = probe
        ? new Set(rows.filter((row) => probe.slots.includes(row.slot) && probe.accepts(row.slot, row.key)).map((row) => row.id))
        : new Set(entries.map(([id]) => id));
      return [...ids].map((key) => ({ key, fingerprints: entries.find(([id]) => id === key)![1] }));
    };
  };
  const stored = () => PHOTOS.map((name) => [name, originals.get(name)!] as [string, Fingerprints]);

  it('finds exactly what the in-memory index finds, for every copy of every photo', () => {
    const index = new RobustIndex<string>();
    for (const [name, fingerprints] of stored()) index.add(name, fingerprints);
    const lookup = table(stored());
    for (const name of PHOTOS) {
      for (const [i, { change }] of COPIES.entries()) {
        const query = new SlotQuery(copies.get(name)![i], THRESHOLD);
        expect(query.matches(lookup(query.matchProbe())), `${name} ${change}`).toEqual(index.query(copies.get(name)![i], THRESHOLD));
      }
    }
  });

  it("reads the slots of the query's keys at this threshold, keeps only rows within each lookup's distance, and reads everything when the pHash radius is too wide to probe", () => {
    const camera = originals.get('camera.png')!;
    const probe = new SlotQuery(camera, THRESHOLD).matchProbe()!;
    // Radius 6 bits: 17 values per pHash chunk; at most 62 region keys looked up exactly, 4 chunks each
    // (whole and trimmed in 8 orientations, and in 2 against each of the two kinds of window; the 9
    // crop windows and up to 7 shape windows in 2 against whole and trimmed; the 6 self-compared
    // windows unturned against theirs).
    expect(probe.slots.length).toBeLessThanOrEqual(4 * 17 + 62 * 4);
    // The image itself is found through every row it is stored as, but its in-between crop windows'
    // and shape windows' (kind 3), which only another image's whole regions look up.
    const rows = indexEntries(camera);
    const kind = (slot: number) => Math.floor(slot / (4 * 65536));
    expect(rows.filter(([slot]) => kind(slot) === 3).length).toBe(4 * 3 + 4 * 7);
    for (const [slot, key] of rows.filter(([slot]) => kind(slot) !== 3)) {
      expect(probe.slots).toContain(slot);
      expect(probe.accepts(slot, key)).toBe(true);
    }
    // A stored pHash that shares the first chunk but is 7 bits away is read and left out.
    const [plainSlot] = indexEntries(camera);
    const far = (BigInt(`0x${camera.phash}`) ^ 0x7fn).toString(16).padStart(16, '0');
    expect(probe.accepts(plainSlot[0], far)).toBe(false);
    expect(new SlotQuery(camera, 0.7).matchProbe()).toBeNull();
  });

  it('finds one image from another exactly when it finds the other from the one, over every photo and copy', () => {
    const all = PHOTOS.flatMap((name) =>
      [originals.get(name)!, ...copies.get(name)!].map((fingerprints, i) => [`${name} ${i}`, fingerprints] as [string, Fingerprints]),
    );
    const finds = (from: [string, Fingerprints], to: [string, Fingerprints]) => {
      const probe = new SlotQuery(from[1], THRESHOLD).matchProbe()!;
      return table([to])(probe).length > 0;
    };
    let found = 0;
    for (const [i, x] of all.entries()) {
      for (const y of all.slice(i + 1)) {
        expect(finds(x, y), `${x[0]} -> ${y[0]}`).toBe(finds(y, x));
        if (finds(x, y)) found++;
      }
    }
    expect(found).toBeGreaterThanOrEqual(PHOTOS.length * COPIES.length);
  });

  it('judges a pair the same both ways, each side seeing the match from its own side', () => {
    for (const name of PHOTOS) {
      for (const [i, { change }] of COPIES.entries()) {
        const [original, copy] = [originals.get(name)!, copies.get(name)![i]];
        const forward = matchPair(copy, original, THRESHOLD);
        const backward = matchPair(original, copy, THRESHOLD);
        expect(forward.seen, `${name} ${change}`).not.toBeNull();
        expect(backward.seen, `${name} ${change}`).toEqual([forward.seen![1], forward.seen![0]]);
        // The copy's own side is what matchFingerprints finds with it as the query, when that way matches.
        const asQuery = matchFingerprints(copy, original, THRESHOLD);
        if (asQuery) expect(forward.seen![0]).toEqual(asQuery);
      }
    }
  });

  it('names the stored images near the threshold that do not match, with their pHash similarity', () => {
    const camera = originals.get('camera.png')!;
    // The same photo's pHash with 8 bits changed (similarity 0.875) and no region hashes.
    const flipped = (BigInt(`0x${camera.phash}`) ^ 0xff00000000000000n).toString(16).padStart(16, '0');
    const near: [string, Fingerprints] = ['near', { phash: flipped, variants: {} }];
    const lookup = table([...stored(), near]);
    const query = new SlotQuery(camera, THRESHOLD);
    expect(query.matches(lookup(query.matchProbe())).map((m) => m.key)).toEqual(['camera.png']);
    expect(query.near(lookup(query.nearProbe(0.8)), 0.8)).toEqual([{ key: 'near', plainSimilarity: 0.875 }]);
  });
});

const GOLDEN_CHELSEA_WHOLE = '6358bffdcdbe8c44a26242912fc4bdb74821c2caa5946ed571927a84b80e84da';
