import { hashToWords, popcount32, wordsToHash } from './phash.js';

export interface SimilarityMatch<K> {
  key: K;
  hash: string;
  distance: number;
}

/**
 * Multi-index hashing over 64-bit pHashes: each hash is cut into four 16-bit chunks, and each
 * chunk value has a bucket. If two hashes differ in at most r bits, one of the four chunks differs
 * in at most floor(r / 4) bits (pigeonhole), so a query only visits the buckets within that small
 * radius of its own chunks: for r = 6 that is 4 x 17 buckets instead of every stored hash.
 * Radii whose chunk balls would cost more than a scan fall back to a linear scan, so any radius
 * 0-64 is answered exactly.
 *
 * Storage is slot-based typed arrays (no object per hash): the two 32-bit halves, and for each
 * slot five doubly linked lists (the four chunk buckets and the slots of the same key), so add and
 * remove are O(1) per hash and a key may hold several hashes (e.g. variants of one image).
 */

const CHUNKS = 4;
const CHUNK_VALUES = 1 << 16;
const KEY_LIST = CHUNKS;
const LINKS = CHUNKS + 1;
const NONE = -1;
// Chunk balls of radius 4 and more (2517+ buckets per chunk) lose to a scan of typed arrays.
const MAX_CHUNK_RADIUS = 3;

/** The 16-bit masks of at most MAX_CHUNK_RADIUS set bits, fewest first; BALL_SIZE[r] masks have at most r. */
const { MASKS, BALL_SIZE } = (() => {
  const byWeight: number[][] = Array.from({ length: MAX_CHUNK_RADIUS + 1 }, () => []);
  for (let mask = 0; mask < CHUNK_VALUES; mask++) {
    const weight = popcount32(mask);
    if (weight <= MAX_CHUNK_RADIUS) byWeight[weight].push(mask);
  }
  let total = 0;
  return { MASKS: Uint16Array.from(byWeight.flat()), BALL_SIZE: byWeight.map((masks) => (total += masks.length)) };
})();

/** The four 16-bit chunk values of a 64-bit hash (16 hex digits), high to low. */
export function hashChunks(hash: string): number[] {
  const [high, low] = hashToWords(hash);
  return [0, 1, 2, 3].map((chunk) => chunkOf(high, low, chunk));
}

/**
 * The chunk radius a lookup of `maxDistance` bits needs (pigeonhole over the four chunks), and
 * every chunk value within it of `value`; null when that ball is too large to probe.
 */
export function chunkBall(value: number, maxDistance: number): number[] | null {
  const chunkRadius = Math.floor(maxDistance / CHUNKS);
  if (chunkRadius > MAX_CHUNK_RADIUS) return null;
  return Array.from(MASKS.subarray(0, BALL_SIZE[chunkRadius]), (mask) => value ^ mask);
}

function chunkOf(high: number, low: number, chunk: number): number {
  switch (chunk) {
    case 0:
      return high >>> 16;
    case 1:
      return high & 0xffff;
    case 2:
      return low >>> 16;
    default:
      return low & 0xffff;
  }
}

export class SimilarityIndex<K = string> {
  private capacity = 0;
  private count = 0;
  private high = new Uint32Array(0);
  private low = new Uint32Array(0);
  private owners: K[] = [];
  /** next/prev slot in each of the slot's LINKS lists, at [slot * LINKS + list]. */
  private next = new Int32Array(0);
  private prev = new Int32Array(0);
  /**
   * Made with the first hash (1 MB): an analysis builds an index of the few attention and
   * watchlist entries every time, most often of none.
   */
  private bucketHeads: Int32Array[] = [];
  private readonly keyHeads = new Map<K, number>();
  /** Per-slot query stamp, so a hash found through two chunks is reported once. */
  private visited = new Uint32Array(0);
  private queryStamp = 0;

  /** Number of stored hashes (a key with several hashes counts each). */
  get size(): number {
    return this.count;
  }

  has(key: K): boolean {
    return this.keyHeads.has(key);
  }

  /** Stores one more hash for the key; storing the same hash twice for a key is a no-op. */
  add(key: K, hash: string): void {
    const [high, low] = hashToWords(hash);
    for (let slot = this.keyHeads.get(key) ?? NONE; slot !== NONE; slot = this.next[slot * LINKS + KEY_LIST]) {
      if (this.high[slot] === high && this.low[slot] === low) return;
    }
    if (this.count === this.capacity) this.grow();
    const slot = this.count++;
    this.high[slot] = high;
    this.low[slot] = low;
    this.owners[slot] = key;
    this.link(slot);
  }

  /** Removes every hash of the key. */
  remove(key: K): void {
    let slot = this.keyHeads.get(key);
    while (slot !== undefined) {
      this.removeSlot(slot);
      slot = this.keyHeads.get(key);
    }
  }

  /** Every stored hash within maxDistance bits (0-64) of the hash, nearest first. */
  query(hash: string, maxDistance: number): SimilarityMatch<K>[] {
    if (!Number.isInteger(maxDistance) || maxDistance < 0 || maxDistance > 64) {
      throw new RangeError(`maxDistance must be an integer from 0 to 64, got ${maxDistance}`);
    }
    const [high, low] = hashToWords(hash);
    const found = this.usesChunkBuckets(maxDistance) ? this.probeBuckets(high, low, maxDistance) : this.scan(high, low, maxDistance);
    found.sort((a, b) => a.distance - b.distance || a.slot - b.slot);
    return found.map(({ slot, distance }) => ({
      key: this.owners[slot],
      hash: wordsToHash(this.high[slot], this.low[slot]),
      distance,
    }));
  }

  private usesChunkBuckets(maxDistance: number): boolean {
    const chunkRadius = Math.floor(maxDistance / CHUNKS);
    if (chunkRadius > MAX_CHUNK_RADIUS) return false;
    return CHUNKS * BALL_SIZE[chunkRadius] < this.count;
  }

  private probeBuckets(high: number, low: number, maxDistance: number): { slot: number; distance: number }[] {
    const stamp = this.nextStamp();
    const found: { slot: number; distance: number }[] = [];
    const probes = BALL_SIZE[Math.floor(maxDistance / CHUNKS)];
    for (let chunk = 0; chunk < CHUNKS; chunk++) {
      const heads = this.bucketHeads[chunk];
      const value = chunkOf(high, low, chunk);
      for (let probe = 0; probe < probes; probe++) {
        for (let slot = heads[value ^ MASKS[probe]]; slot !== NONE; slot = this.next[slot * LINKS + chunk]) {
          if (this.visited[slot] === stamp) continue;
          this.visited[slot] = stamp;
          const distance = popcount32(this.high[slot] ^ high) + popcount32(this.low[slot] ^ low);
          if (distance <= maxDistance) found.push({ slot, distance });
        }
      }
    }
    return found;
  }

  private scan(high: number, low: number, maxDistance: number): { slot: number; distance: number }[] {
    const found: { slot: number; distance: number }[] = [];
    for (let slot = 0; slot < this.count; slot++) {
      const distance = popcount32(this.high[slot] ^ high) + popcount32(this.low[slot] ^ low);
      if (distance <= maxDistance) found.push({ slot, distance });
    }
    return found;
  }

  private nextStamp(): number {
    if (this.queryStamp === 0xffffffff) {
      this.visited.fill(0);
      this.queryStamp = 0;
    }
    return ++this.queryStamp;
  }

  /** Keeps slots dense: the last slot moves into the freed one. */
  private removeSlot(slot: number): void {
    this.unlink(slot);
    const last = --this.count;
    if (slot !== last) {
      this.unlink(last);
      this.high[slot] = this.high[last];
      this.low[slot] = this.low[last];
      this.owners[slot] = this.owners[last];
      this.link(slot);
    }
    this.owners.length = this.count;
  }

  private link(slot: number): void {
    const base = slot * LINKS;
    for (let list = 0; list < LINKS; list++) {
      const head = this.headOf(slot, list);
      this.next[base + list] = head;
      this.prev[base + list] = NONE;
      if (head !== NONE) this.prev[head * LINKS + list] = slot;
      this.setHead(slot, list, slot);
    }
  }

  private unlink(slot: number): void {
    const base = slot * LINKS;
    for (let list = 0; list < LINKS; list++) {
      const before = this.prev[base + list];
      const after = this.next[base + list];
      if (before === NONE) this.setHead(slot, list, after);
      else this.next[before * LINKS + list] = after;
      if (after !== NONE) this.prev[after * LINKS + list] = before;
    }
  }

  private headOf(slot: number, list: number): number {
    if (list === KEY_LIST) return this.keyHeads.get(this.owners[slot]) ?? NONE;
    return this.bucketHeads[list][chunkOf(this.high[slot], this.low[slot], list)];
  }

  private setHead(slot: number, list: number, head: number): void {
    if (list !== KEY_LIST) {
      this.bucketHeads[list][chunkOf(this.high[slot], this.low[slot], list)] = head;
    } else if (head === NONE) {
      this.keyHeads.delete(this.owners[slot]);
    } else {
      this.keyHeads.set(this.owners[slot], head);
    }
  }

  private grow(): void {
    if (this.capacity === 0) this.bucketHeads = Array.from({ length: CHUNKS }, () => new Int32Array(CHUNK_VALUES).fill(NONE));
    this.capacity = Math.max(1024, this.capacity * 2);
    this.high = enlarged(this.high, this.capacity);
    this.low = enlarged(this.low, this.capacity);
    this.visited = enlarged(this.visited, this.capacity);
    this.next = enlarged(this.next, this.capacity * LINKS);
    this.prev = enlarged(this.prev, this.capacity * LINKS);
  }
}

function enlarged<T extends Uint32Array | Int32Array>(array: T, length: number): T {
  const larger = new (array.constructor as new (length: number) => T)(length);
  larger.set(array);
  return larger;
}
