import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { readImageHeader } from '../../lib/images/header.js';
import { seededRandom } from '../helpers/random.js';

/**
 * The header reader (lib/images/header.ts) that spares a reload libvips: whatever it answers is
 * what sharp says of the same bytes, and where it cannot tell, it declines rather than guesses.
 */
const fixture = (name: string) => readFileSync(new URL(`../fixtures/images/${name}`, import.meta.url));

/** What the probe took from sharp before the header reader: the format and the size as shown. */
async function sharpSays(bytes: Uint8Array): Promise<{ format: string; width: number; height: number } | null> {
  try {
    const m = await sharp(bytes, { limitInputPixels: false }).metadata();
    return { format: m.format, width: m.autoOrient?.width ?? m.width, height: m.autoOrient?.height ?? m.height };
  } catch {
    return null;
  }
}

async function samples(): Promise<{ name: string; bytes: Buffer }[]> {
  const rocket = fixture('rocket.jpg');
  const astronaut = fixture('astronaut.png');
  const out = [
    { name: 'rocket.jpg', bytes: rocket },
    { name: 'astronaut.png', bytes: astronaut },
    { name: 'chelsea.png', bytes: fixture('chelsea.png') },
    { name: 'progressive', bytes: await sharp(rocket).jpeg({ progressive: true }).toBuffer() },
    { name: 'greyscale jpeg', bytes: await sharp(rocket).greyscale().jpeg().toBuffer() },
    { name: '4:4:4 jpeg', bytes: await sharp(rocket).jpeg({ chromaSubsampling: '4:4:4' }).toBuffer() },
    { name: 'interlaced png', bytes: await sharp(astronaut).png({ progressive: true }).toBuffer() },
    { name: 'palette png', bytes: await sharp(astronaut).png({ palette: true }).toBuffer() },
    { name: 'grey png', bytes: await sharp(astronaut).greyscale().png().toBuffer() },
    { name: '16-bit png', bytes: await sharp(astronaut).toColourspace('rgb16').png().toBuffer() },
  ];
  for (let orientation = 1; orientation <= 8; orientation++) {
    out.push({ name: `orientation ${orientation}`, bytes: await sharp(rocket).resize(64, 40).withMetadata({ orientation }).jpeg().toBuffer() });
  }
  return out;
}

describe('readImageHeader', () => {
  it('reads every JPEG and PNG here as sharp does, turned by its EXIF orientation', async () => {
    for (const { name, bytes } of await samples()) {
      const said = await sharpSays(bytes);
      expect(said, name).not.toBeNull();
      expect(readImageHeader(bytes), name).toEqual(said);
    }
  });

  it('declines a header cut short, and other formats, instead of guessing', async () => {
    const webp = await sharp(fixture('rocket.jpg')).webp().toBuffer();
    expect(readImageHeader(webp)).toBeNull();
    expect(readImageHeader(Buffer.from('<html></html>'))).toBeNull();
    expect(readImageHeader(new Uint8Array(0))).toBeNull();
    for (const { name, bytes } of await samples()) {
      const whole = readImageHeader(bytes);
      for (let cut = 0; cut < Math.min(bytes.length, 2000); cut += 7) {
        const part = readImageHeader(bytes.subarray(0, cut));
        // A cut before the first scan (JPEG) or data chunk (PNG) cannot be read; one after it reads the same.
        if (part !== null) expect(part, `${name} cut at ${cut}`).toEqual(whole);
      }
      expect(readImageHeader(bytes.subarray(0, 20)), name).toBeNull();
    }
  });

  it('never answers otherwise than sharp for damaged headers', async () => {
    const random = seededRandom(31);
    let read = 0;
    for (const { name, bytes } of await samples()) {
      for (let trial = 0; trial < 40; trial++) {
        const damaged = Buffer.from(bytes);
        const at = Math.floor(random() * Math.min(damaged.length, 700));
        damaged[at] = Math.floor(random() * 256);
        const answer = readImageHeader(damaged);
        if (answer === null) continue;
        read++;
        expect(answer, `${name} with byte ${at} changed`).toEqual(await sharpSays(damaged));
      }
    }
    // Most single-byte changes leave a header that still reads (an APP segment's content, a table).
    expect(read).toBeGreaterThan(100);
  });
});
