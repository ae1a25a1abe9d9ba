import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createEnv, type OwnedEnv } from '../../lib/env.js';
import { createLogger } from '../../lib/log.js';
import { analyseSubmission, compareSubmission } from '../../lib/matching/analysis.js';
import { getSubmissionRow } from '../../lib/repo/submissions.js';
import { createTestEnv, type TestEnv } from '../helpers/env.js';
import { internalLinks, matchingSet, pairVerdicts, shuffledNames, storedRisks } from '../helpers/matching-set.js';

/**
 * Issue 29: the same files gave other internal matches from one ingest to the next, depending on
 * which analysis finished first. One set ingested under shuffled names (so in another queue order)
 * and at concurrencies 1, 2 and 4 must give the same matches, each on both sides. Runs on the
 * SQLite file and on D1 (vitest.d1-r2.config.ts).
 */
let env: TestEnv | undefined;
let serial: TestEnv | undefined;
const isolates: OwnedEnv[] = [];
let set: Record<string, Buffer>;
beforeAll(async () => {
  set = await matchingSet();
});
afterEach(async () => {
  for (const isolate of isolates.splice(0)) await isolate.close();
  await serial?.dispose();
  await env?.dispose();
  [env, serial] = [undefined, undefined];
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

describe('comparisons side by side', () => {
  /** A fresh env with the set stored under the given names and analysed, nothing compared. */
  async function analysed(names: Map<string, string>): Promise<TestEnv> {
    const fresh = await createTestEnv();
    for (const [id, content] of names) await fresh.blobs.put(`submissions/images/${id}.jpg`, set[content]);
    expect(await (await fresh.call('POST', '/api/submissions/reload')).json()).toMatchObject({ rejected: [] });
    for (const id of names.keys())
      expect(await analyseSubmission(fresh, (await getSubmissionRow(fresh.db, id))!)).toMatchObject({ stored: { id, analysis_status: 'done' }, failure: null });
    return fresh;
  }

  /** An env on the shared one's database and blobs with its own images port, as an isolate or another process has; only the test env closes them. */
  async function isolateOn(shared: TestEnv): Promise<OwnedEnv> {
    const db = { prepare: shared.db.prepare.bind(shared.db), batch: shared.db.batch.bind(shared.db), close: () => undefined, open: false };
    return createEnv(shared.config, { storage: { db, blobs: shared.blobs }, clock: shared.clock, log: createLogger(shared.config, { silent: true }) });
  }

  it('three envs comparing at once on one database (isolates on one D1) leave every pair and every risk as one env comparing in turn', {
    timeout: 600_000,
  }, async () => {
    const names = shuffledNames(Object.keys(set), 7);
    const ids = [...names.keys()];
    serial = await analysed(names);
    for (const id of ids) await compareSubmission(serial, id);

    env = await analysed(names);
    for (let n = 0; n < 3; n++) isolates.push(await isolateOn(env));
    await Promise.all(
      isolates.map(async (isolate, n) => {
        for (const id of ids.filter((_, i) => i % 3 === n)) await compareSubmission(isolate, id);
      }),
    );
    const expected = await pairVerdicts(serial.db);
    expect(expected.some((row) => (row as { matched: number }).matched === 1)).toBe(true);
    expect(await pairVerdicts(env.db)).toEqual(expected);
    const contentOf = (id: string) => names.get(id)!;
    expect(await internalLinks(env.db, contentOf)).toEqual(await internalLinks(serial.db, contentOf));
    const risks = await storedRisks(serial.db, contentOf);
    expect(risks.some((risk) => risk.includes('internal_match['))).toBe(true);
    expect(await storedRisks(env.db, contentOf)).toEqual(risks);
  });

  it("judges a submission's other pairs while another process computes one picture's keypoints, to the same verdicts", { timeout: 600_000 }, async () => {
    // The original is compared last: its checks with the flip and the turn each need both sides' keypoints (the pixels confirm neither).
    const compared = 'astronaut-original';
    const names = new Map(['astronaut-original', 'astronaut-vflip', 'astronaut-turned'].map((content) => [content, content]));
    const partners = [...names.keys()].filter((id) => id !== compared);
    /** The set analysed, every other picture compared, and no keypoints kept yet. */
    const beforeTheComparison = async () => {
      const fresh = await analysed(names);
      for (const id of partners) await compareSubmission(fresh, id);
      rmSync(join(fresh.dataDir, 'keypoints'), { recursive: true, force: true });
      return fresh;
    };
    serial = await beforeTheComparison();
    await compareSubmission(serial, compared);
    const expected = await pairVerdicts(serial.db);
    expect(expected).toHaveLength(3);

    // Another process holds each partner's keypoints in turn (its claim, decision 0047), as long as the test wants.
    for (const [claimed, other] of [partners, [...partners].reverse()]) {
      env = await beforeTheComparison();
      const kept = (id: string) => {
        const sha = createHash('sha256').update(set[id]).digest('hex');
        return join(env!.dataDir, 'keypoints', sha.slice(0, 2), `${sha}.kp`);
      };
      mkdirSync(join(kept(claimed), '..'), { recursive: true });
      writeFileSync(`${kept(claimed)}.claim`, '');
      // A process of its own: nothing of the earlier comparisons in memory.
      isolates.push(await isolateOn(env));
      let done = false;
      const comparison = compareSubmission(isolates[0], compared).finally(() => {
        done = true;
      });
      for (let waited = 0; !existsSync(kept(other)) && waited < 60_000; waited += 50) {
        const now = new Date();
        utimesSync(`${kept(claimed)}.claim`, now, now);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(existsSync(kept(other)), `${other} checked while ${claimed} is claimed`).toBe(true);
      expect(done).toBe(false);
      // The claim goes without keypoints (its process stopped): the comparison computes them itself.
      rmSync(`${kept(claimed)}.claim`);
      await comparison;
      expect(await pairVerdicts(env.db), `${claimed} claimed`).toEqual(expected);
      await isolates.pop()?.close();
      await env.dispose();
      env = undefined;
    }
  });
});
