/**
 * The blob storage port: submitted images, the registry file, downloaded evidence, page captures,
 * derived copies and thumbnails, each under a key relative to the data root
 * (`submissions/images/a.jpg`, `evidence/<submission>/<hash>.jpg`, `thumbs/<id>.jpg`).
 * Two adapters: the data folder (lib/blobs/folder.ts) and an R2 bucket (lib/blobs/r2.ts). The
 * domain only ever names keys; a key that could leave its area never reaches an adapter.
 */
export interface BlobInfo {
  key: string;
  size: number;
  /** Last write time in ms since the epoch. */
  modified: number;
  /** Changes whenever the object is replaced: a file's inode (a put writes a new file), an R2 etag. */
  version: string;
  /** Set when something is under the key but cannot be read as an object (a link that leaves its area). */
  problem?: string;
}

export interface BlobPage {
  objects: BlobInfo[];
  /** Pass back to read the next page; null on the last one. */
  cursor: string | null;
}

export interface BlobStore {
  /** The bytes under a key, or null when there are none (or they cannot be read: see `problem`). */
  get(key: string): Promise<Buffer | null>;
  head(key: string): Promise<BlobInfo | null>;
  /** Stores the bytes whole: a reader sees the old object or the new one, never a part. */
  put(key: string, bytes: Uint8Array): Promise<void>;
  /** Deleting what is not there is not an error. */
  delete(key: string): Promise<void>;
  /**
   * Every object whose key starts with the prefix, once, at most `limit` (default 1000) a page: in
   * key order from R2, in directory order from the data folder. A cursor is good while its listing
   * is kept (R2: always; the folder: its last 8 listings).
   */
  list(prefix: string, options?: { cursor?: string | null; limit?: number }): Promise<BlobPage>;
}

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
