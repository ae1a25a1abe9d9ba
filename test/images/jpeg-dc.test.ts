import { jpegGrayscale32, phash } from '../../lib/images/fingerprint.js';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp, { type JpegOptions, type Sharp } from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { jpegLumaGrid } from '../../lib/images/jpeg-dc.js';
import { readJpeg } from '../../lib/images/jpeg-dc-pool.js';
import { decodeForAnalysis } from '../../lib/images/analysis-raster.js';
import { jpegLuma, lumaSample } from '../../lib/images/luma.js';
import { sampleGrayscale32 } from '../../lib/images/phash.js';

// libjpeg-turbo's own tools (Debian's libjpeg-turbo-progs) are the reference: cjpeg writes every
// layout the reader must follow, and djpeg's 1/8-scale grayscale decode is what it must equal.
const work = mkdtempSync(path.join(tmpdir(), 'jpeg-dc-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const fixture = (name: string) => readFileSync(new URL(`../fixtures/images/${name}`, import.meta.url));

/** A photo-like source: a fixture photo at the given size, as a binary PPM for cjpeg. */
async function ppm(name: string, width: number, height: number): Promise<string> {
  const rgb = await sharp(fixture(name)).resize(width, height, { fit: 'fill' }).removeAlpha().raw().toBuffer();
  const file = path.join(work, `${name}-${width}x${height}.ppm`);
  writeFileSync(file, Buffer.concat([Buffer.from(`P6\n${width} ${height}\n255\n`), rgb]));
  return file;
}

let serial = 0;
function cjpeg(source: string, options: string[]): Buffer {
  const out = path.join(work, `out-${serial++}.jpg`);
  execFileSync('cjpeg', [...options, '-outfile', out, source]);
  return readFileSync(out);
}

function djpegEighth(jpeg: Buffer): { width: number; height: number; data: Buffer } {
  const file = path.join(work, `ref-${serial++}.jpg`);
  writeFileSync(file, jpeg);
  const pgm = execFileSync('djpeg', ['-scale', '1/8', '-grayscale', '-pnm', file]);
  const [magic, width, height] = pgm.subarray(0, 32).toString('latin1').split(/\s+/);
  expect(magic).toBe('P5');
  return { width: Number(width), height: Number(height), data: pgm.subarray(pgm.length - Number(width) * Number(height)) };
}

const NO_LIMIT = 1e9;

describe('jpegLumaGrid', () => {
  const layouts: Record<string, string[]> = {
    'baseline 4:2:0': ['-quality', '90'],
    'baseline 4:4:4, optimised tables': ['-quality', '95', '-sample', '1x1', '-optimize'],
    'baseline 4:2:2': ['-quality', '85', '-sample', '2x1'],
    'baseline 4:4:0': ['-quality', '85', '-sample', '1x2'],
    grayscale: ['-quality', '90', '-grayscale'],
    'restart every MCU row': ['-quality', '90', '-restart', '1'],
    'restart every 7 MCUs': ['-quality', '90', '-restart', '7B'],
    progressive: ['-quality', '90', '-progressive'],
    'progressive grayscale with restarts': ['-quality', '80', '-progressive', '-grayscale', '-restart', '3B'],
    'progressive 4:4:4': ['-quality', '92', '-progressive', '-sample', '1x1'],
    'low quality': ['-quality', '10'],
  };
  for (const [layout, options] of Object.entries(layouts)) {
    it(`equals libjpeg's 1/8-scale grayscale decode: ${layout}`, async () => {
      // Odd sizes leave partly-filled blocks and MCUs at the right and bottom edges.
      for (const [name, width, height] of [
        ['chelsea.png', 1021, 683],
        ['astronaut.png', 512, 512],
        ['rocket.jpg', 333, 1201],
      ] as const) {
        const jpeg = cjpeg(await ppm(name, width, height), options);
        const grid = jpegLumaGrid(jpeg, NO_LIMIT);
        const reference = djpegEighth(jpeg);
        expect(grid, `${layout} ${name}`).not.toBeNull();
        expect([grid!.width, grid!.height]).toEqual([reference.width, reference.height]);
        expect(Buffer.from(grid!.data).equals(reference.data), `${layout} ${name}`).toBe(true);
        expect([grid!.imageWidth, grid!.imageHeight]).toEqual([width, height]);
      }
    });
  }

  it('follows a multi-scan file whose luma comes in a scan of its own, after a chroma scan', async () => {
    const script = path.join(work, 'scans.txt');
    // Sequential, not interleaved: Cb first, then Y, then Cr.
    writeFileSync(script, '1: 0 63 0 0;\n0: 0 63 0 0;\n2: 0 63 0 0;\n');
    const jpeg = cjpeg(await ppm('coffee.png', 800, 601), ['-quality', '90', '-scans', script]);
    const grid = jpegLumaGrid(jpeg, NO_LIMIT);
    expect(grid).not.toBeNull();
    expect(Buffer.from(grid!.data).equals(djpegEighth(jpeg).data)).toBe(true);
  });

  it('reads the photos sharp writes, baseline and progressive, as libjpeg does', async () => {
    for (const progressive of [false, true]) {
      const jpeg = await sharp(fixture('chelsea.png')).resize(1600).jpeg({ quality: 88, progressive }).toBuffer();
      expect(Buffer.from(jpegLumaGrid(jpeg, NO_LIMIT)!.data).equals(djpegEighth(jpeg).data)).toBe(true);
    }
  });

  it('declines what it does not read, so that libvips decides', async () => {
    const source = await ppm('coffee.png', 640, 480);
    const baseline = cjpeg(source, ['-quality', '90']);
    const declined: Record<string, Buffer> = {
      'arithmetic coding': cjpeg(source, ['-quality', '90', '-arithmetic']),
      CMYK: await sharp(fixture('coffee.png')).toColourspace('cmyk').jpeg().toBuffer(),
      'not a JPEG': fixture('coffee.png'),
      empty: Buffer.alloc(0),
      'cut short in the entropy data': baseline.subarray(0, Math.floor(baseline.length * 0.6)),
      'cut short before the end marker': baseline.subarray(0, baseline.length - 2),
      'cut short in the headers': baseline.subarray(0, 300),
      'progressive, cut short after its DC scans': (() => {
        const progressive = cjpeg(source, ['-quality', '90', '-progressive']);
        return progressive.subarray(0, Math.floor(progressive.length * 0.5));
      })(),
      'a Huffman table missing': (() => {
        // Point the scan's luma AC table selector at table 3, which the file never defines.
        const copy = Buffer.from(baseline);
        const sos = copy.indexOf(Buffer.from([0xff, 0xda]));
        copy[sos + 6] = (copy[sos + 6] & 0xf0) | 3;
        return copy;
      })(),
    };
    for (const [what, bytes] of Object.entries(declined)) expect(jpegLumaGrid(bytes, NO_LIMIT), what).toBeNull();
    expect(jpegLumaGrid(baseline, NO_LIMIT)).not.toBeNull();
  });

  it('declines an image over the pixel limit before decoding anything', () => {
    const header = Buffer.from([0xff, 0xd8, 0xff, 0xc0, 0, 11, 8, 0xff, 0xff, 0xff, 0xff, 1, 1, 0x11, 0, 0xff, 0xd9]);
    expect(jpegLumaGrid(header, 0x3fff * 0x3fff)).toBeNull();
  });

  it('never throws on damaged data, and what it returns has the declared size', async () => {
    const jpeg = cjpeg(await ppm('chelsea.png', 640, 480), ['-quality', '90', '-restart', '2']);
    const start = jpeg.indexOf(Buffer.from([0xff, 0xda])) + 14;
    let read = 0;
    for (let seed = 1; seed <= 200; seed++) {
      const damaged = Buffer.from(jpeg);
      for (let i = 0; i < 4; i++) damaged[start + ((seed * 7919 * (i + 1)) % (damaged.length - start - 2))] = (seed * 31 + i) & 0xff;
      const grid = jpegLumaGrid(damaged, NO_LIMIT);
      if (grid) {
        read++;
        expect(grid.data).toHaveLength(80 * 60);
      }
    }
    // Most damage breaks a rule; some only changes values, as it would for libjpeg.
    expect(read).toBeLessThan(200);
  });
});

// The stored pixels for each EXIF orientation, made with sharp's own operations (one per
// pipeline, since sharp orders the operations of one pipeline itself): autoOrient must undo them.
const turn = (degrees: number) => (image: Sharp) => image.rotate(degrees);
const flop = (image: Sharp) => image.flop();
const flip = (image: Sharp) => image.flip();
const store: Record<number, ((image: Sharp) => Sharp)[]> = {
  1: [],
  2: [flop],
  3: [turn(180)],
  4: [flip],
  5: [turn(90), flop],
  6: [turn(270)],
  7: [turn(90), flip],
  8: [turn(90)],
};
async function stored(upright: Buffer, orientation: number): Promise<Buffer> {
  let bytes = upright;
  for (const step of store[orientation]) bytes = await step(sharp(bytes)).png().toBuffer();
  return sharp(bytes).jpeg({ quality: 95 }).withMetadata({ orientation }).toBuffer();
}

describe('jpegLuma orientation', () => {
  it('stands every EXIF orientation upright as libvips does, partial edge blocks included', async () => {
    const upright = await sharp(fixture('chelsea.png')).resize(1003, 701, { fit: 'fill' }).png().toBuffer();
    const expected = sampleGrayscale32(await lumaSample(await decodeForAnalysis(upright)));
    for (let orientation = 1; orientation <= 8; orientation++) {
      const jpeg = await stored(upright, orientation);
      expect((await sharp(jpeg).metadata()).autoOrient).toEqual({ width: 1003, height: 701 });
      const luma = jpegLuma(jpegLumaGrid(jpeg, NO_LIMIT))!;
      expect(luma.width, `orientation ${orientation}`).toBe(126);
      expect(luma.height, `orientation ${orientation}`).toBe(88);
      const actual = (await jpegGrayscale32(jpeg))!;
      let difference = 0;
      for (let i = 0; i < 1024; i++) difference += Math.abs(actual[i] - expected[i]);
      // Within a grey level on average; a wrong turn or mirror is tens of levels off.
      expect(difference / 1024, `orientation ${orientation}`).toBeLessThan(1);
    }
  });
});

describe('phash of a JPEG', () => {
  it('comes from the luma grid, and agrees with the libvips sample of the same file', async () => {
    for (const name of ['astronaut.png', 'chelsea.png', 'coffee.png']) {
      const jpeg = await sharp(fixture(name)).resize(1200).jpeg({ quality: 90 }).toBuffer();
      const fromGrid = await jpegGrayscale32(jpeg);
      expect(fromGrid, name).not.toBeNull();
      const fromSample = sampleGrayscale32(await lumaSample(await decodeForAnalysis(jpeg)));
      let difference = 0;
      for (let i = 0; i < 1024; i++) difference += Math.abs(fromGrid![i] - fromSample[i]);
      expect(difference / 1024, name).toBeLessThan(1);
      expect(await phash(jpeg)).toMatch(/^[0-9a-f]{16}$/);
    }
  });

  it('leaves the bytes it was given as they were, even a view into a larger buffer', async () => {
    const jpeg = await sharp(fixture('chelsea.png')).resize(1200).jpeg().toBuffer();
    const larger = Buffer.alloc(jpeg.length + 100, 7);
    jpeg.copy(larger, 50);
    const view = larger.subarray(50, 50 + jpeg.length);
    const hash = await phash(view);
    expect(view.equals(jpeg)).toBe(true);
    expect(larger.byteLength).toBe(jpeg.length + 100);
    expect(await phash(view)).toBe(hash);
    expect((await sharp(view).metadata()).width).toBe(1200);
  });

  it('leaves a JPEG over the pixel limit to libvips, which refuses it with the usual reason', async () => {
    const jpeg = await sharp(fixture('chelsea.png')).resize(1200, 900).jpeg().toBuffer();
    await expect(phash(jpeg, 1200 * 900)).resolves.toMatch(/^[0-9a-f]{16}$/);
    await expect(phash(jpeg, 1200 * 900 - 1)).rejects.toMatchObject({ reason: 'image has more pixels than the limit' });
  });

  it('leaves small JPEGs to libvips, where 8x8 blocks are too coarse', async () => {
    const small = await sharp(fixture('coffee.png')).resize(200).jpeg().toBuffer();
    expect(jpegLumaGrid(small, NO_LIMIT)).not.toBeNull();
    expect(jpegLuma(jpegLumaGrid(small, NO_LIMIT))).toBeNull();
  });
});

describe('the colour image of a large JPEG', () => {
  const large = (options: JpegOptions) =>
    sharp(fixture('chelsea.png'))
      .resize(2560, 2048, { fit: 'fill' })
      .jpeg({ quality: 90, ...options })
      .toBuffer();
  /** djpeg's 1/8-scale colour decode, RGB. */
  const djpegColour = (jpeg: Buffer, width: number, height: number) => {
    const ppm = execFileSync('djpeg', ['-scale', '1/8', '-pnm'], { input: jpeg, maxBuffer: 1 << 26 });
    return ppm.subarray(ppm.length - width * height * 3);
  };
  const meanDifference = (a: Uint8Array, b: Uint8Array) => a.reduce((sum, value, i) => sum + Math.abs(value - b[i]), 0) / a.length;

  it("is libjpeg's 1/8-scale decode: the same where chroma is full size, within a level where libjpeg interpolates it", async () => {
    for (const [layout, options, within] of [
      ['4:4:4', { chromaSubsampling: '4:4:4' }, 0],
      ['4:2:0', { chromaSubsampling: '4:2:0' }, 1.5],
      ['4:2:0 progressive', { progressive: true }, 1.5],
    ] as const) {
      const jpeg = await large(options);
      const grid = jpegLumaGrid(jpeg, NO_LIMIT, true)!;
      expect(grid.colour, layout).toMatchObject({ width: 320, height: 256 });
      expect(meanDifference(grid.colour!.pixels, djpegColour(jpeg, 320, 256)), layout).toBeLessThanOrEqual(within);
      // The grid itself is what it is without colour.
      expect(Buffer.from(grid.data).equals(Buffer.from(jpegLumaGrid(jpeg, NO_LIMIT)!.data)), layout).toBe(true);
    }
  });

  it('is made only when asked for, when 1/8 scale is the analysis raster size or more, and for sRGB only', async () => {
    expect(jpegLumaGrid(await large({}), NO_LIMIT)!.colour).toBeUndefined();
    const smaller = await sharp(fixture('chelsea.png')).resize(2560, 2040, { fit: 'fill' }).jpeg().toBuffer();
    expect(jpegLumaGrid(smaller, NO_LIMIT, true)!.colour).toBeUndefined();
    const displayP3 = await sharp(await large({}))
      .withIccProfile('p3')
      .jpeg()
      .toBuffer();
    expect(jpegLumaGrid(displayP3, NO_LIMIT, true)!.colour).toBeUndefined();
    const sRGB = await sharp(await large({}))
      .withIccProfile('srgb')
      .jpeg()
      .toBuffer();
    expect(jpegLumaGrid(sRGB, NO_LIMIT, true)!.colour).toBeDefined();
  });

  it('reads an ICC profile at an odd offset full of UTF-16 text, and names sRGB in it in either byte order', async () => {
    // A real Display P3 profile in a camera JPEG hung the reader: Node 20's Buffer.indexOf with
    // 'utf16le' never returns on such a segment. Read in the worker pool, whose 10 s deadline
    // answers null for a hung read, so a hang fails this test instead of stopping the suite.
    const jpeg = await large({});
    const withProfile = (text: Buffer) => {
      const content = Buffer.concat([Buffer.from('ICC_PROFILE\0\x01\x01', 'latin1'), text]);
      const app2 = Buffer.concat([Buffer.from([0xff, 0xe2, (content.length + 2) >> 8, (content.length + 2) & 0xff]), content]);
      // A one-byte comment first puts the profile's bytes at an odd offset of the file.
      const comment = Buffer.from([0xff, 0xfe, 0x00, 0x03, 0x20]);
      return Buffer.concat([jpeg.subarray(0, 2), comment, app2, jpeg.subarray(2)]);
    };
    const utf16 = (text: string, order: 'le' | 'be') => (order === 'le' ? Buffer.from(text, 'utf16le') : Buffer.from(text, 'utf16le').swap16());
    const plain = jpegLumaGrid(jpeg, NO_LIMIT)!;
    const foreign = await readJpeg(withProfile(utf16(`${'s'.repeat(200)}Display P3`, 'le')), NO_LIMIT, true);
    expect(foreign).not.toBeNull();
    expect(Buffer.from(foreign!.data).equals(Buffer.from(plain.data))).toBe(true);
    expect(foreign!.colour).toBeUndefined();
    for (const order of ['le', 'be'] as const) {
      const named = await readJpeg(withProfile(utf16(`${'s'.repeat(200)}sRGB IEC61966-2.1`, order)), NO_LIMIT, true);
      expect(named?.colour, order).toBeDefined();
    }
  }, 30_000);

  it('answers null for a read past its deadline, so libvips decodes that image, and reads the next JPEG in a new worker', async () => {
    // A 5 MP JPEG takes milliseconds to read: a 1 ms deadline stands in for a read that never ends.
    const jpeg = await large({});
    const expected = jpegLumaGrid(jpeg, NO_LIMIT, true)!;
    const reads = await Promise.all([readJpeg(jpeg, NO_LIMIT, true, 1), readJpeg(jpeg, NO_LIMIT, true, 1)]);
    expect(reads).toEqual([null, null]);
    const next = await readJpeg(jpeg, NO_LIMIT, true);
    expect(next).not.toBeNull();
    expect(Buffer.from(next!.data).equals(Buffer.from(expected.data))).toBe(true);
    expect(Buffer.from(next!.colour!.pixels).equals(Buffer.from(expected.colour!.pixels))).toBe(true);
  });

  it('gives the analysis raster that libvips gives, in every orientation', async () => {
    const upright = await sharp(fixture('chelsea.png')).resize(2560, 2048, { fit: 'fill' }).png().toBuffer();
    const fromLibvips = await decodeForAnalysis(upright);
    for (let orientation = 1; orientation <= 8; orientation++) {
      const jpeg = await stored(upright, orientation);
      const grid = jpegLumaGrid(jpeg, NO_LIMIT, true)!;
      expect(grid.colour, `orientation ${orientation}`).toBeDefined();
      const raster = await decodeForAnalysis(jpeg, NO_LIMIT, Promise.resolve(grid));
      expect([raster.width, raster.height, raster.originalWidth, raster.originalHeight], `orientation ${orientation}`).toEqual([320, 256, 2560, 2048]);
      // Within a few levels on average (JPEG at quality 95 and 1/8-scale chroma); a wrong turn or mirror is tens off.
      expect(meanDifference(raster.pixels, fromLibvips.pixels), `orientation ${orientation}`).toBeLessThan(4);
    }
  });
});
