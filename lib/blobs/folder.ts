import { lstat, mkdir, readdir, readFile, realpath, rename, stat, unlink, writeFile } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { checkedKey, LIST_LIMIT, type BlobInfo, type BlobPage, type BlobStore } from './types.js';

/**
 * The data folder as blob storage: a key is a path under the root. A link is followed only when
 * its target stays inside the key's own area (`submissions/images`, `evidence`, `derived`, ...), so
 * a link planted in a media folder cannot expose another file of the machine.
 */
export function folderBlobStore(root: string): BlobStore {
  const area = (key: string) => (key.startsWith('submissions/images/') ? join(root, 'submissions', 'images') : join(root, key.split('/')[0]));

  /** The file behind a key with its stats, or null when there is none or it leaves its area. */
  async function resolve(key: string): Promise<{ file: string; info: Stats } | null> {
    const file = join(root, checkedKey(key));
    try {
      const link = await lstat(file);
      if (link.isFile()) return { file, info: link };
      if (!link.isSymbolicLink()) return null;
      const [real, realArea] = await Promise.all([realpath(file), realpath(area(key))]);
      if (!real.startsWith(realArea + sep)) return null;
      const info = await stat(real);
      return info.isFile() ? { file: real, info } : null;
    } catch {
      return null;
    }
  }

  const describe = (key: string, info: Stats): BlobInfo => ({ key, size: info.size, modified: info.mtimeMs, version: `${info.ino}-${info.mtimeMs}-${info.size}` });

  /** Every key under a directory. */
  async function* walk(dir: string, keyPrefix: string): AsyncGenerator<string> {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (entry.name.endsWith('.tmp')) continue;
      const key = `${keyPrefix}${entry.name}`;
      if (entry.isDirectory()) yield* walk(join(dir, entry.name), `${key}/`);
      else yield key;
    }
  }

  return {
    async get(key) {
      const found = await resolve(key);
      return found ? readFile(found.file).catch(() => null) : null;
    },
    async head(key) {
      const found = await resolve(key);
      return found ? describe(key, found.info) : null;
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
      const slash = prefix.lastIndexOf('/');
      const dirKey = prefix.slice(0, slash + 1);
      if (dirKey) checkedKey(dirKey.slice(0, -1));
      // Keys are sorted whole: a depth-first walk would put `a/b` before `a-c`, unlike R2.
      const keys: string[] = [];
      for await (const key of walk(join(root, dirKey), dirKey)) if (key.startsWith(prefix) && !(options.cursor && key <= options.cursor)) keys.push(key);
      keys.sort();
      const objects: BlobInfo[] = [];
      let next = 0;
      for (; next < keys.length && objects.length < limit; next++) {
        const found = await resolve(keys[next]);
        if (found) objects.push(describe(keys[next], found.info));
      }
      const more = next < keys.length;
      const page: BlobPage = { objects, cursor: more ? objects[objects.length - 1].key : null };
      return page;
    },
  };
}
