import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../helpers/env.js';
import { internalLinks, matchingSet, shuffledNames } from '../helpers/matching-set.js';

/**
 * Issue 29: the same files gave other internal matches from one ingest to the next, depending on
 * which analysis finished first. One set ingested under shuffled names (so in another queue order)
 * and at concurrencies 1, 2 and 4 must give the same matches, each on both sides. Runs on the
 * SQLite file and on D1 (vitest.d1-r2.config.ts).
 */
let env: TestEnv | undefined;
let set: Record<string, Buffer>;
beforeAll(async () => {
  set = await matchingSet();
});
afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

/** Ingests the set under the run's names with the given concurrency; its internal matches as content names. */
async function ingest(seed: number, concurrency: number): Promise<string[]> {
  env = await createTestEnv({ SVC_ANALYSIS_CONCURRENCY: String(concurrency) });
  const names = shuffledNames(Object.keys(set), seed);
  for (const [id, content] of names) await env.blobs.put(`submissions/images/${id}.jpg`, set[content]);
  expect(await (await env.call('POST', '/api/submissions/reload')).json()).toMatchObject({ rejected: [] });
  expect(await env.jobs.drain('analyse')).toBe(names.size);
  const links = await internalLinks(env.db, (id) => names.get(id)!);
  await env.dispose();
  env = undefined;
  return links;
}

const pairOf = (link: string) => link.slice(0, link.indexOf(':')).split(' > ');

describe('internal matches do not depend on order', () => {
  it('gives the same matches, each on both sides, whatever the names, the queue order and the concurrency', { timeout: 600_000 }, async () => {
    const serial = await ingest(1, 1);
    // The edits the issue saw lost (a vertical flip, a watermark) and the others the hashes see are all found.
    const pairs = new Set(serial.map((link) => pairOf(link).join(' > ')));
    for (const edit of ['vflip', 'mirror', 'watermark', 'crop', 'reencoded']) {
      expect(pairs, edit).toContain(`astronaut-original > astronaut-${edit}`);
      expect(pairs, edit).toContain(`astronaut-${edit} > astronaut-original`);
    }
    expect(pairs).toContain('camera-vflip > camera-original');
    expect(pairs).toContain('camera-watermark > camera-original');
    // Every match is on both sides, and never between different photographs.
    for (const pair of pairs) {
      const [mine, other] = pair.split(' > ');
      expect(pairs, pair).toContain(`${other} > ${mine}`);
      expect(mine.split('-')[0], pair).toBe(other.split('-')[0]);
    }
    for (const [seed, concurrency] of [
      [2, 2],
      [3, 4],
    ]) {
      expect(await ingest(seed, concurrency), `names ${seed}, concurrency ${concurrency}`).toEqual(serial);
    }
  });
});
