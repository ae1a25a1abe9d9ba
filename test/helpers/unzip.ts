import { crc32, inflateRawSync } from 'node:zlib';
import { expect } from 'vitest';

/**
 * The reader case bundles are checked with, written from the ZIP specification (PKWARE APPNOTE),
 * independent of the writer: the end record, the central directory, each local header, the data
 * inflated and its CRC-32 checked.
 */
export function unzip(archive: Buffer): Map<string, Buffer> {
  const end = archive.length - 22;
  expect(archive.readUInt32LE(end)).toBe(0x06054b50);
  const count = archive.readUInt16LE(end + 10);
  let at = archive.readUInt32LE(end + 16);
  expect(at + archive.readUInt32LE(end + 12)).toBe(end);
  const files = new Map<string, Buffer>();
  for (let i = 0; i < count; i++) {
    expect(archive.readUInt32LE(at)).toBe(0x02014b50);
    const method = archive.readUInt16LE(at + 10);
    const crc = archive.readUInt32LE(at + 16);
    const compressedSize = archive.readUInt32LE(at + 20);
    const size = archive.readUInt32LE(at + 24);
    const nameLength = archive.readUInt16LE(at + 28);
    const skip = nameLength + archive.readUInt16LE(at + 30) + archive.readUInt16LE(at + 32);
    const name = archive.subarray(at + 46, at + 46 + nameLength).toString('utf8');
    const local = archive.readUInt32LE(at + 42);
    expect(archive.readUInt32LE(local)).toBe(0x04034b50);
    const dataStart = local + 30 + archive.readUInt16LE(local + 26) + archive.readUInt16LE(local + 28);
    const data = archive.subarray(dataStart, dataStart + compressedSize);
    const bytes = method === 8 ? inflateRawSync(data) : Buffer.from(data);
    expect([0, 8]).toContain(method);
    expect(bytes.length, name).toBe(size);
    expect(crc32(bytes) >>> 0, name).toBe(crc);
    expect(files.has(name), name).toBe(false);
    files.set(name, bytes);
    at += 46 + skip;
  }
  return files;
}
