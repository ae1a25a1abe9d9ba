import { phash } from '../../lib/images/fingerprint.js';
import { readFileSync } from 'node:fs';
import { crc32, deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { decodeFailure, probeImage } from '../../lib/images/decode.js';
import { rejectionOf } from '../helpers/rejections.js';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/images/${name}`, import.meta.url));
const LIMIT = 50_000_000;

/** A PNG whose header claims the given size but whose pixel data is a few bytes: a decompression bomb. */
function pngClaiming(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 0, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.alloc(64))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

describe('probeImage', () => {
  it('reads the real format and size of the fixture photos', async () => {
    expect(await probeImage(fixture('astronaut.png'), LIMIT)).toEqual({ format: 'png', width: 512, height: 512 });
    expect(await probeImage(fixture('chelsea.png'), LIMIT)).toEqual({ format: 'png', width: 451, height: 300 });
    expect(await probeImage(fixture('rocket.jpg'), LIMIT)).toEqual({ format: 'jpeg', width: 640, height: 427 });
  });

  it('identifies every accepted format from the bytes alone', async () => {
    const photo = sharp(fixture('coffee.png')).resize(60, 40);
    const encoded = {
      jpeg: await photo.clone().jpeg().toBuffer(),
      webp: await photo.clone().webp().toBuffer(),
      gif: await photo.clone().gif().toBuffer(),
      tiff: await photo.clone().tiff().toBuffer(),
      avif: await photo.clone().avif().toBuffer(),
    };
    for (const [format, bytes] of Object.entries(encoded)) {
      expect(await probeImage(bytes, LIMIT)).toEqual({ format, width: 60, height: 40 });
    }
  });

  it('accepts SVG as media with its declared size', async () => {
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="120" height="80"><rect width="120" height="80" fill="teal"/></svg>');
    expect(await probeImage(svg, LIMIT)).toEqual({ format: 'svg', width: 120, height: 80 });
  });

  it('reports the displayed size of a photo stored sideways with an EXIF orientation', async () => {
    const sideways = await sharp(fixture('rocket.jpg')).rotate(270).withMetadata({ orientation: 6 }).jpeg().toBuffer();
    expect(await sharp(sideways).metadata()).toMatchObject({ width: 427, height: 640 });
    expect(await probeImage(sideways, LIMIT)).toEqual({ format: 'jpeg', width: 640, height: 427 });
  });

  it('refuses bytes that are not an image, whatever they are called', async () => {
    expect((await rejectionOf(probeImage(Buffer.from('<html><body>hello</body></html>'), LIMIT))).reason).toBe('not an image');
    expect((await rejectionOf(probeImage(Buffer.alloc(0), LIMIT))).reason).toMatch(/^not an image/);
  });

  it('refuses an image over the pixel limit with both numbers in the reason', async () => {
    const rejection = await rejectionOf(probeImage(fixture('astronaut.png'), 100_000));
    expect(rejection.reason).toBe('image has 262144 pixels, more than the limit of 100000');
    expect(rejection.message).toBe(rejection.reason);
  });

  it('refuses a decompression bomb from its header, and the decoder refuses it too', async () => {
    const bomb = pngClaiming(100_000, 100_000);
    expect(bomb.length).toBeLessThan(200);
    const rejection = await rejectionOf(probeImage(bomb, LIMIT));
    expect(rejection.reason).toBe('image has 10000000000 pixels, more than the limit of 50000000');
    expect((await rejectionOf(phash(bomb, LIMIT))).reason).toBe('image has more pixels than the limit');
  });

  it('refuses an image with zero width', async () => {
    const rejection = await rejectionOf(probeImage(pngClaiming(0, 10), LIMIT));
    expect(rejection.reason).toMatch(/not an image|zero width/);
  });
});

describe('decodeFailure', () => {
  it("gives the decoder's first line as the reason, and a reason still when libvips lost its text", () => {
    expect(decodeFailure(new Error('pngload_buffer: libpng read error\nvips2png: unable to write')).reason).toBe(
      'image could not be decoded: pngload_buffer: libpng read error',
    );
    // What sharp says when a decode on another thread cleared libvips' error text first.
    expect(decodeFailure(new Error('Unknown error')).reason).toBe('image could not be decoded: the decoder gave no reason (a damaged or cut-short file)');
  });
});
