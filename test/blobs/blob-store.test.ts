import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Miniflare } from 'miniflare';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { folderBlobStore } from '../../lib/blobs/folder.js';
import { r2BlobStore, type R2BucketLike } from '../../lib/blobs/r2.js';
import { listAll } from '../../lib/blobs/types.js';
import type { BlobStore } from '../../lib/ports.js';

/** The same blob store contract on the data folder and on miniflare's R2. */
let miniflare: Miniflare | undefined;
let bucketCount = 0;
const dirs: string[] = [];

const adapters: { name: string; open(): Promise<{ store: BlobStore; root: string | null }> }[] = [
  {
    name: 'data folder',
    async open() {
      const root = mkdtempSync(join(tmpdir(), 'svc-blobs-'));
      dirs.push(root);
      return { store: folderBlobStore(root), root };
    },
  },
  {
    name: 'miniflare R2',
    async open() {
      miniflare ??= new Miniflare({
        modules: true,
        script: 'export default { fetch() { return new Response("ok") } }',
        r2Buckets: Array.from({ length: 12 }, (_, i) => `BUCKET${i}`),
      });
      const bucket = (await miniflare.getR2Bucket(`BUCKET${bucketCount++}`)) as unknown as R2BucketLike;
      return { store: r2BlobStore(bucket), root: null };
    },
  },
];

afterAll(async () => {
  await miniflare?.dispose();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const bytes = (text: string) => new Uint8Array(Buffer.from(text));
const text = (b: Uint8Array | null) => (b ? Buffer.from(b).toString('utf8') : null);

describe.each(adapters)('blob store on $name', (adapter) => {
  let store: BlobStore;
  let root: string | null;
  beforeEach(async () => ({ store, root } = await adapter.open()));

  it('keeps, replaces, describes and deletes objects by key', async () => {
    expect(await store.get('evidence/s1/a.jpg')).toBeNull();
    expect(await store.head('evidence/s1/a.jpg')).toBeNull();
    await store.put('evidence/s1/a.jpg', bytes('first'));
    const first = await store.head('evidence/s1/a.jpg');
    expect(first).toMatchObject({ key: 'evidence/s1/a.jpg', size: 5 });
    expect(text(await store.get('evidence/s1/a.jpg'))).toBe('first');
    await new Promise((r) => setTimeout(r, 5));
    await store.put('evidence/s1/a.jpg', bytes('second!'));
    const second = await store.head('evidence/s1/a.jpg');
    expect(second).toMatchObject({ size: 7 });
    expect(second!.version).not.toBe(first!.version);
    expect(text(await store.get('evidence/s1/a.jpg'))).toBe('second!');
    await store.delete('evidence/s1/a.jpg');
    await store.delete('evidence/s1/a.jpg');
    expect(await store.get('evidence/s1/a.jpg')).toBeNull();
  });

  it('lists by prefix in key order, page by page, and only what the prefix names', async () => {
    const keys = ['evidence/a-c/1.jpg', 'evidence/a/b.jpg', 'evidence/a/c.jpg', 'evidence/b/x.png', 'derived/a.jpg', 'evidencex/z.jpg'];
    for (const k of keys) await store.put(k, bytes(k));
    const evidence = keys.filter((k) => k.startsWith('evidence/')).sort();
    const pages: string[][] = [];
    let cursor: string | null = null;
    do {
      const page = await store.list('evidence/', { cursor, limit: 2 });
      pages.push(page.objects.map((o) => o.key));
      cursor = page.cursor;
    } while (cursor);
    expect(pages.flat().sort()).toEqual(evidence);
    expect(pages[0]).toHaveLength(2);
    expect((await store.list('evidence/a/')).objects.map((o) => o.key).sort()).toEqual(['evidence/a/b.jpg', 'evidence/a/c.jpg']);
    const all: string[] = [];
    for await (const o of listAll(store, 'evidence/a')) all.push(o.key);
    expect(all.sort()).toEqual(['evidence/a-c/1.jpg', 'evidence/a/b.jpg', 'evidence/a/c.jpg']);
    expect((await store.list('nothing/')).objects).toEqual([]);
  });

  it('refuses keys that could leave their area, before touching storage', async () => {
    for (const key of ['../outside.txt', 'evidence/../../etc/passwd', '/evidence/a.jpg', 'evidence//a.jpg', 'evidence/a\\b.jpg', 'evidence/a\0.jpg', '']) {
      await expect(store.put(key, bytes('x')), key).rejects.toThrow(/blob key/);
      await expect(store.get(key), key).rejects.toThrow(/blob key/);
      await expect(store.delete(key), key).rejects.toThrow(/blob key/);
    }
    if (root) expect(readdirSync(root)).toEqual([]);
  });
});

describe('blob store on the data folder', () => {
  it('follows a link only when it stays in its own area', async () => {
    const { store, root: folder } = await adapters[0].open();
    const root = folder!;
    mkdirSync(join(root, 'submissions', 'images'), { recursive: true });
    mkdirSync(join(root, 'evidence'), { recursive: true });
    writeFileSync(join(root, 'secret.txt'), 'secret');
    writeFileSync(join(root, 'submissions', 'images', 'real.jpg'), 'image');
    symlinkSync(join(root, 'submissions', 'images', 'real.jpg'), join(root, 'submissions', 'images', 'alias.jpg'));
    symlinkSync(join(root, 'secret.txt'), join(root, 'submissions', 'images', 'leak.jpg'));
    symlinkSync(join(root, 'submissions', 'images', 'real.jpg'), join(root, 'evidence', 'cross.jpg'));
    expect(text(await store.get('submissions/images/alias.jpg'))).toBe('image');
    expect(await store.get('submissions/images/leak.jpg')).toBeNull();
    expect(await store.get('evidence/cross.jpg')).toBeNull();
    const listed = (await store.list('submissions/images/')).objects.sort((a, b) => a.key.localeCompare(b.key));
    expect(listed.map((o) => [o.key, o.problem ?? null])).toEqual([
      ['submissions/images/alias.jpg', null],
      ['submissions/images/leak.jpg', 'a link that leaves its folder'],
      ['submissions/images/real.jpg', null],
    ]);
    expect(await store.head('submissions/images/leak.jpg')).toMatchObject({ problem: 'a link that leaves its folder' });
    // The digest (read in worker threads) follows the same rule as `get`.
    expect(await store.digest!('submissions/images/leak.jpg', 16)).toBeNull();
    expect(await store.digest!('evidence/cross.jpg', 16)).toBeNull();
    expect(await store.digest!('submissions/images/alias.jpg', 16)).toMatchObject({ size: 5 });
  });

  it('digests many files at once in worker threads: each its own size, SHA-256 and first bytes', async () => {
    const { store } = await adapters[0].open();
    const keys = Array.from({ length: 150 }, (_, i) => `submissions/images/${i}.jpg`);
    const contents = keys.map((k, i) => Buffer.alloc(10 + i * 97, k));
    await Promise.all(keys.map((k, i) => store.put(k, contents[i])));
    const digests = await Promise.all([...keys, 'submissions/images/missing.jpg'].map((k) => store.digest!(k, 64)));
    expect(digests.pop()).toBeNull();
    digests.forEach((digest, i) => {
      expect(digest!.size).toBe(contents[i].length);
      expect(digest!.sha256).toBe(createHash('sha256').update(contents[i]).digest('hex'));
      expect(Buffer.from(digest!.head.subarray(0, 64)).equals(contents[i].subarray(0, 64))).toBe(true);
    });
  });

  it('says so when the listing of a cursor was pushed out by many others, rather than skip or repeat objects', async () => {
    const { store } = await adapters[0].open();
    const keys = Array.from({ length: 7 }, (_, i) => `evidence/s/${i}.jpg`);
    for (const k of keys) await store.put(k, bytes(k));
    const first = await store.list('evidence/', { limit: 3 });
    const kept = await store.list('evidence/', { cursor: first.cursor, limit: 2 });
    for (let i = 0; i < 12; i++) await store.list('evidence/s/', { limit: 1 });
    await expect(store.list('evidence/', { cursor: kept.cursor, limit: 10 })).rejects.toThrow('blob listing expired');
    const again: string[] = [];
    for await (const o of listAll(store, 'evidence/')) again.push(o.key);
    expect(again.sort()).toEqual(keys);
  });
});
