/**
 * The 1/8-scale luma of a JPEG, read from the luma DC coefficients alone.
 *
 * A block's DC coefficient is its mean, so the grid of luma DC values is exactly what libjpeg
 * produces when asked for a 1/8-scale grayscale decode (its 1x1 "IDCT" is the same rounding). The
 * pHash needs nothing finer, yet libjpeg still decodes every AC coefficient to get there. This
 * reader steps over AC codes instead: per Huffman table it builds a lookup that consumes several
 * whole (code, extra bits) symbols per step. Of a progressive file it reads only the DC scans and
 * jumps over the AC scans without decoding them; of a sequential file, only the scan(s) holding
 * the luma.
 *
 * Read: Huffman-coded baseline, extended sequential and progressive JPEGs with 8-bit samples and
 * one (grayscale) or three (YCbCr) components, any scan layout, restart intervals, the luma at
 * full resolution. Everything else (arithmetic coding, lossless, hierarchical, 12-bit, CMYK, RGB)
 * and every file that breaks a rule (a missing table, a code that is not in its table, data that
 * ends early, a missing restart marker) gives null, and the caller decodes with libvips, which
 * then also decides what the error is. So a malformed file can cost time but cannot change a
 * result: this reader either agrees with libjpeg or declines.
 *
 * Asked for colour, it also keeps the chroma DC values and gives the 1/8-scale colour image
 * (`colour`) when that is at least the analysis raster's size (raster.ts: a photo of about 2,048
 * px or more on its shorter side, such as a phone's 12 MP): libvips would otherwise entropy-decode
 * the whole file a second time to make it. Its luma is the grid's; each chroma value is repeated
 * over the luma blocks it covers (libjpeg interpolates), and YCbCr becomes RGB as JFIF says. Only
 * the usual layouts, chroma at one block per MCU (4:2:0, 4:2:2, 4:4:4), get one, and a file with
 * an ICC profile other than sRGB gets none (libvips converts such images to sRGB).
 */

import { analysisRasterSize } from './raster.js';

export interface LumaGrid {
  /** ceil(imageWidth / 8) x ceil(imageHeight / 8), as libjpeg's 1/8 scale. */
  width: number;
  height: number;
  /** Row-major, one 0-255 luma value per 8x8 block of the stored (not yet oriented) image. */
  data: Uint8Array;
  /** Full-size dimensions of the stored image. */
  imageWidth: number;
  imageHeight: number;
  /** EXIF orientation 1-8 (1 when absent or unreadable). */
  orientation: number;
  /** The stored (not yet oriented) image at 1/8 scale, when asked for and large enough (see above). */
  colour?: ColourImage;
}

export interface ColourImage {
  /** The grid's size: ceil(imageWidth / 8) x ceil(imageHeight / 8). */
  width: number;
  height: number;
  /** RGB, 3 bytes a pixel, row-major. */
  pixels: Uint8Array;
}

interface Component {
  id: number;
  h: number;
  v: number;
  quantTable: number;
}

interface Frame {
  progressive: boolean;
  width: number;
  height: number;
  components: Component[];
  maxH: number;
  maxV: number;
}

/** Bits looked up at once: 12 keeps a table at 16 KiB and its construction near 50 µs. */
const LOOKUP_BITS = 12;
const LOOKUP_SIZE = 1 << LOOKUP_BITS;
const LOOKUP_SHIFT = 16 - LOOKUP_BITS;

/**
 * One Huffman table in canonical form plus two lookups over the next LOOKUP_BITS bits:
 * - `single[bits]`: code length (bits 0-4, 0 when the code is longer than LOOKUP_BITS or absent)
 *   and symbol (bits 8-15), to decode one symbol;
 * - `skip[bits]`: how many bits the whole AC symbols starting there take, codes and extra bits
 *   (bits 0-4, 0 when not even one fits), how many coefficient positions they advance (bits
 *   8-15) and whether the last of them is the end of block (bit 16).
 */
interface HuffmanTable {
  maxCode: Int32Array;
  valueOffset: Int32Array;
  values: Uint8Array;
  single: Uint32Array;
  /** Built when the table first decodes AC codes (empty until then). */
  skip: Uint32Array;
}

function buildHuffmanTable(counts: Uint8Array, values: Uint8Array): HuffmanTable | null {
  const maxCode = new Int32Array(17).fill(-1);
  const valueOffset = new Int32Array(17);
  const single = new Uint32Array(LOOKUP_SIZE);
  let code = 0;
  let index = 0;
  for (let length = 1; length <= 16; length++) {
    const count = counts[length - 1];
    valueOffset[length] = index - code;
    for (let i = 0; i < count; i++) {
      if (length <= LOOKUP_BITS) {
        const shift = LOOKUP_BITS - length;
        single.fill(length | (values[index] << 8), code << shift, (code + 1) << shift);
      }
      code++;
      index++;
    }
    // Counts that overflow a length describe no prefix code.
    if (code > 1 << length) return null;
    if (count > 0) maxCode[length] = code - 1;
    code <<= 1;
  }
  return { maxCode, valueOffset, values, single, skip: new Uint32Array(0) };
}

function buildSkipLookup(single: Uint32Array): Uint32Array {
  const skip = new Uint32Array(LOOKUP_SIZE);
  for (let bits = 0; bits < LOOKUP_SIZE; bits++) {
    let used = 0;
    let advance = 0;
    let endOfBlock = 0;
    for (;;) {
      const entry = single[(bits << used) & (LOOKUP_SIZE - 1)];
      const length = entry & 31;
      const size = (entry >>> 8) & 15;
      const run = entry >>> 12;
      if (length === 0 || used + length + size > LOOKUP_BITS) break;
      used += length + size;
      if (size === 0 && run !== 15) {
        endOfBlock = 1;
        break;
      }
      advance += size === 0 ? 16 : run + 1;
    }
    skip[bits] = used | (advance << 8) | (endOfBlock << 16);
  }
  return skip;
}

/** Canonical decode of a code longer than LOOKUP_BITS: (symbol << 8) | length, or -1. */
function decodeLong(table: HuffmanTable, peek: number): number {
  for (let length = LOOKUP_BITS + 1; length <= 16; length++) {
    const code = peek >>> (16 - length);
    if (code <= table.maxCode[length]) return (table.values[code + table.valueOffset[length]] << 8) | length;
  }
  return -1;
}

/** 16 bits starting at bit `bit`, most significant first; the buffer carries 4 zero bytes past its data. */
function peek16(bytes: Uint8Array, bit: number): number {
  const at = bit >>> 3;
  return (((bytes[at] << 16) | (bytes[at + 1] << 8) | bytes[at + 2]) >>> (8 - (bit & 7))) & 0xffff;
}

/** Where entropy-coded data starting at `position` ends: the next marker that is not a stuffed 0xFF 0x00. */
function entropyEnd(buffer: Uint8Array, position: number): number {
  for (;;) {
    const marker = buffer.indexOf(0xff, position);
    if (marker === -1 || marker + 1 >= buffer.length) return -1;
    if (buffer[marker + 1] !== 0x00) return marker;
    position = marker + 2;
  }
}

/** Where a scan that is not read ends: past its restart markers, at the next other marker. */
function skipScan(buffer: Uint8Array, position: number): number {
  for (;;) {
    const marker = entropyEnd(buffer, position);
    if (marker === -1) return -1;
    const code = buffer[marker + 1];
    if (code < 0xd0 || code > 0xd7) return marker;
    position = marker + 2;
  }
}

/** Copies one entropy-coded segment into `into` without its byte stuffing; returns its length in bits. */
function unstuff(buffer: Uint8Array, start: number, end: number, into: Uint8Array): number {
  let length = 0;
  let position = start;
  while (position < end) {
    const marker = buffer.indexOf(0xff, position);
    const stop = marker === -1 || marker >= end ? end : marker + 1;
    into.set(buffer.subarray(position, stop), length);
    length += stop - position;
    position = stop + 1; // past the stuffed 0x00
  }
  into.fill(0, length, length + 4);
  return length * 8;
}

/** Reads the EXIF orientation (tag 0x0112 of IFD0) from an APP1 payload, or 1. */
function exifOrientation(buffer: Uint8Array, start: number, end: number): number {
  // "Exif\0\0", then a TIFF header.
  if (end - start < 14 || buffer[start] !== 0x45 || buffer[start + 1] !== 0x78 || buffer[start + 2] !== 0x69 || buffer[start + 3] !== 0x66) return 1;
  const tiff = start + 6;
  const little = buffer[tiff] === 0x49 && buffer[tiff + 1] === 0x49;
  if (!little && !(buffer[tiff] === 0x4d && buffer[tiff + 1] === 0x4d)) return 1;
  const u16 = (at: number) => (little ? buffer[at] | (buffer[at + 1] << 8) : (buffer[at] << 8) | buffer[at + 1]);
  const ifd = tiff + (little ? u16(tiff + 4) + u16(tiff + 6) * 65536 : u16(tiff + 4) * 65536 + u16(tiff + 6));
  if (ifd + 2 > end) return 1;
  const entries = u16(ifd);
  for (let i = 0; i < entries; i++) {
    const entry = ifd + 2 + i * 12;
    if (entry + 12 > end) return 1;
    if (u16(entry) === 0x0112) {
      const value = u16(entry + 8);
      return value >= 1 && value <= 8 ? value : 1;
    }
  }
  return 1;
}

/**
 * How one scan lays out its blocks: per MCU, which component each block belongs to and where the
 * block's DC goes among the kept values: the luma grid first, then (when colour is made) one
 * region of the same size per chroma component, whose one block per MCU sits where the MCU's
 * first luma block sits in the grid.
 */
interface ScanLayout {
  mcuColumns: number;
  totalMcus: number;
  /** Per block of an MCU: the scan's component index. */
  blockComponent: Int32Array;
  /** Per block of an MCU: its offset from the MCU's place in the grid, or -1 when not kept. */
  blockOffset: Int32Array;
  /** Grid offset of one MCU step right, and of one MCU row down. */
  mcuStep: number;
  mcuRowStep: number;
}

/** `regions[i]`: where component i's region starts among the kept values when this scan keeps it, else -1. */
function scanLayout(frame: Frame, scanComponents: number[], stride: number, regions: number[]): ScanLayout | null {
  const gridWidth = Math.ceil(frame.width / 8);
  const gridHeight = Math.ceil(frame.height / 8);
  if (scanComponents.length === 1) {
    // Not interleaved: one block per MCU, only the blocks of the component's own area.
    const component = frame.components[scanComponents[0]];
    const columns = Math.ceil(Math.ceil((frame.width * component.h) / frame.maxH) / 8);
    const rows = Math.ceil(Math.ceil((frame.height * component.v) / frame.maxV) / 8);
    const region = regions[scanComponents[0]];
    // A chroma component at one block per MCU has the frame's MCU grid, so it steps as the MCUs do.
    const chroma = scanComponents[0] !== 0;
    return {
      mcuColumns: columns,
      totalMcus: columns * rows,
      blockComponent: Int32Array.of(0),
      blockOffset: Int32Array.of(region),
      mcuStep: chroma ? frame.maxH : 1,
      mcuRowStep: chroma ? stride * frame.maxV : stride,
    };
  }
  const mcuColumns = Math.ceil(gridWidth / frame.maxH);
  const mcuRows = Math.ceil(gridHeight / frame.maxV);
  const blockComponent: number[] = [];
  const blockOffset: number[] = [];
  scanComponents.forEach((index, scanIndex) => {
    const { h, v } = frame.components[index];
    for (let y = 0; y < v; y++) {
      for (let x = 0; x < h; x++) {
        blockComponent.push(scanIndex);
        blockOffset.push(regions[index] < 0 ? -1 : regions[index] + y * stride + x);
      }
    }
  });
  if (blockComponent.length > 10) return null; // the standard's limit per MCU
  return {
    mcuColumns,
    totalMcus: mcuColumns * mcuRows,
    blockComponent: Int32Array.from(blockComponent),
    blockOffset: Int32Array.from(blockOffset),
    mcuStep: frame.maxH,
    mcuRowStep: stride * frame.maxV,
  };
}

/** What a scan's blocks carry: a sequential scan's DC and AC, a progressive first DC scan, or a DC refinement bit. */
type ScanKind = 'sequential' | 'dc-first' | 'dc-refine';

interface Scan {
  kind: ScanKind;
  layout: ScanLayout;
  dcTables: HuffmanTable[];
  acTables: HuffmanTable[];
  /** Successive approximation: the bit position the scan's DC values start at. */
  shift: number;
}

/** Reads one DC code and its extra bits at `bit`: (difference << 5) | bits used, or -1. */
function readDc(table: HuffmanTable, bytes: Uint8Array, bit: number): number {
  const peek = peek16(bytes, bit);
  let entry = table.single[peek >>> LOOKUP_SHIFT];
  if ((entry & 31) === 0) {
    entry = decodeLong(table, peek);
    if (entry < 0) return -1;
  }
  const length = entry & 31;
  const size = entry >>> 8;
  if (size > 11) return -1;
  let difference = 0;
  if (size) {
    difference = peek16(bytes, bit + length) >>> (16 - size);
    // Values below 2^(size-1) stand for negative differences (the standard's EXTEND).
    if (difference < 1 << (size - 1)) difference += 1 - (1 << size);
  }
  return (difference << 5) | (length + size);
}

/**
 * Decodes the MCUs of one restart interval of a sequential scan or a progressive first DC scan;
 * false when the data breaks a rule or ends early. `coefficients` receives the luma blocks'
 * quantised DC values (shifted to the scan's bit position).
 */
function decodeDifferences(scan: Scan, bytes: Uint8Array, bitLength: number, firstMcu: number, mcus: number, coefficients: Int32Array): boolean {
  const { blockComponent, blockOffset, mcuColumns, mcuStep, mcuRowStep } = scan.layout;
  const { dcTables, acTables, shift } = scan;
  const sequential = scan.kind === 'sequential';
  const predictors = new Int32Array(dcTables.length);
  let bit = 0;
  for (let mcu = firstMcu; mcu < firstMcu + mcus; mcu++) {
    const mcuX = mcu % mcuColumns;
    const base = ((mcu - mcuX) / mcuColumns) * mcuRowStep + mcuX * mcuStep;
    for (let b = 0; b < blockComponent.length; b++) {
      const component = blockComponent[b];
      const dc = readDc(dcTables[component], bytes, bit);
      if (dc === -1) return false;
      bit += dc & 31;
      predictors[component] += dc >> 5;
      // Chroma DC is read only to get past it, unless colour is made.
      if (blockOffset[b] >= 0) coefficients[base + blockOffset[b]] = predictors[component] << shift;
      if (!sequential) continue;
      // AC: step over whole symbols, several per lookup where they fit.
      const ac = acTables[component];
      const skip = ac.skip;
      let k = 1;
      while (k < 64) {
        const peek = peek16(bytes, bit);
        let entry = skip[peek >>> LOOKUP_SHIFT];
        const advance = (entry >>> 8) & 255;
        if ((entry & 31) !== 0 && k + advance < 64) {
          bit += entry & 31;
          if (entry & 0x10000) break;
          k += advance;
          continue;
        }
        // One symbol at a time: a long code, or symbols that may reach the block's last coefficient.
        entry = ac.single[peek >>> LOOKUP_SHIFT];
        if ((entry & 31) === 0) {
          entry = decodeLong(ac, peek);
          if (entry < 0) return false;
        }
        const symbol = entry >>> 8;
        bit += (entry & 31) + (symbol & 15);
        if ((symbol & 15) === 0) {
          if (symbol !== 0xf0) break; // end of block
          k += 16;
        } else {
          k += (symbol >>> 4) + 1;
        }
      }
      if (k > 64) return false;
    }
    if (bit > bitLength) return false;
  }
  return true;
}

/** A progressive DC refinement: one bit per block, no code, no predictor. */
function decodeDcRefinement(scan: Scan, bytes: Uint8Array, bitLength: number, firstMcu: number, mcus: number, coefficients: Int32Array): boolean {
  const { blockComponent, blockOffset, mcuColumns, mcuStep, mcuRowStep } = scan.layout;
  const blocks = blockComponent.length;
  let bit = 0;
  for (let mcu = firstMcu; mcu < firstMcu + mcus; mcu++, bit += blocks) {
    const mcuX = mcu % mcuColumns;
    const base = ((mcu - mcuX) / mcuColumns) * mcuRowStep + mcuX * mcuStep;
    for (let b = 0; b < blocks; b++) {
      const offset = blockOffset[b];
      if (offset >= 0 && (bytes[(bit + b) >>> 3] >>> (7 - ((bit + b) & 7))) & 1) coefficients[base + offset] |= 1 << scan.shift;
    }
  }
  return bit <= bitLength;
}

/** Decodes a scan's entropy data from `position`; returns where the data ends, or -1. */
function decodeScan(buffer: Uint8Array, position: number, scan: Scan, restartInterval: number, coefficients: Int32Array): number {
  const { totalMcus } = scan.layout;
  const interval = restartInterval || totalMcus;
  const segment = new Uint8Array(buffer.length - position + 4);
  let mcu = 0;
  for (;;) {
    const end = entropyEnd(buffer, position);
    if (end < 0) return -1;
    const mcus = Math.min(interval, totalMcus - mcu);
    const bitLength = unstuff(buffer, position, end, segment);
    if (!(scan.kind === 'dc-refine' ? decodeDcRefinement : decodeDifferences)(scan, segment, bitLength, mcu, mcus, coefficients)) return -1;
    mcu += mcus;
    if (mcu >= totalMcus) return end;
    // Another interval follows, after its restart marker.
    const marker = buffer[end + 1];
    if (marker < 0xd0 || marker > 0xd7) return -1;
    position = end + 2;
  }
}

/**
 * The luma DC grid of `buffer`, or null when the file is not a JPEG this reader handles (see the
 * module comment) or has more than `maxPixels` pixels; null never means the image is bad, only
 * that libvips must decide. With `colour`, a large image's grid also carries its colour image.
 */
export function jpegLumaGrid(buffer: Uint8Array, maxPixels: number, colour = false): LumaGrid | null {
  const length = buffer.length;
  if (length < 4 || buffer[0] !== 0xff || buffer[1] !== 0xd8) return null;
  const quantDc = new Int32Array(4).fill(-1);
  const dcTables: (HuffmanTable | null)[] = [null, null, null, null];
  const acTables: (HuffmanTable | null)[] = [null, null, null, null];
  let frame: Frame | null = null;
  let coefficients: Int32Array | null = null;
  let stride = 0;
  let lumaQuant = -1;
  let restartInterval = 0;
  let orientation = 1;
  let adobeTransform = -1;
  // The lowest luma DC bit read so far (progressive files send the DC in steps); the luma is
  // done at bit 0. The file is still followed to its end marker, so that a file cut short is left
  // to libvips to judge.
  let lumaBit = -1;
  let lumaDone = false;
  // The same for the chroma components when colour is made (their DC in regions after the grid's).
  let colourMade = false;
  let lumaSize = 0;
  const chromaQuant = [-1, -1, -1];
  const chromaBit = [-1, -1, -1];
  let foreignProfile = false;
  let position = 2;
  for (;;) {
    if (position + 2 > length || buffer[position] !== 0xff) return null;
    while (position < length && buffer[position] === 0xff) position++;
    const marker = buffer[position++];
    if (marker === 0xd9) {
      if (!lumaDone) return null;
      break;
    }
    if (position + 2 > length || marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) return null;
    const segmentLength = (buffer[position] << 8) | buffer[position + 1];
    const start = position + 2;
    const end = position + segmentLength;
    if (segmentLength < 2 || end > length) return null;
    position = end;
    if (marker === 0xc0 || marker === 0xc1 || marker === 0xc2) {
      // Baseline, extended sequential or progressive, Huffman-coded.
      if (frame || end - start < 6 || buffer[start] !== 8) return null;
      const height = (buffer[start + 1] << 8) | buffer[start + 2];
      const width = (buffer[start + 3] << 8) | buffer[start + 4];
      const count = buffer[start + 5];
      if (!width || !height || width * height > maxPixels || (count !== 1 && count !== 3) || end - start < 6 + count * 3) return null;
      const components: Component[] = [];
      for (let i = 0; i < count; i++) {
        const at = start + 6 + i * 3;
        const h = buffer[at + 1] >> 4;
        const v = buffer[at + 1] & 15;
        if (h < 1 || h > 4 || v < 1 || v > 4 || buffer[at + 2] > 3) return null;
        components.push({ id: buffer[at], h, v, quantTable: buffer[at + 2] });
      }
      const maxH = Math.max(...components.map((c) => c.h));
      const maxV = Math.max(...components.map((c) => c.v));
      // libjpeg would upsample a luma stored below full resolution; that is not a DC grid.
      if (components[0].h !== maxH || components[0].v !== maxV) return null;
      frame = { progressive: marker === 0xc2, width, height, components, maxH, maxV };
      stride = Math.ceil(Math.ceil(width / 8) / maxH) * maxH;
      lumaSize = stride * Math.ceil(Math.ceil(height / 8) / maxV) * maxV;
      const wanted = analysisRasterSize(width, height);
      colourMade =
        colour &&
        count === 3 &&
        components.every((c, i) => i === 0 || (c.h === 1 && c.v === 1)) &&
        Math.ceil(width / 8) >= wanted.width &&
        Math.ceil(height / 8) >= wanted.height;
      coefficients = new Int32Array(lumaSize * (colourMade ? 3 : 1));
    } else if (marker >= 0xc3 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return null; // lossless, hierarchical or arithmetic-coded
    } else if (marker === 0xc4) {
      let at = start;
      while (at < end) {
        const tableClass = buffer[at] >> 4;
        const id = buffer[at] & 15;
        if (tableClass > 1 || id > 3 || at + 17 > end) return null;
        const counts = buffer.subarray(at + 1, at + 17);
        let total = 0;
        for (let i = 0; i < 16; i++) total += counts[i];
        if (total > 256 || at + 17 + total > end) return null;
        const table = buildHuffmanTable(counts, buffer.slice(at + 17, at + 17 + total));
        if (!table) return null;
        (tableClass === 0 ? dcTables : acTables)[id] = table;
        at += 17 + total;
      }
    } else if (marker === 0xdb) {
      let at = start;
      while (at < end) {
        const precision = buffer[at] >> 4;
        const id = buffer[at] & 15;
        if (precision > 1 || id > 3 || at + 1 + (precision ? 128 : 64) > end) return null;
        quantDc[id] = precision ? (buffer[at + 1] << 8) | buffer[at + 2] : buffer[at + 1];
        at += 1 + (precision ? 128 : 64);
      }
    } else if (marker === 0xdd) {
      if (end - start < 2) return null;
      restartInterval = (buffer[start] << 8) | buffer[start + 1];
    } else if (marker === 0xe1) {
      if (orientation === 1) orientation = exifOrientation(buffer, start, end);
    } else if (marker === 0xe2) {
      // "ICC_PROFILE": libvips converts such an image to sRGB, which the colour image would not be,
      // unless the profile is sRGB's own (its description says so, in ASCII or UTF-16, near the start).
      // Every form is searched as latin1 bytes: Node 20's 'utf16le' search never returns on a
      // segment at an odd offset holding many UTF-16 "s" (a real Display P3 profile does).
      if (end - start >= 4 && buffer[start] === 0x49 && buffer[start + 1] === 0x43 && buffer[start + 2] === 0x43 && buffer[start + 3] === 0x5f) {
        const head = Buffer.from(buffer.buffer, buffer.byteOffset + start, Math.min(end - start, 1024));
        if (!['sRGB', 's\0R\0G\0B\0', '\0s\0R\0G\0B'].some((name) => head.includes(name, 0, 'latin1'))) foreignProfile = true;
      }
    } else if (marker === 0xee) {
      // "Adobe": its transform flag 0 means three components are RGB, not YCbCr.
      if (end - start >= 12 && buffer[start] === 0x41 && buffer[start + 1] === 0x64) adobeTransform = buffer[start + 11];
    } else if (marker === 0xda) {
      if (!frame || !coefficients) return null;
      const { components } = frame;
      if (components.length === 3 && (adobeTransform === 0 || (components[0].id === 0x52 && components[1].id === 0x47 && components[2].id === 0x42)))
        return null;
      const count = buffer[start];
      if (count < 1 || count > components.length || end - start < 4 + count * 2) return null;
      const scanComponents: number[] = [];
      const scanDc: HuffmanTable[] = [];
      const scanAc: HuffmanTable[] = [];
      for (let i = 0; i < count; i++) {
        const index = components.findIndex((c) => c.id === buffer[start + 1 + i * 2]);
        if (index < 0 || scanComponents.includes(index)) return null;
        scanComponents.push(index);
        const selector = buffer[start + 2 + i * 2];
        scanDc.push(dcTables[selector >> 4] as HuffmanTable);
        scanAc.push(acTables[selector & 15] as HuffmanTable);
      }
      const spectralStart = buffer[start + 1 + count * 2];
      const spectralEnd = buffer[start + 2 + count * 2];
      const high = buffer[start + 3 + count * 2] >> 4;
      const low = buffer[start + 3 + count * 2] & 15;
      const holdsLuma = scanComponents.includes(0);
      const kind: ScanKind | null = !frame.progressive
        ? spectralStart === 0 && spectralEnd === 63
          ? 'sequential'
          : null
        : spectralStart === 0 && spectralEnd === 0
          ? high === 0
            ? 'dc-first'
            : 'dc-refine'
          : null;
      // Chroma whose DC is kept and not complete yet.
      const chromaRead = colourMade ? scanComponents.filter((index) => index > 0 && chromaBit[index] !== 0) : [];
      if (((lumaDone || !holdsLuma) && chromaRead.length === 0) || (frame.progressive && kind === null)) {
        // Chroma not kept, a progressive AC scan, or after the DC is complete: nothing to read.
        position = skipScan(buffer, end);
        if (position < 0) return null;
        continue;
      }
      if (kind === null || low > 13 || (holdsLuma && lumaDone)) return null;
      // A first DC scan, then refinements one bit at a time down to bit 0.
      for (const bitSoFar of [...(holdsLuma ? [lumaBit] : []), ...chromaRead.map((index) => chromaBit[index])]) {
        if (kind === 'dc-first' && bitSoFar !== -1) return null;
        if (kind === 'dc-refine' && (high !== bitSoFar || low !== high - 1)) return null;
      }
      if (kind !== 'dc-refine' && scanDc.some((table) => !table)) return null;
      if (kind === 'sequential') {
        if (scanAc.some((table) => !table)) return null;
        for (const table of scanAc) if (table.skip.length === 0) table.skip = buildSkipLookup(table.single);
      }
      // libjpeg takes a component's quantisation table when its first scan starts.
      if (holdsLuma && lumaQuant < 0) lumaQuant = quantDc[components[0].quantTable];
      for (const index of chromaRead) if (chromaQuant[index] < 0) chromaQuant[index] = quantDc[components[index].quantTable];
      if ((holdsLuma && lumaQuant < 0) || chromaRead.some((index) => chromaQuant[index] < 0)) return null;
      const regions = components.map((_, index) => (index === 0 ? (holdsLuma ? 0 : -1) : chromaRead.includes(index) ? index * lumaSize : -1));
      const layout = scanLayout(frame, scanComponents, stride, regions);
      if (!layout) return null;
      position = decodeScan(
        buffer,
        end,
        { kind, layout, dcTables: scanDc, acTables: scanAc, shift: kind === 'sequential' ? 0 : low },
        restartInterval,
        coefficients,
      );
      if (position < 0) return null;
      const bitNow = kind === 'sequential' ? 0 : low;
      for (const index of chromaRead) chromaBit[index] = bitNow;
      if (holdsLuma) {
        lumaBit = bitNow;
        lumaDone = lumaBit === 0;
      }
    }
    // APPn, COM and the rest carry nothing the luma needs.
  }
  if (!frame || !coefficients) return null;

  const width = Math.ceil(frame.width / 8);
  const height = Math.ceil(frame.height / 8);
  const data = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      // libjpeg's 1x1 IDCT: dequantise, descale by 8 with rounding, level-shift, clamp.
      const value = ((coefficients[y * stride + x] * lumaQuant + 4) >> 3) + 128;
      data[y * width + x] = value < 0 ? 0 : value > 255 ? 255 : value;
    }
  }
  const grid: LumaGrid = { width, height, data, imageWidth: frame.width, imageHeight: frame.height, orientation };
  if (colourMade && chromaBit[1] === 0 && chromaBit[2] === 0 && !foreignProfile)
    grid.colour = colourImage(grid, coefficients, lumaSize, stride, chromaQuant, frame);
  return grid;
}

// JFIF YCbCr to RGB in 16-bit fixed point, as libjpeg's tables (jdcolor.c).
const fixed = (x: number) => Math.round(x * 65536);
const CR_RED = fixed(1.402);
const CB_GREEN = fixed(0.344136);
const CR_GREEN = fixed(0.714136);
const CB_BLUE = fixed(1.772);
const HALF = 1 << 15;
const clampByte = (value: number) => (value < 0 ? 0 : value > 255 ? 255 : value);

/**
 * The colour image on the luma grid: each luma block's level with its MCU's chroma levels (as
 * libjpeg's 1x1 IDCT makes them), YCbCr to RGB as JFIF says.
 */
function colourImage(grid: LumaGrid, coefficients: Int32Array, lumaSize: number, stride: number, quant: number[], frame: Frame): ColourImage {
  const { width, height, data } = grid;
  const mcuColumns = Math.ceil(width / frame.maxH);
  const mcuRows = Math.ceil(height / frame.maxV);
  // Each MCU's chroma levels, centred on 0; its DC sits where the MCU's first luma block does.
  const levels = (component: number) => {
    const out = new Int32Array(mcuColumns * mcuRows);
    for (let my = 0; my < mcuRows; my++) {
      for (let mx = 0; mx < mcuColumns; mx++) {
        const value = coefficients[component * lumaSize + my * frame.maxV * stride + mx * frame.maxH];
        out[my * mcuColumns + mx] = clampByte(((value * quant[component] + 4) >> 3) + 128) - 128;
      }
    }
    return out;
  };
  const blue = levels(1);
  const red = levels(2);
  const columnMcu = Int32Array.from({ length: width }, (_, x) => Math.floor(x / frame.maxH));
  // A clamped array clamps each (whole-number) store to 0-255.
  const pixels = new Uint8ClampedArray(width * height * 3);
  for (let y = 0, i = 0; y < height; y++) {
    const mcuRow = Math.floor(y / frame.maxV) * mcuColumns;
    for (let x = 0; x < width; x++, i++) {
      const mcu = mcuRow + columnMcu[x];
      const luma = data[i];
      const cb = blue[mcu];
      const cr = red[mcu];
      pixels[i * 3] = luma + ((CR_RED * cr + HALF) >> 16);
      pixels[i * 3 + 1] = luma + ((HALF - CB_GREEN * cb - CR_GREEN * cr) >> 16);
      pixels[i * 3 + 2] = luma + ((CB_BLUE * cb + HALF) >> 16);
    }
  }
  return { width, height, pixels: new Uint8Array(pixels.buffer) };
}
