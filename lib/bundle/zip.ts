import { setImmediate as nextTurn } from 'node:timers/promises';
import { promisify } from 'node:util';
import { crc32, deflateRaw } from 'node:zlib';

/**
 * A small streaming ZIP writer (PKWARE APPNOTE 6.3, no ZIP64): one file at a time, compressed on
 * libuv's thread pool (deflateRaw), so the event loop only copies headers between files. Each file
 * is held whole while written, which the download cap bounds; a file's size is then known before
 * its header, so no data descriptors are needed and every reader can open the archive.
 */

export interface ZipFile {
  /** The path inside the archive, `/`-separated; stored as UTF-8 (general purpose bit 11). */
  name: string;
  bytes: Buffer;
  /** Deflate it; already-compressed formats (JPEG, PNG, ...) are stored as they are. */
  compress: boolean;
  modified: Date;
}

const deflate = promisify(deflateRaw);
const UTF8_NAMES = 0x0800;
const VERSION = 20;
const MAX_32 = 0xffffffff;
const MAX_ENTRIES = 0xffff;

/** MS-DOS date and time (two-second steps, 1980-2107), read as UTC: a ZIP has no time zone. */
function dosDateTime(date: Date): { time: number; date: number } {
  const year = Math.min(2107, Math.max(1980, date.getUTCFullYear()));
  return {
    time: (date.getUTCHours() << 11) | (date.getUTCMinutes() << 5) | Math.floor(date.getUTCSeconds() / 2),
    date: ((year - 1980) << 9) | ((date.getUTCMonth() + 1) << 5) | date.getUTCDate(),
  };
}

/** Bytes hashed per turn of the event loop: a 50 MB original never holds it for more than a few ms. */
export const SLICE_BYTES = 1 << 20;

/** CRC-32 of the bytes, a slice per turn of the event loop. */
async function crc32InSlices(bytes: Buffer): Promise<number> {
  let crc = 0;
  for (let at = 0; at < bytes.length; at += SLICE_BYTES) {
    if (at > 0) await nextTurn();
    crc = crc32(bytes.subarray(at, at + SLICE_BYTES), crc);
  }
  return crc;
}

interface Written {
  name: Buffer;
  method: number;
  time: number;
  date: number;
  crc: number;
  compressedSize: number;
  size: number;
  offset: number;
}

function localHeader(e: Written): Buffer {
  const h = Buffer.alloc(30);
  h.writeUInt32LE(0x04034b50, 0);
  h.writeUInt16LE(VERSION, 4);
  writeEntryFields(h, e, 6);
  h.writeUInt16LE(0, 28);
  return Buffer.concat([h, e.name]);
}

/** The fields both headers give an entry, in the same order: flags, method, time, date, CRC, sizes, name length. */
function writeEntryFields(h: Buffer, e: Written, at: number): void {
  h.writeUInt16LE(UTF8_NAMES, at);
  h.writeUInt16LE(e.method, at + 2);
  h.writeUInt16LE(e.time, at + 4);
  h.writeUInt16LE(e.date, at + 6);
  h.writeUInt32LE(e.crc, at + 8);
  h.writeUInt32LE(e.compressedSize, at + 12);
  h.writeUInt32LE(e.size, at + 16);
  h.writeUInt16LE(e.name.length, at + 20);
}

function centralHeader(e: Written): Buffer {
  const h = Buffer.alloc(46);
  h.writeUInt32LE(0x02014b50, 0);
  // Made by Unix, so unzip gives the files mode 0644 rather than its FAT defaults.
  h.writeUInt16LE((3 << 8) | VERSION, 4);
  h.writeUInt16LE(VERSION, 6);
  writeEntryFields(h, e, 8);
  // Extra field, comment, disk number and internal attributes: zero.
  h.writeUInt32LE((0o100644 << 16) >>> 0, 38);
  h.writeUInt32LE(e.offset, 42);
  return Buffer.concat([h, e.name]);
}

function endOfCentralDirectory(count: number, size: number, offset: number): Buffer {
  const h = Buffer.alloc(22);
  h.writeUInt32LE(0x06054b50, 0);
  h.writeUInt16LE(count, 8);
  h.writeUInt16LE(count, 10);
  h.writeUInt32LE(size, 12);
  h.writeUInt32LE(offset, 16);
  return h;
}

/**
 * The archive of the files `files` yields, as a stream: each file is read from the iterator only
 * when the reader asks for more, so one file at a time is in memory. Past the classic format's
 * limits (4 GiB, 65,535 files) the stream errors instead of writing a broken archive.
 */
export function zipStream(files: AsyncIterable<ZipFile>): ReadableStream<Uint8Array> {
  const iterator = files[Symbol.asyncIterator]();
  const written: Written[] = [];
  const names = new Set<string>();
  let offset = 0;
  let finished = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (finished) return;
      const next = await iterator.next();
      if (next.done) {
        finished = true;
        const central = Buffer.concat(written.map(centralHeader));
        if (offset > MAX_32 || central.length > MAX_32) throw new Error('the archive passes 4 GiB, which needs ZIP64');
        controller.enqueue(new Uint8Array(Buffer.concat([central, endOfCentralDirectory(written.length, central.length, offset)])));
        controller.close();
        return;
      }
      const file = next.value;
      if (names.has(file.name)) throw new Error(`two files named ${file.name}`);
      names.add(file.name);
      if (written.length >= MAX_ENTRIES) throw new Error(`more than ${MAX_ENTRIES} files need ZIP64`);
      const data = file.compress ? await deflate(file.bytes) : file.bytes;
      const entry: Written = {
        name: Buffer.from(file.name, 'utf8'),
        method: file.compress ? 8 : 0,
        ...dosDateTime(file.modified),
        crc: await crc32InSlices(file.bytes),
        compressedSize: data.length,
        size: file.bytes.length,
        offset,
      };
      if (entry.size > MAX_32 || offset + data.length > MAX_32) throw new Error('the archive passes 4 GiB, which needs ZIP64');
      written.push(entry);
      const header = localHeader(entry);
      offset += header.length + data.length;
      controller.enqueue(new Uint8Array(header));
      controller.enqueue(new Uint8Array(data.buffer, data.byteOffset, data.length));
    },
    async cancel() {
      await iterator.return?.();
    },
  });
}
