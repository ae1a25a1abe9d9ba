import type { BlobInfo, BlobPage, BlobStore } from '../ports.js';

/** The blob port's keys and listings; the port's interface is `BlobStore` (lib/ports.ts). */

export const LIST_LIMIT = 1000;

/**
 * A key made only of plain segments: no empty, `.` or `..` segment, no backslash or NUL, no leading
 * slash. Refused keys throw: they come from code or stored rows, never straight from a request.
 */
export function checkedKey(key: string): string {
  if (key.length === 0 || key.length > 1024) throw new Error('blob key: empty or too long');
  const segments = key.split('/');
  for (const s of segments) {
    if (s === '' || s === '.' || s === '..' || s.includes('\\') || s.includes('\0')) throw new Error(`blob key refused: ${JSON.stringify(key.slice(0, 200))}`);
  }
  return key;
}

/**
 * Every object under a prefix, a page at a time: a caller that goes through 100,000 objects loops
 * over each page without awaiting each object (an await per object cost 100-180 ms at 100,000).
 */
export async function* listPages(store: BlobStore, prefix: string): AsyncGenerator<BlobInfo[]> {
  let cursor: string | null = null;
  do {
    const page: BlobPage = await store.list(prefix, { cursor });
    yield page.objects;
    cursor = page.cursor;
  } while (cursor);
}

/** Every object under a prefix, one at a time. */
export async function* listAll(store: BlobStore, prefix: string): AsyncGenerator<BlobInfo> {
  for await (const objects of listPages(store, prefix)) yield* objects;
}
