import { ImageRejected } from './rejected.js';

/**
 * The format and shown size of a JPEG or PNG from its first bytes, without libvips: asking sharp
 * for the header costs about 300 µs of CPU per file, more than everything else a reload does for a
 * new file, so a first pass over a million files would spend most of its time there.
 *
 * Read: JPEGs whose header (every segment before the first scan) is in `head`, with a baseline,
 * extended or progressive frame of 8-bit samples and one or three components, and an EXIF
 * orientation when there is one; PNGs whose chunks up to the first IDAT are in `head`, each with
 * its CRC. Everything else (other formats and frames, two EXIF blocks, an eXIf chunk, a header
 * longer than `head`, any rule broken) gives null, and libvips decides: this reader either agrees
 * with it or declines (test/images/header.test.ts compares the two).
 */
export interface ImageHeader {
  format: 'jpeg' | 'png';
  /** As shown: swapped when the EXIF orientation turns the image a quarter. */
  width: number;
  height: number;
}

export function readImageHeader(head: Uint8Array): ImageHeader | null {
  try {
    if (head[0] === 0xff && head[1] === 0xd8) return jpegHeader(head);
    if (PNG_SIGNATURE.every((byte, i) => head[i] === byte)) return pngHeader(head);
  } catch {
    // A read past the end of a typed array gives undefined, not an error; anything thrown is a decline.
  }
  return null;
}

/**
 * The probe of a JPEG or PNG from its first bytes alone, or null when they do not settle it (then
 * probeImage in decode.ts, with the whole file, does). Refuses an image over the pixel limit.
 */
export function probeHeader(head: Uint8Array, maxPixels: number): ImageHeader | null {
  const header = readImageHeader(head);
  return header && withinLimit(header, maxPixels);
}

export function withinLimit<T extends { width: number; height: number }>(probe: T, maxPixels: number): T {
  const pixels = probe.width * probe.height;
  if (pixels > maxPixels) {
    throw new ImageRejected(`image has ${pixels} pixels, more than the limit of ${maxPixels}`);
  }
  return probe;
}

// SOF0, SOF1, SOF2: the frames libjpeg reads with Huffman coding.
const READ_FRAMES = new Set([0xc0, 0xc1, 0xc2]);
// DHT, DAC, DQT, DRI, COM: segments libjpeg reads (or skips) before the first scan; any marker
// other than these, the frames and APPn is one it stops at.
const KNOWN_SEGMENTS = new Set([0xc4, 0xcc, 0xdb, 0xdd, 0xfe]);

function jpegHeader(b: Uint8Array): ImageHeader | null {
  const u16 = (at: number) => (b[at] << 8) | b[at + 1];
  let frame: { width: number; height: number; components: number[] } | null = null;
  let orientation: number | null = null;
  for (let at = 2; at + 4 <= b.length; ) {
    if (b[at] !== 0xff) return null;
    const marker = b[at + 1];
    if (marker === 0xff) {
      at++;
      continue;
    }
    const length = u16(at + 2);
    const end = at + 2 + length;
    if (length < 2 || end > b.length) return null;
    const body = b.subarray(at + 4, end);
    // The first scan ends the header, as libjpeg's own header read does.
    if (marker === 0xda) {
      if (!frame || !soundScan(body, frame.components)) return null;
      const swap = orientation !== null && orientation >= 5;
      return { format: 'jpeg', width: swap ? frame.height : frame.width, height: swap ? frame.width : frame.height };
    }
    if (READ_FRAMES.has(marker)) {
      if (frame) return null;
      frame = readFrame(body);
      if (!frame) return null;
    } else if (marker === 0xe1 && isExif(body)) {
      if (orientation !== null) return null;
      orientation = exifOrientation(body.subarray(6));
      if (orientation === null) return null;
    } else if (marker === 0xdb ? !soundQuantTables(body) : marker === 0xc4 ? !soundHuffmanTables(body) : marker === 0xdd ? length !== 4 : false) {
      return null;
    } else if (!KNOWN_SEGMENTS.has(marker) && !(marker >= 0xe0 && marker <= 0xef)) return null;
    at = end;
  }
  return null;
}

/** An 8-bit frame of one or three components, each sampled 1-4 times either way with a table 0-3. */
function readFrame(body: Uint8Array): { width: number; height: number; components: number[] } | null {
  const [precision, height, width, count] = [body[0], (body[1] << 8) | body[2], (body[3] << 8) | body[4], body[5]];
  if (precision !== 8 || height === 0 || width === 0 || (count !== 1 && count !== 3) || body.length !== 6 + 3 * count) return null;
  const components: number[] = [];
  for (let i = 0; i < count; i++) {
    const [id, sampling, table] = [body[6 + 3 * i], body[7 + 3 * i], body[8 + 3 * i]];
    const [h, v] = [sampling >> 4, sampling & 15];
    if (components.includes(id) || h < 1 || h > 4 || v < 1 || v > 4 || table > 3) return null;
    components.push(id);
  }
  return { width, height, components };
}

/** A scan header naming 1-4 of the frame's components once each. */
function soundScan(body: Uint8Array, components: number[]): boolean {
  const count = body[0];
  if (count < 1 || count > 4 || body.length !== 4 + 2 * count) return false;
  const named = new Set<number>();
  for (let i = 0; i < count; i++) {
    const id = body[1 + 2 * i];
    if (!components.includes(id) || named.has(id)) return false;
    named.add(id);
  }
  return true;
}

/** Quantisation tables 0-3 of 8 or 16 bits, filling the segment exactly. */
function soundQuantTables(body: Uint8Array): boolean {
  let at = 0;
  while (at < body.length) {
    const [precision, table] = [body[at] >> 4, body[at] & 15];
    if (precision > 1 || table > 3) return false;
    at += 1 + 64 * (precision + 1);
  }
  return at === body.length;
}

/** Huffman tables 0-3 (DC or AC) of at most 256 codes, filling the segment exactly. */
function soundHuffmanTables(body: Uint8Array): boolean {
  let at = 0;
  while (at < body.length) {
    const [kind, table] = [body[at] >> 4, body[at] & 15];
    if (kind > 1 || table > 3 || at + 17 > body.length) return false;
    let codes = 0;
    for (let i = 1; i <= 16; i++) codes += body[at + i];
    if (codes > 256) return false;
    at += 17 + codes;
  }
  return at === body.length;
}

const isExif = (body: Uint8Array) =>
  body.length >= 6 && body[0] === 0x45 && body[1] === 0x78 && body[2] === 0x69 && body[3] === 0x66 && body[4] === 0 && body[5] === 0;

/** The orientation tag of the first IFD (1 when absent), or null when the TIFF structure is not sound. */
function exifOrientation(tiff: Uint8Array): number | null {
  const little = tiff[0] === 0x49 && tiff[1] === 0x49;
  if (!little && !(tiff[0] === 0x4d && tiff[1] === 0x4d)) return null;
  const u16 = (at: number) => (little ? tiff[at] | (tiff[at + 1] << 8) : (tiff[at] << 8) | tiff[at + 1]);
  const u32 = (at: number) => (little ? u16(at) + u16(at + 2) * 0x10000 : u16(at) * 0x10000 + u16(at + 2));
  if (u16(2) !== 42) return null;
  const ifd = u32(4);
  if (ifd < 8 || ifd + 2 > tiff.length) return null;
  const count = u16(ifd);
  if (ifd + 2 + count * 12 > tiff.length) return null;
  for (let i = 0; i < count; i++) {
    const entry = ifd + 2 + i * 12;
    if (u16(entry) !== 0x0112) continue;
    // SHORT, one value: anything else is a tag libexif would read its own way.
    if (u16(entry + 2) !== 3 || u32(entry + 4) !== 1) return null;
    const value = u16(entry + 8);
    return value >= 1 && value <= 8 ? value : null;
  }
  return 1;
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
// Bit depths each PNG colour type allows.
const PNG_DEPTHS: Record<number, number[]> = { 0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16] };

function pngHeader(b: Uint8Array): ImageHeader | null {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  let size: { width: number; height: number } | null = null;
  for (let at = 8; at + 12 <= b.length; ) {
    const length = view.getUint32(at);
    const end = at + 12 + length;
    if (length > 0x7fffffff || end > b.length) return null;
    const type = String.fromCharCode(b[at + 4], b[at + 5], b[at + 6], b[at + 7]);
    if (crc32(b.subarray(at + 4, at + 8 + length)) !== view.getUint32(at + 8 + length)) return null;
    if (!size) {
      if (type !== 'IHDR' || length !== 13) return null;
      const [width, height, depth, colour, compression, filter, interlace] = [
        view.getUint32(at + 8),
        view.getUint32(at + 12),
        b[at + 16],
        b[at + 17],
        b[at + 18],
        b[at + 19],
        b[at + 20],
      ];
      if (width === 0 || height === 0 || width > 0x7fffffff || height > 0x7fffffff) return null;
      if (!PNG_DEPTHS[colour]?.includes(depth) || compression !== 0 || filter !== 0 || interlace > 1) return null;
      size = { width, height };
    } else if (type === 'IDAT') return { format: 'png', ...size };
    // An eXIf chunk may turn the image; libvips reads it its own way.
    else if (type === 'eXIf' || type === 'IHDR' || type === 'IEND') return null;
    at = end;
  }
  return null;
}

// CRC-32 as PNG uses it, here rather than node:zlib's so that the Worker bundle reads headers too.
const CRC_TABLE = Uint32Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const byte of bytes) c = CRC_TABLE[(c ^ byte) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
