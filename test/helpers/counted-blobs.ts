import type { BlobStore } from '../../lib/ports.js';

/** The blob store wrapped so that a test sees which keys work read whole (`gets`, in order); `reset` as the test goes. */
export function countedBlobStore(blobs: BlobStore): BlobStore & { gets: string[]; reset(): void } {
  const gets: string[] = [];
  return {
    gets,
    reset: () => gets.splice(0),
    get: (key) => (gets.push(key), blobs.get(key)),
    head: (key) => blobs.head(key),
    put: (key, bytes) => blobs.put(key, bytes),
    delete: (key) => blobs.delete(key),
    list: (prefix, options) => blobs.list(prefix, options),
    ...(blobs.digest ? { digest: blobs.digest.bind(blobs) } : {}),
  };
}
