import { phash } from '../../lib/images/fingerprint.js';
import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { ImageRejected } from '../../lib/images/rejected.js';
import { deriveImage } from '../../lib/images/derived.js';
import { similarity } from '../../lib/images/phash.js';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/images/${name}`, import.meta.url));
const GPS_IFD_POINTER = Buffer.from([0x25, 0x88]);

/** A phone photo as it arrives: stored sideways, with location, owner, XMP creator and a wide-gamut profile. */
async function phonePhoto(): Promise<Buffer> {
  return sharp(fixture('rocket.jpg'))
    .rotate(270)
    .withMetadata({ orientation: 6 })
    .withExifMerge({
      IFD0: { Copyright: 'Jane Owner', Make: 'PhoneMaker' },
      IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '37/1 33/1 59/1', GPSLongitudeRef: 'E', GPSLongitude: '126/1 58/1 41/1', GPSMapDatum: 'WGS-84' },
    })
    .withXmp(
      '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">' +
        '<rdf:Description xmlns:dc="http://purl.org/dc/elements/1.1/" dc:creator="Jane Owner"/></rdf:RDF></x:xmpmeta>',
    )
    .withIccProfile('p3')
    .jpeg({ quality: 92 })
    .toBuffer();
}

describe('deriveImage', () => {
  it('strips EXIF, GPS, XMP and ICC from a phone photo and stands it upright', async () => {
    const original = await phonePhoto();
    const before = await sharp(original).metadata();
    expect(before.orientation).toBe(6);
    expect(before.exif?.includes(GPS_IFD_POINTER)).toBe(true);
    expect(original.includes('WGS-84')).toBe(true);
    expect(before.xmp).toBeDefined();
    expect(before.icc).toBeDefined();

    const derived = await deriveImage(original);
    const after = await sharp(derived.bytes).metadata();
    expect(derived).toMatchObject({ format: 'jpeg', width: 640, height: 427 });
    expect(after).toMatchObject({ format: 'jpeg', width: 640, height: 427 });
    expect(after.exif).toBeUndefined();
    expect(after.orientation).toBeUndefined();
    expect(after.xmp).toBeUndefined();
    expect(after.iptc).toBeUndefined();
    expect(after.icc).toBeUndefined();
    for (const trace of ['Exif', 'GPS', 'WGS-84', 'Jane Owner', 'PhoneMaker', 'xmpmeta']) {
      expect(derived.bytes.includes(trace), trace).toBe(false);
    }
    // Upright: the same photo at the SPEC threshold (turned by 90 degrees it would be far below).
    expect(similarity(await phash(fixture('rocket.jpg')), await phash(derived.bytes))).toBeGreaterThanOrEqual(0.9);
  });

  it('rasterises SVG to PNG so that no markup or script leaves the service', async () => {
    const svg = Buffer.from(
      '<svg xmlns="http://www.w3.org/2000/svg" width="90" height="60"><script>alert(1)</script>' + '<rect width="90" height="30" fill="navy"/></svg>',
    );
    const derived = await deriveImage(svg);
    expect(derived).toMatchObject({ format: 'png', width: 90, height: 60 });
    expect(derived.bytes.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect(derived.bytes.includes('script')).toBe(false);
    const { data } = await sharp(derived.bytes).raw().toBuffer({ resolveWithObject: true });
    expect([...data.subarray(0, 4)]).toEqual([0, 0, 128, 255]);
    expect(data[(45 * 90 + 10) * 4 + 3]).toBe(0);
  });

  it('keeps transparency as PNG and turns opaque images into JPEG', async () => {
    const translucent = await sharp(fixture('coffee.png')).ensureAlpha(0.5).png().toBuffer();
    const derivedTranslucent = await deriveImage(translucent);
    expect(derivedTranslucent).toMatchObject({ format: 'png', width: 600, height: 400 });
    expect((await sharp(derivedTranslucent.bytes).metadata()).hasAlpha).toBe(true);

    const derivedOpaque = await deriveImage(fixture('coffee.png'));
    expect(derivedOpaque).toMatchObject({ format: 'jpeg', width: 600, height: 400 });
    expect((await sharp(derivedOpaque.bytes).metadata()).format).toBe('jpeg');
  });

  it('refuses bytes that are not an image', async () => {
    await expect(deriveImage(Buffer.from('GIF89a but not really'))).rejects.toThrow(ImageRejected);
  });

  it('refuses to decode past the pixel limit', async () => {
    await expect(deriveImage(fixture('astronaut.png'), 10_000)).rejects.toThrow(ImageRejected);
  });
});
