import { decodeForAnalysis, type AnalysisRaster } from './analysis-raster.js';
import { readJpeg } from './jpeg-dc-pool.js';
import { jpegLuma, lumaSample } from './luma.js';
import { SAMPLE_SIZE, lowDct32, hashFromDct, sampleGrayscale32 } from './phash.js';
import { resample } from './raster.js';
import { WHOLE, contentRegion, edgeFill, regionHash, regionHashToHex, type Region } from './robust-hash.js';
import { SHAPES, WINDOWS, isFramed, shapeWindow, within, type Fingerprints, type RegionName } from './robust.js';
import { findTurn, uprightSample } from './turned.js';

/**
 * Fingerprints from image bytes: the decoding half of the pipeline, which runs where sharp and
 * the JPEG reader's worker threads do (the Node service, or the image service for the Worker).
 * Comparing fingerprints (robust.ts, phash.ts) needs none of it.
 */

/**
 * Decodes any supported image into 1024 luma values (0-255), row-major, after EXIF
 * auto-orientation, by area averaging (see luma.ts). Transparent areas are seen on white, as a
 * browser would show them. A multi-megapixel photo is never decoded at full size: a JPEG is read
 * at 1/8 scale from its DC coefficients, other formats shrink on load in libvips.
 */
export async function grayscale32(input: Buffer, maxPixels?: number): Promise<Float64Array> {
  const jpeg = readJpeg(input, maxPixels);
  return (await jpegGrayscale32(input, maxPixels, jpeg)) ?? sampleGrayscale32(await lumaSample(await decodeForAnalysis(input, maxPixels, jpeg)));
}

/** grayscale32 from the JPEG's own luma grid, or null when libvips must decode (see jpegLuma). */
export async function jpegGrayscale32(input: Buffer, maxPixels?: number, jpeg = readJpeg(input, maxPixels)): Promise<Float64Array | null> {
  const luma = jpegLuma(await jpeg);
  return luma && resample(luma, luma.window, SAMPLE_SIZE);
}

export async function phash(input: Buffer, maxPixels?: number): Promise<string> {
  return hashFromDct(lowDct32(await grayscale32(input, maxPixels)));
}

/**
 * `jpeg` (the JPEG's grid, read once) and `decoded` (the image's analysis raster, made from it for a
 * large JPEG) are given when the caller uses them for the thumbnail and faces too.
 */
export async function computeFingerprints(
  image: Buffer,
  maxPixels?: number,
  jpeg = readJpeg(image, maxPixels, true),
  decoded: Promise<AnalysisRaster> = decodeForAnalysis(image, maxPixels, jpeg),
): Promise<Fingerprints> {
  // The analysis raster serves the regions and, unless the JPEG's own luma grid does, the pHash.
  const [{ raster, sample }, fromJpeg] = await Promise.all([
    decoded.then(async (raster) => ({ raster, sample: await lumaSample(raster) })),
    jpegGrayscale32(image, maxPixels, jpeg),
  ]);
  const pixels = fromJpeg ?? sampleGrayscale32(sample);
  const variants: Partial<Record<RegionName, string>> = {};
  const put = (name: RegionName, region: Region) => {
    const hash = regionHash(sample, region);
    if (hash) variants[name] = regionHashToHex(hash);
  };
  const content = contentRegion(sample);
  if (content) put('trimmed', content);
  const framed = content !== null && isFramed(content, edgeFill(sample, content));
  // A frame is shared by every photo given the same one, and in a low-texture photo it dominates
  // any region that includes it: the whole image is left out and the crop and shape windows are
  // taken inside the frame, where they show what they would show of the unframed photo.
  const shown = content && framed ? content : WHOLE;
  if (!framed) put('whole', WHOLE);
  for (const [name, window] of Object.entries(WINDOWS)) put(name as RegionName, within(shown, window));
  const aspect = (raster.width * (shown.right - shown.left)) / (raster.height * (shown.bottom - shown.top));
  for (const [name, shape] of Object.entries(SHAPES)) {
    const window = shapeWindow(aspect, shape);
    if (window) put(name as RegionName, within(shown, window));
  }
  // A picture turned by a few degrees on a larger canvas is also hashed turned back upright. A frame
  // is no such canvas (the picture does not reach its edges), but a turn a degree off it can fit its
  // plain ground, and the frame would then make different pictures agree.
  const turn = framed ? null : findTurn(sample, raster.width / raster.height);
  if (turn) {
    const hash = regionHash(uprightSample(sample, turn), WHOLE);
    if (hash) variants.upright = regionHashToHex(hash);
  }
  return { phash: hashFromDct(lowDct32(pixels)), variants };
}
