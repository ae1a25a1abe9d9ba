import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { referenceOf, verifyImage } from '../../lib/enrichment/verify.js';
import { refreshSimilarity, storedFingerprints } from '../../lib/matching/analysis.js';
import { matchFingerprints } from '../../lib/images/robust.js';
import { getSubmissionRow } from '../../lib/repo/submissions.js';
import { createTestEnv, type TestEnv } from '../helpers/env.js';
import { copyFixture, fixturePath } from '../helpers/fixtures.js';
import { turnedPale } from '../helpers/geometry-transforms.js';
import { useFakeProviders } from '../helpers/fake-world.js';

/** Issue 7's promise: edited copies of a watchlisted photo are caught, and say how. */
let env: TestEnv;
const fakes = useFakeProviders();

const astronaut = () => sharp(fixturePath('astronaut.png'));
const copies: Record<string, () => Promise<Buffer>> = {
  mirrored: () => astronaut().flop().jpeg({ quality: 85 }).toBuffer(),
  turned: () => astronaut().rotate(90).jpeg({ quality: 85 }).toBuffer(),
  cropped: () => astronaut().extract({ left: 51, top: 51, width: 410, height: 410 }).jpeg({ quality: 85 }).toBuffer(),
  framed: () => astronaut().extend({ top: 40, bottom: 40, left: 40, right: 40, background: '#ffffff' }).jpeg({ quality: 85 }).toBuffer(),
};

/** Two different pale, low-contrast photographs turned by the same 45 degrees on black. */
const turned: Record<string, () => Promise<Buffer>> = {
  'turned-chelsea': () => turnedPale(fixturePath('chelsea.png'), 0.35, 45),
  'turned-rocket': () => turnedPale(fixturePath('rocket.jpg'), 0.35, 45),
};

async function evidenceOf(id: string) {
  return (await (await env.call('GET', `/api/submissions/${id}/review`)).json()) as {
    evidence: { group: string; match_transform: string | null; match_inliers: number | null; matched_submission_id: string | null; similarity: number }[];
    groups: { key: string; label: string }[];
    submission: { risk: { level: string }; decision: unknown };
  };
}

beforeAll(async () => {
  env = await createTestEnv();
  copyFixture('astronaut.png', env.paths.imagesDir);
  for (const name of ['camera.png', 'chelsea.png', 'coffee.png', 'rocket.jpg']) copyFixture(name, env.paths.imagesDir);
  await env.call('POST', '/api/submissions/reload');
  await env.jobs.drain('analyse');
  const decided = await (await env.call('POST', '/api/submissions/astronaut/decision', { decision: '반려', evidence_ids: [] })).json();
  await env.call('POST', `/api/knowledge/${decided.knowledge_entry.id}/promote-watchlist`);
  for (const [name, make] of Object.entries({ ...copies, ...turned })) writeFileSync(join(env.paths.imagesDir, `${name}.jpg`), await make());
  await env.call('POST', '/api/submissions/reload');
  await env.jobs.drain('analyse');
});
afterAll(async () => {
  await env.dispose();
});

describe('edited copies of a watchlisted photo', () => {
  it.each([
    ['mirrored', /hflip/],
    ['turned', /rot(90|270)/],
    ['cropped', /crop/],
    ['framed', /trimmed/],
  ])('the %s copy lands in 확정 DB 근거 with how it matched', async (id, transform) => {
    const review = await evidenceOf(id);
    const watchlist = review.evidence.filter((e) => e.group === 'watchlist');
    expect(watchlist).toHaveLength(1);
    expect(watchlist[0].matched_submission_id).toBe('astronaut');
    expect(watchlist[0].match_transform).toMatch(transform);
    // The region hashes alone matched it, so the geometric check ran too and says where.
    expect(watchlist[0].match_inliers).toBeGreaterThanOrEqual(20);
    expect(review.groups[0]).toEqual(expect.objectContaining({ key: 'watchlist', label: '확정 DB 근거' }));
    expect(review.submission.risk.level).toBe('high');
    expect(review.submission.decision).toBeNull();
  });

  it('never matches two different photographs', async () => {
    for (const id of ['camera', 'chelsea', 'coffee', 'rocket']) {
      const review = await evidenceOf(id);
      expect(review.evidence.filter((e) => ['internal', 'watchlist', 'attention'].includes(e.group))).toEqual([]);
    }
  });

  it('verifies a mirrored web copy as a match and says so', async () => {
    const url = fakes.web.addImage('/mirrored.jpg', await copies.mirrored(), 'image/jpeg');
    const other = fakes.web.addImage('/coffee.png', await sharp(fixturePath('coffee.png')).png().toBuffer());
    const row = (await getSubmissionRow(env.db, 'astronaut'))!;
    const reference = referenceOf(storedFingerprints(row.phash!, row.fingerprints), readFileSync(fixturePath('astronaut.png')));
    const allowLocal = { ...env, config: { ...env.config, SVC_ALLOW_PRIVATE_DOWNLOADS: true } };
    const mirrored = await verifyImage(allowLocal, 'astronaut', reference, url);
    expect(mirrored).toMatchObject({ matched: true, match: { match_transform: 'hflip' } });
    // The region hashes alone matched it, so the geometric check ran too and says where.
    expect(mirrored.match.match_inliers).toBeGreaterThanOrEqual(20);
    expect(mirrored.similarity).toBeLessThan(0.9);
    expect(await verifyImage(allowLocal, 'astronaut', reference, other)).toMatchObject({ matched: false, match: {} });
  });
});

describe('different photographs turned by about the same angle on black', () => {
  const fingerprintsOf = async (id: string) => {
    const row = (await getSubmissionRow(env.db, id))!;
    return storedFingerprints(row.phash!, row.fingerprints);
  };

  it('are no internal match, though their region hashes agree: the geometric check finds them disjoint', async () => {
    // The region hashes alone match the two (the pHash does not): what the veto is for.
    const hashed = matchFingerprints(
      await fingerprintsOf('turned-chelsea'),
      await fingerprintsOf('turned-rocket'),
      env.config.SVC_SEARCH_RESULT_SIMILARITY_THRESHOLD,
    );
    expect(hashed).not.toBeNull();
    expect(hashed!.plainSimilarity).toBeLessThan(env.config.SVC_SEARCH_RESULT_SIMILARITY_THRESHOLD);
    for (const id of Object.keys(turned)) {
      const review = await evidenceOf(id);
      expect(review.evidence.filter((e) => ['internal', 'watchlist', 'attention'].includes(e.group))).toEqual([]);
      expect(review.submission.risk.level).not.toBe('high');
    }
  });

  it('are no watchlist match either, once one of them is confirmed', async () => {
    const decided = await (await env.call('POST', '/api/submissions/turned-rocket/decision', { decision: '반려', evidence_ids: [] })).json();
    await env.call('POST', `/api/knowledge/${decided.knowledge_entry.id}/promote-watchlist`);
    await refreshSimilarity(env, ['turned-chelsea', 'mirrored']);
    const review = await evidenceOf('turned-chelsea');
    expect(review.evidence.filter((e) => ['internal', 'watchlist', 'attention'].includes(e.group))).toEqual([]);
    // The same refresh keeps the mirrored copy of the watchlisted astronaut, which the region hashes alone match too.
    expect((await evidenceOf('mirrored')).evidence.filter((e) => e.group === 'watchlist').map((e) => e.matched_submission_id)).toEqual(['astronaut']);
  });

  it('are no web match either', async () => {
    const url = fakes.web.addImage('/turned-rocket.jpg', await turned['turned-rocket'](), 'image/jpeg');
    const reference = referenceOf(await fingerprintsOf('turned-chelsea'), await turned['turned-chelsea']());
    const allowLocal = { ...env, config: { ...env.config, SVC_ALLOW_PRIVATE_DOWNLOADS: true } };
    expect(await verifyImage(allowLocal, 'turned-chelsea', reference, url)).toMatchObject({ matched: false, match: {} });
  });
});
