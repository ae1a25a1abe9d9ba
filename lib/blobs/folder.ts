import { lstatSync, realpathSync, statSync, type Stats } from 'node:fs';
import { mkdir, opendir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { digestFile } from './digest-pool.js';
import { checkedKey, LIST_LIMIT } from './types.js';
import type { BlobInfo, BlobStore } from '../ports.js';

/**
 * The data folder as blob storage: a key is a path under the root. A link is followed only when
 * its target stays inside the key's own area (`submissions/images`, `evidence`, `derived`, ...), so
 * a link planted in a media folder cannot expose another file of the machine.
 */
const LEAVES = 'a link that leaves its folder';
// A file whose path no key may be (a backslash is legal in a Linux file name): listed with this
// problem, so one such file does not stop the listing of the others.
const REFUSED = 'named as no key may be (a backslash, or over 1,024 characters)';
// A listing is walked once and kept for the pages that follow (a reload pages through 100,000 names).
const LISTINGS_KEPT = 8;
// Names stated between turns of the event loop: a page of 1,000 at once held it for 10-40 ms on a
// loaded machine, before its caller had looked at a single name.
const STAT_SLICE = 250;

export function folderBlobStore(root: string): BlobStore {
  const area = (key: string) => (key.startsWith('submissions/images/') ? join(root, 'submissions', 'images') : join(root, key.split('/')[0]));
  const listings = new Map<string, string[]>();
  let listingCount = 0;

  /**
   * What is under a key: its file's stats, a problem, or null when there is no regular file.
   * Synchronous on purpose: one stat takes microseconds on a local disk, several times less than
   * through the thread pool, and a page of a listing stats 1,000 names in a few milliseconds.
   */
  function inspect(key: string, file = join(root, checkedKey(key))): { file: string; info: Stats } | { problem: string } | null {
    const link = lstatSync(file, { throwIfNoEntry: false });
    if (!link) return null;
    if (link.isFile()) return { file, info: link };
    if (!link.isSymbolicLink()) return null;
    let real: string;
    try {
      real = realpathSync(file);
      if (!real.startsWith(realpathSync(area(key)) + sep)) return { problem: LEAVES };
    } catch {
      return { problem: LEAVES };
    }
    const info = statSync(real, { throwIfNoEntry: false });
    return info?.isFile() ? { file: real, info } : null;
  }

  /** The file under a listed key, or null when its name is one no key may be. */
  function listedFile(key: string): string | null {
    try {
      return join(root, checkedKey(key));
    } catch {
      return null;
    }
  }

  const describe = (key: string, found: NonNullable<ReturnType<typeof inspect>>): BlobInfo =>
    'problem' in found
      ? { key, size: 0, modified: 0, version: '', problem: found.problem }
      : { key, size: found.info.size, modified: Math.floor(found.info.mtimeMs), version: String(found.info.ino) };

  /**
   * Every key under a directory that starts with the prefix. Read in batches of 1,000 entries
   * (opendir), so a folder of 100,000 files never turns into one synchronous burst of entries.
   */
  async function walk(dir: string, keyPrefix: string, prefix: string, out: string[]): Promise<void> {
    let entries;
    try {
      entries = await opendir(dir, { bufferSize: 1000 });
    } catch {
      return;
    }
    for await (const entry of entries) {
      if (entry.name.endsWith('.tmp')) continue;
      const key = `${keyPrefix}${entry.name}`;
      if (entry.isDirectory()) await walk(join(dir, entry.name), `${key}/`, prefix, out);
      else if (key.startsWith(prefix)) out.push(key);
    }
  }

  return {
    async get(key) {
      const found = inspect(key);
      return found && !('problem' in found) ? readFile(found.file).catch(() => null) : null;
    },
    async head(key) {
      const found = inspect(key);
      return found ? describe(key, found) : null;
    },
    async digest(key, headBytes) {
      // The worker reads a regular file without a stat on the event loop first (a first pass
      // stats a million of them); a link comes back to be checked here.
      const file = join(root, checkedKey(key));
      const read = await digestFile(file, headBytes);
      if (read !== 'link') return read;
      const found = inspect(key, file);
      if (!found || 'problem' in found) return null;
      const target = await digestFile(found.file, headBytes);
      return target === 'link' ? null : target;
    },
    async put(key, bytes) {
      const file = join(root, checkedKey(key));
      await mkdir(dirname(file), { recursive: true });
      // Written beside the target and renamed over it: a reader never sees half a file.
      await writeFile(`${file}.tmp`, bytes);
      await rename(`${file}.tmp`, file);
    },
    async delete(key) {
      try {
        await unlink(join(root, checkedKey(key)));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    },
    async list(prefix, options = {}) {
      const limit = Math.max(1, Math.min(options.limit ?? LIST_LIMIT, LIST_LIMIT));
      // The cursor names the kept listing and the position in it: `<listing>:<index>`.
      const [listingId, at] = options.cursor ? options.cursor.split(':') : [];
      let keys = listingId ? listings.get(listingId) : undefined;
      if (options.cursor && !keys) throw new Error('blob listing expired: list the prefix again');
      const start = keys ? Number(at) : 0;
      if (!keys) {
        const dirKey = prefix.slice(0, prefix.lastIndexOf('/') + 1);
        if (dirKey) checkedKey(dirKey.slice(0, -1));
        keys = [];
        // Directory order, not sorted: sorting 100,000 names would hold the event loop for 50-80 ms.
        await walk(join(root, dirKey), dirKey, prefix, keys);
      }
      const objects: BlobInfo[] = [];
      let next = start;
      for (; next < keys.length && objects.length < limit; next++) {
        // A page from a kept listing would otherwise run without giving the event loop a turn (an
        // awaited promise only lets microtasks in): 100 pages of stats would hold it for a second.
        if ((next - start) % STAT_SLICE === 0) await nextTurn();
        const key = keys[next];
        const file = listedFile(key);
        const found = file === null ? { problem: REFUSED } : inspect(key, file);
        if (found) objects.push(describe(key, found));
      }
      if (next >= keys.length) {
        if (listingId) listings.delete(listingId);
        return { objects, cursor: null };
      }
      const id = listingId && listings.has(listingId) ? listingId : String(++listingCount);
      listings.set(id, keys);
      while (listings.size > LISTINGS_KEPT) listings.delete(listings.keys().next().value!);
      return { objects, cursor: `${id}:${next}` };
    },
  };
}
