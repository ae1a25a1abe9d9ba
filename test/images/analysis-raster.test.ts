import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeDetail, decodeForAnalysis } from '../../lib/images/analysis-raster.js';
import { createDetector } from '../../lib/images/faces.js';
import { computeFingerprints } from '../../lib/images/fingerprint.js';
import { localImageService } from '../../lib/images/local-service.js';
import { rejectionOf } from '../helpers/rejections.js';
import { makeThumbnail } from '../../lib/images/thumbnail.js';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/images/${name}`, import.meta.url));
const photo = (width: number, height: number) => sharp(fixture('chelsea.png')).resize(width, height, { fit: 'fill' }).jpeg({ quality: 90 }).toBuffer();

describe('decodeForAnalysis', () => {
  it('shrinks to 256 px on the shorter side, or 320 px on the longer when that is larger, never enlarging', async () => {
    const sizes: [number, number, number, number][] = [
      [1600, 1200, 341, 256],
      [2000, 1000, 512, 256],
      [1000, 1000, 320, 320],
      [1200, 1100, 320, 293],
      [300, 200, 300, 200],
    ];
    for (const [width, height, rasterWidth, rasterHeight] of sizes) {
      const raster = await decodeForAnalysis(await photo(width, height));
      expect([raster.width, raster.height, raster.originalWidth, raster.originalHeight], `${width}x${height}`).toEqual([
        rasterWidth,
        rasterHeight,
        width,
        height,
      ]);
      expect(raster.pixels.length).toBe(rasterWidth * rasterHeight * 3);
    }
  });

  it('stands a photo stored sideways upright, and flattens transparency on white', async () => {
    const sideways = await sharp(await photo(1600, 1000))
      .withMetadata({ orientation: 6 })
      .jpeg()
      .toBuffer();
    expect(await decodeForAnalysis(sideways)).toMatchObject({ width: 256, height: 410, originalWidth: 1000, originalHeight: 1600 });

    const transparent = await sharp({ create: { width: 400, height: 300, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } })
      .png()
      .toBuffer();
    const raster = await decodeForAnalysis(transparent);
    expect(raster.pixels.every((value) => value === 255)).toBe(true);
  });

  it('refuses what is not an image, a cut-short file and an image over the pixel limit, each with its reason', async () => {
    expect((await rejectionOf(decodeForAnalysis(Buffer.from('not an image')))).reason).toBe('not an image');
    const png = fixture('astronaut.png');
    expect((await rejectionOf(decodeForAnalysis(png.subarray(0, png.length / 2)))).reason).toMatch(/^image could not be decoded: /);
    const whole = await photo(1600, 1200);
    expect((await rejectionOf(decodeForAnalysis(whole, 1600 * 1200 - 1))).reason).toBe('image has more pixels than the limit');
    expect((await decodeForAnalysis(whole, 1600 * 1200)).width).toBe(341);
  });
});

describe('decodeDetail', () => {
  it('decodes a part of the upright picture at a scale: the same pixels as the whole decode shows there', async () => {
    // Stored sideways: the part is in the upright picture's pixels, as face boxes are.
    const sideways = await sharp(await photo(1600, 1000))
      .withMetadata({ orientation: 6 })
      .png()
      .toBuffer();
    const area = { left: 300, top: 900, width: 400, height: 200 };
    const part = await decodeDetail(sideways, 0.5, area);
    expect([part.width, part.height, part.area]).toEqual([200, 100, area]);
    const expected = await sharp(sideways).rotate().extract(area).resize(200, 100, { fit: 'fill' }).removeAlpha().raw().toBuffer();
    const differences = part.pixels.map((value, i) => Math.abs(value - expected[i]!));
    expect(differences.reduce((sum, value) => sum + value, 0) / differences.length).toBeLessThan(2);
    // A part reaching past the edge is cut at it.
    const edge = await decodeDetail(sideways, 1, { left: 900, top: 0, width: 200, height: 200 });
    expect([edge.width, edge.height, edge.area]).toEqual([100, 200, { left: 900, top: 0, width: 100, height: 200 }]);
    await expect(decodeDetail(Buffer.from('not an image'), 1, area)).rejects.toThrow(/not an image/);
  });
});

describe('makeThumbnail', () => {
  it('is a JPEG of 320 px on its longer side, upright, without metadata, and never larger than the image', async () => {
    const sideways = await sharp(await photo(1600, 1000))
      .withMetadata({ orientation: 6 })
      .jpeg()
      .toBuffer();
    const thumb = await sharp(await makeThumbnail(await decodeForAnalysis(sideways))).metadata();
    expect(thumb).toMatchObject({ format: 'jpeg', width: 200, height: 320 });
    expect([thumb.orientation, thumb.exif, thumb.icc, thumb.xmp]).toEqual([undefined, undefined, undefined, undefined]);

    const small = await sharp(await makeThumbnail(await decodeForAnalysis(await photo(300, 200)))).metadata();
    expect(small).toMatchObject({ width: 300, height: 200 });
  });

  it('shows transparent areas on white', async () => {
    const red = { r: 255, g: 0, b: 0, alpha: 1 };
    const halfTransparent = await sharp({ create: { width: 800, height: 400, channels: 4, background: red } })
      .extend({ right: 800, background: { r: 0, g: 0, b: 0, alpha: 0 } })
      .png()
      .toBuffer();
    const { data, info } = await sharp(await makeThumbnail(await decodeForAnalysis(halfTransparent)))
      .raw()
      .toBuffer({ resolveWithObject: true });
    expect([info.width, info.height]).toEqual([320, 80]);
    const at = (x: number, y: number) => [...data.subarray((y * info.width + x) * 3, (y * info.width + x) * 3 + 3)];
    expect(at(300, 40).every((value) => value > 245)).toBe(true);
    expect(at(20, 40)[0]).toBeGreaterThan(240);
    expect(at(20, 40)[1]).toBeLessThan(15);
  });
});

describe('analyse', () => {
  const service = localImageService(50_000_000);
  const detector = createDetector();
  afterAll(async () => {
    await service.close();
    await detector.close();
  });

  it('gives from its one decode what the fingerprints, the detector and the thumbnail give on their own', async () => {
    for (const bytes of [fixture('astronaut.png'), await photo(1600, 1200)]) {
      const analysis = await service.analyse(bytes);
      expect(analysis.fingerprints).toEqual(await computeFingerprints(bytes));
      expect(analysis.detections).toEqual({ ok: true, value: await detector.detect(bytes) });
      expect(analysis.thumbnail).toEqual({ ok: true, value: await makeThumbnail(await decodeForAnalysis(bytes)) });
    }
    expect((await service.analyse(fixture('astronaut.png'))).detections).toMatchObject({
      ok: true,
      value: { faces: [expect.objectContaining({ score: expect.any(Number) })] },
    });
  });

  it("refuses an image it cannot decode with the decoder's reason, and analyses the next one", async () => {
    const png = fixture('astronaut.png');
    expect((await rejectionOf(service.analyse(png.subarray(0, png.length / 2)))).reason).toMatch(/^image could not be decoded: /);
    expect((await rejectionOf(service.analyse(Buffer.from('not an image')))).reason).toBe('not an image');
    expect((await service.analyse(png)).thumbnail.ok).toBe(true);
  });
});
