/**
 * Time of one similarity query at the 0.9 threshold (radius 6 bits) against 100k and 1M stored
 * fingerprints: uniformly random hashes plus planted near-duplicates of every query, which must
 * all be found (checked on every query against the planted set).
 */
import { SimilarityIndex } from '../lib/images/similarity-index.js';
import type { BenchTable } from './run.js';
import { seededRandom } from '../test/helpers/random.js';

export const name = 'index-query';

const SIZES = [100_000, 1_000_000];
const RADIUS = 6;
const QUERIES = 2000;
const PLANTED_PER_QUERY = 3;

const hex = (high: number, low: number) => (high >>> 0).toString(16).padStart(8, '0') + (low >>> 0).toString(16).padStart(8, '0');

function withBitsFlipped(high: number, low: number, bits: number, random: () => number): [number, number] {
  const flipped = new Set<number>();
  while (flipped.size < bits) flipped.add(Math.floor(random() * 64));
  for (const bit of flipped) {
    if (bit < 32) high ^= 1 << bit;
    else low ^= 1 << (bit - 32);
  }
  return [high >>> 0, low >>> 0];
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

export async function run(): Promise<BenchTable[]> {
  const rows: (string | number)[][] = [];
  for (const size of SIZES) {
    const random = seededRandom(size);
    const word = () => Math.floor(random() * 2 ** 32);
    const queries = Array.from({ length: QUERIES }, () => [word(), word()] as [number, number]);
    const index = new SimilarityIndex<number>();
    const planted = new Map<string, Set<number>>();

    const buildStarted = performance.now();
    let key = 0;
    for (const [high, low] of queries) {
      const keys = new Set<number>();
      for (let copy = 0; copy < PLANTED_PER_QUERY; copy++) {
        const bits = Math.floor(random() * (RADIUS + 1));
        const [nearHigh, nearLow] = withBitsFlipped(high, low, bits, random);
        index.add(key, hex(nearHigh, nearLow));
        keys.add(key++);
      }
      planted.set(hex(high, low), keys);
    }
    while (index.size < size) index.add(key++, hex(word(), word()));
    const buildSeconds = (performance.now() - buildStarted) / 1000;

    for (const [high, low] of queries.slice(0, 200)) index.query(hex(high, low), RADIUS);
    const timings: number[] = [];
    let missed = 0;
    let matches = 0;
    for (const [high, low] of queries) {
      const query = hex(high, low);
      const started = performance.now();
      const found = index.query(query, RADIUS);
      timings.push(performance.now() - started);
      matches += found.length;
      const foundKeys = new Set(found.map((match) => match.key));
      for (const plantedKey of planted.get(query) ?? []) if (!foundKeys.has(plantedKey)) missed++;
    }
    if (missed > 0) throw new Error(`index-query: ${missed} planted near-duplicates were not found at ${size} fingerprints`);
    timings.sort((a, b) => a - b);
    rows.push([
      size.toLocaleString('en-US'),
      (percentile(timings, 50) * 1000).toFixed(0),
      (percentile(timings, 95) * 1000).toFixed(0),
      (percentile(timings, 100) * 1000).toFixed(0),
      `${QUERIES * PLANTED_PER_QUERY}/${QUERIES * PLANTED_PER_QUERY}`,
      (matches / QUERIES).toFixed(2),
      buildSeconds.toFixed(1),
      `${Math.round(process.memoryUsage().heapUsed / 2 ** 20 + process.memoryUsage().arrayBuffers / 2 ** 20)}`,
    ]);
  }
  return [
    {
      title: `Similarity index: one query at radius ${RADIUS} (similarity >= 0.9)`,
      columns: ['stored fingerprints', 'median µs', 'p95 µs', 'max µs', 'planted found', 'matches per query', 'build s', 'heap + buffers MiB'],
      rows,
      notes: [
        `${QUERIES} queries per size after 200 warm-up queries; each query has ${PLANTED_PER_QUERY} planted copies at 0-${RADIUS} bits, the rest of the index is uniformly random.`,
        'Multi-index hashing on four 16-bit chunks: radius 6 probes 4 x 17 buckets; the build time is one add() per fingerprint.',
      ],
    },
  ];
}
