import type { FileHandle } from 'node:fs/promises';

/**
 * A small POSIX tar (ustar with pax extended headers, POSIX.1-2001): what the backup archive is
 * written in, so `tar -xf` opens it anywhere. A file longer than 100 bytes of name, a name that is
 * not ASCII or a file of 8 GiB or more gets a pax header with its `path` or `size`. Only regular
 * files are written or read; neither side holds a file in memory.
 */

export const BLOCK = 512;
const MAX_OCTAL_SIZE = 0o77777777777;
const COPY_BYTES = 1 << 20;

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

function ustarHeader(name: string, size: number, mtime: Date, type: '0' | 'x'): Buffer {
  const h = Buffer.alloc(BLOCK);
  h.write(name, 0, 100, 'utf8');
  h.write(octal(0o644, 8), 100, 'ascii');
  h.write(octal(0, 8), 108, 'ascii');
  h.write(octal(0, 8), 116, 'ascii');
  h.write(octal(size, 12), 124, 'ascii');
  h.write(octal(Math.max(0, Math.floor(mtime.getTime() / 1000)), 12), 136, 'ascii');
  h.write(' '.repeat(8), 148, 'ascii');
  h.write(type, 156, 'ascii');
  h.write('ustar\u000000', 257, 'ascii');
  h.write(`${checksum(h).toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return h;
}

/** The header checksum: the sum of its bytes, the checksum field counted as spaces. */
function checksum(h: Buffer): number {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : h[i];
  return sum;
}

/** One pax record, `<length> <key>=<value>\n`, the length counting its own digits. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(body);
  while (String(length).length + Buffer.byteLength(body) !== length) length = String(length).length + Buffer.byteLength(body);
  return `${length}${body}`;
}

const padding = (size: number) => (BLOCK - (size % BLOCK)) % BLOCK;

/** The header blocks of one file: a pax header first when ustar cannot say its name or size. */
function headerBlocks(name: string, size: number, mtime: Date): Buffer {
  const plainName = Buffer.byteLength(name) <= 100 && /^[\x20-\x7e]*$/.test(name);
  const records = (plainName ? '' : paxRecord('path', name)) + (size > MAX_OCTAL_SIZE ? paxRecord('size', String(size)) : '');
  const main = ustarHeader(plainName ? name : name.slice(-100).replace(/[^\x20-\x7e]/g, '_'), size > MAX_OCTAL_SIZE ? 0 : size, mtime, '0');
  if (!records) return main;
  const pax = Buffer.from(records, 'utf8');
  return Buffer.concat([ustarHeader('PaxHeader', pax.length, mtime, 'x'), pax, Buffer.alloc(padding(pax.length)), main]);
}

export interface TarWriter {
  /**
   * Copies `size` bytes of an open file as one entry, a slice at a time, giving each slice to
   * `seen` (the caller's hash). False, and nothing of the entry kept, when the file ended early:
   * it was cut while it was read.
   */
  addFile(name: string, source: FileHandle, size: number, mtime: Date, seen: (slice: Buffer) => void): Promise<boolean>;
  addBytes(name: string, bytes: Buffer, mtime: Date): Promise<void>;
  /** The end-of-archive blocks, then the bytes forced to the disk. */
  finish(): Promise<void>;
  /** Bytes written so far. */
  readonly size: number;
}

/** A tar written into an open file, at explicit positions, so an entry that fails can be taken back. */
export function tarWriter(out: FileHandle): TarWriter {
  let at = 0;
  const write = async (bytes: Buffer) => {
    for (let done = 0; done < bytes.length; ) done += (await out.write(bytes, done, bytes.length - done, at + done)).bytesWritten;
    at += bytes.length;
  };
  return {
    async addFile(name, source, size, mtime, seen) {
      const start = at;
      await write(headerBlocks(name, size, mtime));
      const slice = Buffer.alloc(Math.min(COPY_BYTES, Math.max(size, 1)));
      for (let copied = 0; copied < size; ) {
        const { bytesRead } = await source.read(slice, 0, Math.min(slice.length, size - copied), copied);
        if (bytesRead === 0) {
          at = start;
          await out.truncate(start);
          return false;
        }
        const part = slice.subarray(0, bytesRead);
        seen(part);
        await write(part);
        copied += bytesRead;
      }
      await write(Buffer.alloc(padding(size)));
      return true;
    },
    async addBytes(name, bytes, mtime) {
      await write(Buffer.concat([headerBlocks(name, bytes.length, mtime), bytes, Buffer.alloc(padding(bytes.length))]));
    },
    async finish() {
      await write(Buffer.alloc(2 * BLOCK));
      await out.sync();
    },
    get size() {
      return at;
    },
  };
}

/** The archive is not a tar this reader accepts, or it ends early. */
export class TarDamaged extends Error {}

export interface TarEntry {
  name: string;
  size: number;
  /** The file's modification time, to the second. */
  mtime: Date;
  /** The entry's bytes; read it to the end before asking for the next entry. */
  body: AsyncGenerator<Buffer>;
}

/** Reads exact byte counts from a stream of chunks. */
function byteReader(chunks: AsyncIterable<Buffer>) {
  const iterator = chunks[Symbol.asyncIterator]();
  let held: Buffer = Buffer.alloc(0);
  let ended = false;
  const fill = async (n: number) => {
    while (held.length < n && !ended) {
      const next = await iterator.next();
      if (next.done) ended = true;
      else held = held.length ? Buffer.concat([held, next.value]) : next.value;
    }
  };
  return {
    /** Exactly n bytes; fewer only at the end of the stream. */
    async take(n: number): Promise<Buffer> {
      await fill(n);
      const out = held.subarray(0, n);
      held = held.subarray(out.length);
      return out;
    },
    /** n bytes in the chunks they came in. */
    async *stream(n: number): AsyncGenerator<Buffer> {
      for (let left = n; left > 0; ) {
        await fill(1);
        if (held.length === 0) throw new TarDamaged('the archive ends in the middle of a file');
        const out = held.subarray(0, Math.min(left, held.length));
        held = held.subarray(out.length);
        left -= out.length;
        yield out;
      }
    },
  };
}

const text = (h: Buffer, from: number, length: number) => {
  const field = h.subarray(from, from + length);
  const end = field.indexOf(0);
  return field.subarray(0, end < 0 ? length : end).toString('utf8');
};

function parseOctal(h: Buffer, from: number, length: number): number {
  const digits = text(h, from, length).trim();
  if (!/^[0-7]+$/.test(digits)) throw new TarDamaged('a header field is not a number');
  return Number.parseInt(digits, 8);
}

function paxRecords(bytes: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  for (let at = 0; at < bytes.length; ) {
    const space = bytes.indexOf(0x20, at);
    const length = Number(bytes.subarray(at, space).toString('ascii'));
    if (space < 0 || !Number.isInteger(length) || length <= 0 || at + length > bytes.length) throw new TarDamaged('a pax header is malformed');
    const record = bytes.subarray(space + 1, at + length - 1).toString('utf8');
    const equals = record.indexOf('=');
    out[record.slice(0, equals)] = record.slice(equals + 1);
    at += length;
  }
  return out;
}

const PAX_LIMIT = 1 << 20;

/** The regular files of a tar, in order; throws TarDamaged on a bad header, another entry type or an early end. */
export async function* readTar(chunks: AsyncIterable<Buffer>): AsyncGenerator<TarEntry> {
  const reader = byteReader(chunks);
  let pax: Record<string, string> = {};
  for (;;) {
    const h = await reader.take(BLOCK);
    if (h.length < BLOCK) throw new TarDamaged('the archive ends without its end-of-archive blocks');
    if (h.every((b) => b === 0)) return;
    if (parseOctal(h, 148, 8) !== checksum(h)) throw new TarDamaged('a header checksum does not match');
    if (!text(h, 257, 6).startsWith('ustar')) throw new TarDamaged('a header is not a ustar header');
    const type = text(h, 156, 1) || '0';
    const size = pax.size !== undefined ? Number(pax.size) : parseOctal(h, 124, 12);
    const prefix = text(h, 345, 155);
    const name = pax.path ?? (prefix ? `${prefix}/${text(h, 0, 100)}` : text(h, 0, 100));
    if (type === 'x' || type === 'g') {
      if (size > PAX_LIMIT) throw new TarDamaged('a pax header is too large');
      const records = paxRecords(await reader.take(size));
      await reader.take(padding(size));
      if (type === 'x') pax = records;
      continue;
    }
    pax = {};
    if (type === '5') continue;
    if (type !== '0') throw new TarDamaged(`${name} is not a regular file (type ${type})`);
    const body = reader.stream(size);
    yield { name, size, mtime: new Date(parseOctal(h, 136, 12) * 1000), body };
    // Whatever the caller left unread of the body is skipped.
    for await (const _ of body);
    if ((await reader.take(padding(size))).length < padding(size)) throw new TarDamaged('the archive ends in the middle of a file');
  }
}
