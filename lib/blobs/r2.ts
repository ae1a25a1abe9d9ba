import { checkedKey, LIST_LIMIT } from './types.js';
import type { BlobInfo, BlobStore } from '../ports.js';

/** The part of a Workers R2 bucket binding this adapter uses (structurally; no runtime import). */
export interface R2BucketLike {
  get(key: string): Promise<{ arrayBuffer(): Promise<ArrayBuffer> } | null>;
  head(key: string): Promise<R2ObjectLike | null>;
  put(key: string, value: ArrayBuffer | Uint8Array): Promise<unknown>;
  delete(key: string): Promise<void>;
  list(options: { prefix: string; cursor?: string; limit?: number }): Promise<{ objects: R2ObjectLike[]; truncated: boolean; cursor?: string }>;
}

interface R2ObjectLike {
  key: string;
  size: number;
  etag: string;
  uploaded: Date;
}

const describe = (o: R2ObjectLike): BlobInfo => ({ key: o.key, size: o.size, modified: o.uploaded.getTime(), version: o.etag });

/** An R2 bucket as blob storage. A put replaces the object whole, as R2 always does. */
export function r2BlobStore(bucket: R2BucketLike): BlobStore {
  return {
    async get(key) {
      const object = await bucket.get(checkedKey(key));
      return object ? Buffer.from(await object.arrayBuffer()) : null;
    },
    async head(key) {
      const object = await bucket.head(checkedKey(key));
      return object ? describe(object) : null;
    },
    async put(key, bytes) {
      await bucket.put(checkedKey(key), bytes);
    },
    async delete(key) {
      await bucket.delete(checkedKey(key));
    },
    async list(prefix, options = {}) {
      const limit = Math.max(1, Math.min(options.limit ?? LIST_LIMIT, LIST_LIMIT));
      const page = await bucket.list({ prefix, limit, ...(options.cursor ? { cursor: options.cursor } : {}) });
      return { objects: page.objects.map(describe), cursor: page.truncated && page.cursor ? page.cursor : null };
    },
  };
}
