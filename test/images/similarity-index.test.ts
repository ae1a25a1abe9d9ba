import { describe, expect, it } from 'vitest';
import { hammingDistance } from '../../lib/images/phash.js';
import { SimilarityIndex } from '../../lib/images/similarity-index.js';
import { seededRandom } from '../helpers/random.js';

function randomHash(random: () => number): string {
  const word = () =>
    Math.floor(random() * 2 ** 32)
      .toString(16)
      .padStart(8, '0');
  return word() + word();
}

function flipBits(hash: string, bits: number, random: () => number): string {
  let value = BigInt(`0x${hash}`);
  const flipped = new Set<number>();
  while (flipped.size < bits) flipped.add(Math.floor(random() * 64));
  for (const bit of flipped) value ^= 1n << BigInt(bit);
  return value.toString(16).padStart(16, '0');
}

/** Random hashes plus clusters of near-duplicates at every small distance, as real photo sets have. */
function sampleEntries(count: number, seed: number): { key: string; hash: string }[] {
  const random = seededRandom(seed);
  const entries: { key: string; hash: string }[] = [];
  while (entries.length < count) {
    const base = randomHash(random);
    entries.push({ key: `photo-${entries.length}`, hash: base });
    if (random() < 0.2) {
      for (let copy = 0; copy < 5; copy++) {
        entries.push({ key: `photo-${entries.length}`, hash: flipBits(base, Math.floor(random() * 20), random) });
      }
    }
  }
  return entries;
}

function bruteForce(entries: { key: string; hash: string }[], query: string, maxDistance: number) {
  return entries.map(({ key, hash }) => ({ key, hash, distance: hammingDistance(query, hash) })).filter(({ distance }) => distance <= maxDistance);
}

const byKeyAndHash = (a: { key: string; hash: string }, b: { key: string; hash: string }) => a.key.localeCompare(b.key) || a.hash.localeCompare(b.hash);

describe('SimilarityIndex', () => {
  it('returns exactly what a brute-force scan returns, for every radius from 0 to 64', () => {
    const entries = sampleEntries(6000, 7);
    const index = new SimilarityIndex();
    for (const { key, hash } of entries) index.add(key, hash);
    expect(index.size).toBe(entries.length);

    const random = seededRandom(99);
    for (let maxDistance = 0; maxDistance <= 64; maxDistance++) {
      const queries = [entries[Math.floor(random() * entries.length)].hash, flipBits(entries[Math.floor(random() * entries.length)].hash, 3, random)];
      if (maxDistance <= 16) queries.push(randomHash(random));
      for (const query of queries) {
        const actual = index.query(query, maxDistance);
        const expected = bruteForce(entries, query, maxDistance);
        expect([...actual].sort(byKeyAndHash), `radius ${maxDistance}`).toEqual(expected.sort(byKeyAndHash));
        expect(actual.map(({ distance }) => distance)).toEqual([...actual.map(({ distance }) => distance)].sort((a, b) => a - b));
      }
    }
  });

  it('finds planted near-duplicates at the 0.9 threshold (6 bits) and nothing further', () => {
    const random = seededRandom(3);
    const index = new SimilarityIndex();
    for (let i = 0; i < 20_000; i++) index.add(`noise-${i}`, randomHash(random));
    const submission = randomHash(random);
    for (let bits = 0; bits <= 8; bits++) index.add(`copy-${bits}-bits`, flipBits(submission, bits, random));

    const matches = index.query(submission, 6);
    expect(matches.map(({ key }) => key)).toEqual(['copy-0-bits', 'copy-1-bits', 'copy-2-bits', 'copy-3-bits', 'copy-4-bits', 'copy-5-bits', 'copy-6-bits']);
    expect(matches.map(({ distance }) => distance)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(matches[0].hash).toBe(submission);
  });

  it('lets a key hold several hashes and removes them all together', () => {
    const index = new SimilarityIndex<number>();
    index.add(1, '0000000000000000');
    index.add(1, 'ffffffffffffffff');
    index.add(1, 'ffffffffffffffff');
    index.add(2, '0000000000000001');
    expect(index.size).toBe(3);
    expect(index.query('0000000000000000', 1)).toEqual([
      { key: 1, hash: '0000000000000000', distance: 0 },
      { key: 2, hash: '0000000000000001', distance: 1 },
    ]);
    expect(index.query('fffffffffffffffe', 2)).toEqual([{ key: 1, hash: 'ffffffffffffffff', distance: 1 }]);

    index.remove(1);
    expect(index.has(1)).toBe(false);
    expect(index.size).toBe(1);
    expect(index.query('0000000000000000', 64)).toEqual([{ key: 2, hash: '0000000000000001', distance: 1 }]);
    index.remove(1);
    expect(index.size).toBe(1);
  });

  it('stays exact after heavy removal and re-adding', () => {
    const entries = sampleEntries(5000, 11);
    const index = new SimilarityIndex();
    for (const { key, hash } of entries) {
      index.add(key, hash);
      index.add(key, flipBits(hash, 32, seededRandom(hash.length + key.length)));
    }
    const random = seededRandom(5);
    const kept = entries.filter(() => random() < 0.5);
    const keptKeys = new Set(kept.map(({ key }) => key));
    for (const { key } of entries) if (!keptKeys.has(key)) index.remove(key);
    for (const { key } of kept) index.remove(key);
    for (const { key, hash } of kept) index.add(key, hash);
    expect(index.size).toBe(kept.length);

    for (let i = 0; i < 40; i++) {
      const query = flipBits(kept[Math.floor(random() * kept.length)].hash, i % 8, random);
      for (const maxDistance of [0, 3, 6, 10, 15, 20]) {
        expect([...index.query(query, maxDistance)].sort(byKeyAndHash)).toEqual(bruteForce(kept, query, maxDistance).sort(byKeyAndHash));
      }
    }
  });

  it('refuses malformed hashes and radii', () => {
    const index = new SimilarityIndex();
    expect(() => index.add('a', 'F000000000000000')).toThrow(TypeError);
    expect(() => index.query('000000000000000', 6)).toThrow(TypeError);
    expect(() => index.query('0000000000000000', 65)).toThrow(RangeError);
    expect(() => index.query('0000000000000000', 2.5)).toThrow(RangeError);
    expect(index.size).toBe(0);
  });
});
