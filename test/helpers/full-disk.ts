import type { BlobStore } from '../../lib/ports.js';
import type { TestEnv } from './env.js';

/**
 * Makes the env's blob store refuse every write as a full disk does (ENOSPC) while the returned
 * `full` is set; reads and deletes go on. The store is the env's own, the data folder or R2.
 */
export function fillableDisk(target: TestEnv): { full: boolean } {
  const state = { full: false };
  const inner = target.blobs;
  const refusing: BlobStore = {
    get: (key) => inner.get(key),
    head: (key) => inner.head(key),
    delete: (key) => inner.delete(key),
    list: (prefix, options) => inner.list(prefix, options),
    async put(key, bytes) {
      if (state.full) throw Object.assign(new Error(`ENOSPC: no space left on device, write '${key}'`), { code: 'ENOSPC' });
      return inner.put(key, bytes);
    },
  };
  target.blobs = refusing;
  return state;
}
