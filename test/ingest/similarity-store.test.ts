import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { compareSubmission, runIndexJob, storedFingerprints } from '../../lib/matching/analysis.js';
import { limitedDatabase } from '../../lib/db/limits.js';
import { migrate } from '../../lib/db/migrate.js';
import { indexEntries } from '../../lib/images/robust.js';
import { contentHash } from '../../lib/images/source.js';
import { backfillFingerprintSlots, fingerprintSlotsStatements } from '../../lib/repo/fingerprint-slots.js';
import { enqueueIndexJobStatement } from '../../lib/repo/jobs.js';
import { listPairsOf, writePairsStatements } from '../../lib/repo/pairs.js';
import { upsertSubmissionStatement } from '../../lib/repo/submissions.js';
import { withLease } from '../../lib/repo/leases.js';
import { createTestEnv, type TestEnv } from '../helpers/env.js';
import { fixturePath, reencoded } from '../helpers/fixtures.js';

/**
 * The similarity index of submissions lives in the database (migration 0014), so every process and
 * Worker isolate sees the same one and none holds it in memory. Runs on the SQLite file and on D1
 * (vitest.d1-r2.config.ts).
 */
let env: TestEnv;
afterEach(async () => env?.dispose());

const count = async (sql: string, ...values: string[]) =>
  (await env.db
    .prepare(sql)
    .bind(...values)
    .first<{ n: number }>())!.n;

async function internalMatches(id: string): Promise<string[]> {
  const review = await (await env.call('GET', `/api/submissions/${id}/review`)).json();
  return review.evidence.filter((e: { group: string }) => e.group === 'internal').map((e: { matched_submission_id: string }) => e.matched_submission_id);
}

async function reloadAndAnalyse(files: Record<string, Buffer>): Promise<void> {
  for (const [name, bytes] of Object.entries(files)) await env.blobs.put(`submissions/images/${name}`, bytes);
  expect(await (await env.call('POST', '/api/submissions/reload')).json()).toMatchObject({ rejected: [] });
  await env.jobs.drain('analyse');
}

const byRow = (a: [number, string], b: [number, string]) => a[0] - b[0] || a[1].localeCompare(b[1]);

async function slotsOf(id: string): Promise<[number, string][]> {
  const rows = (await env.db.prepare('SELECT slot, key FROM fingerprint_slots WHERE submission_id = ?').bind(id).all<{ slot: number; key: string }>()).results;
  return rows.map((r): [number, string] => [r.slot, r.key]).sort(byRow);
}

async function expectedSlots(id: string): Promise<[number, string][]> {
  const row = (await env.db.prepare('SELECT phash, fingerprints FROM submissions WHERE id = ?').bind(id).first<{ phash: string; fingerprints: string }>())!;
  return indexEntries(storedFingerprints(row.phash, row.fingerprints)).sort(byRow);
}

describe('the similarity index in the database', () => {
  it('stores every analysed submission under its slots, replaces them when the file changes, and matches through them', async () => {
    env = await createTestEnv();
    await reloadAndAnalyse({ 'camera.png': readFileSync(fixturePath('camera.png')), 'coffee.png': readFileSync(fixturePath('coffee.png')) });
    const camera = await slotsOf('camera');
    expect(camera).toEqual(await expectedSlots('camera'));
    // The pHash's four chunks and at least the whole image's region key.
    expect(camera.length).toBeGreaterThanOrEqual(8);

    // A copy arriving later is found through the stored slots, on both sides.
    await reloadAndAnalyse({ 'camera-copy.jpg': await reencoded('camera.png', 70) });
    expect(await internalMatches('camera-copy')).toEqual(['camera']);
    expect(await internalMatches('camera')).toEqual(['camera-copy']);

    // New bytes under the same name: its slots are the new picture's, and the old match is gone.
    await reloadAndAnalyse({ 'camera-copy.jpg': readFileSync(fixturePath('rocket.jpg')) });
    expect(await slotsOf('camera-copy')).toEqual(await expectedSlots('camera-copy'));
    expect(await slotsOf('camera-copy')).not.toEqual(camera);
    expect(await internalMatches('camera')).toEqual([]);
  });

  it('after the upgrade that moved the index into the database, an index job writes what was compared before, and no analysis starts until it is done', async () => {
    env = await createTestEnv();
    await reloadAndAnalyse({ 'camera.png': readFileSync(fixturePath('camera.png')), 'coffee.png': readFileSync(fixturePath('coffee.png')) });
    // The database as it was before migration 0014, with these submissions compared: no slots.
    for (const table of ['fingerprint_slots', 'fingerprint_slots_backfill', 'leases']) await env.db.prepare(`DROP TABLE ${table}`).run();
    await env.db.prepare("DELETE FROM schema_migrations WHERE name LIKE '0014%'").run();
    expect(await migrate(env.db)).toEqual(['0014_fingerprint_slots.sql']);
    expect(await count('SELECT COUNT(*) AS n FROM fingerprint_slots')).toBe(0);
    expect(await count("SELECT COUNT(*) AS n FROM jobs WHERE type = 'index' AND status = 'queued'")).toBe(1);

    await env.blobs.put('submissions/images/camera-copy.jpg', await reencoded('camera.png', 70));
    expect(await (await env.call('POST', '/api/submissions/reload')).json()).toMatchObject({ imported: ['camera-copy'] });
    // The copy's analysis waits: compared now, it would miss the photo it copies.
    expect(await env.jobs.drain('analyse')).toBe(0);
    const progress = await (await env.call('GET', '/api/jobs/progress')).json();
    expect(progress.types).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'index', queued: 1 }), expect.objectContaining({ type: 'analyse', queued: 1 })]),
    );

    await env.jobs.drain();
    expect(await count("SELECT COUNT(*) AS n FROM jobs WHERE type = 'index' AND status = 'done'")).toBe(1);
    expect(await internalMatches('camera-copy')).toEqual(['camera']);
    expect(await internalMatches('camera')).toEqual(['camera-copy']);
    expect(await slotsOf('coffee')).toEqual(await expectedSlots('coffee'));
    expect(await count('SELECT COUNT(*) AS n FROM fingerprint_slots_backfill')).toBe(0);
  });

  it('backfills a page at a time, keeping its place across runs, and does nothing once done', async () => {
    env = await createTestEnv();
    await reloadAndAnalyse({
      'a.png': readFileSync(fixturePath('camera.png')),
      'b.png': readFileSync(fixturePath('coffee.png')),
      'c.jpg': readFileSync(fixturePath('rocket.jpg')),
    });
    await env.db.batch([env.db.prepare('DELETE FROM fingerprint_slots'), env.db.prepare("INSERT INTO fingerprint_slots_backfill (after) VALUES ('')")]);
    const fingerprintsOf = (row: { phash: string; fingerprints: string | null }) => storedFingerprints(row.phash, row.fingerprints);
    // One page per run: a run that stops before the end says so and keeps its place.
    expect(await backfillFingerprintSlots(env.db, fingerprintsOf, { page: 1, pages: 1 })).toBe(false);
    expect(await slotsOf('a')).toEqual(await expectedSlots('a'));
    expect(await slotsOf('b')).toEqual([]);
    expect(await backfillFingerprintSlots(env.db, fingerprintsOf, { page: 1, pages: 5 })).toBe(true);
    for (const id of ['a', 'b', 'c']) expect(await slotsOf(id)).toEqual(await expectedSlots(id));
    expect(await count('SELECT COUNT(*) AS n FROM fingerprint_slots_backfill')).toBe(0);
    expect(await backfillFingerprintSlots(env.db, fingerprintsOf, { page: 1, pages: 1 })).toBe(true);
  });
});

describe('pair verdicts', () => {
  it('stores a verdict only while both sides still have the bytes it was judged on', async () => {
    env = await createTestEnv();
    await reloadAndAnalyse({ 'camera.png': readFileSync(fixturePath('camera.png')), 'camera-copy.jpg': await reencoded('camera.png', 70) });
    const [judged] = await listPairsOf(env.db, 'camera');
    expect(judged).toMatchObject({ a: 'camera', b: 'camera-copy', matched: true, threshold: env.config.SVC_SEARCH_RESULT_SIMILARITY_THRESHOLD });
    // The copy's file changes; a comparison that read its older bytes finishes afterwards.
    await env.blobs.put('submissions/images/camera-copy.jpg', readFileSync(fixturePath('rocket.jpg')));
    expect(await (await env.call('POST', '/api/submissions/reload')).json()).toMatchObject({ updated: ['camera-copy'] });
    await env.db.batch(writePairsStatements(env.db, [{ ...judged, similarity: 0.5 }]));
    expect(await listPairsOf(env.db, 'camera')).toEqual([judged]);
    // Compared on its new bytes, the copy matches nothing, and the old verdict goes.
    await env.jobs.drain('analyse');
    expect(await listPairsOf(env.db, 'camera')).toEqual([]);
    expect(await internalMatches('camera')).toEqual([]);
  });

  it('after the upgrade that keeps pair verdicts, matches compared before stay, with their operator marks, as new ones join', async () => {
    env = await createTestEnv();
    await reloadAndAnalyse({ 'camera.png': readFileSync(fixturePath('camera.png')), 'camera-copy.jpg': await reencoded('camera.png', 70) });
    await env.db.prepare("UPDATE evidence SET status = '보류' WHERE submission_id = 'camera' AND group_key = 'internal'").run();
    const marked = await env.db.prepare("SELECT id FROM evidence WHERE submission_id = 'camera' AND group_key = 'internal'").first<{ id: string }>();
    // The database as it was before migration 0022, with these compared: evidence, no pairs.
    await env.db.prepare('DROP TABLE submission_pairs').run();
    await env.db.prepare("DELETE FROM schema_migrations WHERE name LIKE '0022%'").run();
    expect(await migrate(env.db)).toEqual(['0022_submission_pairs.sql']);
    expect(await listPairsOf(env.db, 'camera')).toEqual([expect.objectContaining({ b: 'camera-copy', matched: true, threshold: null })]);

    await reloadAndAnalyse({ 'camera-third.jpg': await reencoded('camera.png', 50) });
    expect((await internalMatches('camera')).sort()).toEqual(['camera-copy', 'camera-third']);
    expect((await internalMatches('camera-copy')).sort()).toEqual(['camera', 'camera-third']);
    const kept = await env.db.prepare("SELECT status FROM evidence WHERE id = ? AND matched_submission_id = 'camera-copy'").bind(marked!.id).first();
    expect(kept).toEqual({ status: '보류' });
  });
});

describe('the index job', () => {
  it("indexes as much as one Worker invocation's 1,000 D1 queries allow, queues its next run, and finishes there", async () => {
    env = await createTestEnv();
    const now = env.clock.now().toISOString();
    const ids = Array.from({ length: 1005 }, (_, i) => `s${String(i).padStart(4, '0')}`);
    for (let start = 0; start < ids.length; start += 100) {
      const page = ids.slice(start, start + 100);
      await env.db.batch([
        upsertSubmissionStatement(
          env.db,
          page.map((id) => ({
            id,
            title: id,
            file: `images/${id}.jpg`,
            origin: 'quick' as const,
            submitted_at: '2026-11-23 09:00',
            submitted_at_epoch: 0,
            width: 10,
            height: 10,
            format: 'jpeg',
            bytes: 1,
            sha256: id.padEnd(64, '0'),
          })),
          now,
        ),
        env.db
          .prepare("UPDATE submissions SET analysis_status = 'done', phash = '0123456789abcdef' WHERE id IN (SELECT value FROM json_each(?))")
          .bind(JSON.stringify(page)),
      ]);
    }
    await env.db.batch([env.db.prepare("INSERT INTO fingerprint_slots_backfill (after) VALUES ('')"), enqueueIndexJobStatement(env.db, now)]);

    // One run under the Worker's guard: D1LimitExceeded would throw here.
    expect(await runIndexJob({ ...env, db: limitedDatabase(env.db) })).toEqual({ status: 'done' });
    expect(await count('SELECT COUNT(DISTINCT submission_id) AS n FROM fingerprint_slots')).toBe(1000);
    expect(await count("SELECT COUNT(*) AS n FROM jobs WHERE type = 'index' AND status = 'queued'")).toBe(2);

    await env.jobs.drain('index');
    // Four rows each: a bare pHash, one per 16-bit chunk.
    expect(await count('SELECT COUNT(*) AS n FROM fingerprint_slots')).toBe(4 * 1005);
    expect(await count("SELECT COUNT(*) AS n FROM jobs WHERE type = 'index' AND status = 'queued'")).toBe(0);
    expect(await count('SELECT COUNT(*) AS n FROM fingerprint_slots_backfill')).toBe(0);
  });
});

describe('the geometric check of near-threshold pairs', () => {
  const names = ['astronaut.png', 'camera.png', 'chelsea.png', 'coffee.png', 'rocket.jpg'];
  const ids = ['astronaut', 'camera', 'chelsea', 'coffee', 'rocket'];

  /** The five fixtures analysed, then given bare pHashes that put every pair of them in the near band of each other. */
  async function nearPairs(): Promise<void> {
    env = await createTestEnv();
    await reloadAndAnalyse(Object.fromEntries(names.map((name) => [name, readFileSync(fixturePath(name))])));
    // Bare pHashes 8 to 11 bits from the first one: 0.875-0.83 similar, under the 0.9 threshold
    // (no hash match) and within 0.1 of it (near); among themselves 1 to 3 bits apart (matches).
    const phashes = ['0000000000000000', '00000000000000ff', '00000000000001ff', '00000000000003ff', '00000000000007ff'];
    for (const [i, id] of ids.entries()) {
      await env.db.prepare('UPDATE submissions SET phash = ?, fingerprints = NULL WHERE id = ?').bind(phashes[i], id).run();
      await env.db.batch(fingerprintSlotsStatements(env.db, id, { phash: phashes[i], variants: {} }));
    }
  }

  it('checks every near-threshold pair once, keeps its verdict, and checks none again when the submission is compared again', async () => {
    await nearPairs();
    const files = new Map(names.map((name, i) => [ids[i], readFileSync(fixturePath(name))]));
    const checked: string[] = [];
    const matchGeometry = env.images.matchGeometry.bind(env.images);
    env.images.matchGeometry = (query, reference) => {
      const pair = [query, reference].map((image) => [...files].find(([, file]) => contentHash(file) === image.sha256)![0]);
      checked.push(pair.sort().join('+'));
      return matchGeometry(query, reference);
    };
    await compareSubmission(env, 'astronaut');
    expect(checked.sort()).toEqual(['astronaut+camera', 'astronaut+chelsea', 'astronaut+coffee', 'astronaut+rocket']);
    expect(await count('SELECT COUNT(*) AS n FROM submission_pairs WHERE a = ? AND matched = 0', 'astronaut')).toBe(4);
    checked.length = 0;
    await compareSubmission(env, 'astronaut');
    expect(checked).toEqual([]);
  });

  it('reads a file only for a check the images port cannot answer from what it keeps, and judges no pair on a file that no longer holds its bytes', async () => {
    await nearPairs();
    const reads: string[] = [];
    const get = env.blobs.get.bind(env.blobs);
    env.blobs.get = (key) => {
      reads.push(key);
      return get(key);
    };
    const cameraFile = `submissions/images/camera.png`;
    await env.blobs.put(cameraFile, readFileSync(fixturePath('rocket.jpg')));
    await compareSubmission(env, 'astronaut');
    expect(reads).toContain(cameraFile);
    // Camera's file now holds other bytes: that pair is left unjudged, the others are judged.
    expect(await count('SELECT COUNT(*) AS n FROM submission_pairs WHERE a = ?', 'astronaut')).toBe(3);
    expect(await count("SELECT COUNT(*) AS n FROM submission_pairs WHERE a = 'astronaut' AND b = 'camera'")).toBe(0);

    await env.blobs.put(cameraFile, readFileSync(fixturePath('camera.png')));
    await env.db.prepare("DELETE FROM submission_pairs WHERE a = 'astronaut'").run();
    reads.length = 0;
    await compareSubmission(env, 'astronaut');
    // The three pairs checked before are answered from what the port kept; camera's file is read again.
    expect(reads.filter((key) => key.startsWith('submissions/'))).toEqual([cameraFile]);
    expect(await count('SELECT COUNT(*) AS n FROM submission_pairs WHERE a = ?', 'astronaut')).toBe(4);
  });

  it('fails the comparison with the storage error when a file cannot be read, so that its job tries again, and judges the pair once it can', async () => {
    await nearPairs();
    const get = env.blobs.get.bind(env.blobs);
    env.blobs.get = async (key) => {
      if (key === 'submissions/images/camera.png') throw new Error('disk read failed');
      return get(key);
    };
    await expect(compareSubmission(env, 'astronaut')).rejects.toThrow('disk read failed');
    expect(await count('SELECT COUNT(*) AS n FROM submission_pairs WHERE a = ?', 'astronaut')).toBe(0);
    env.blobs.get = get;
    await compareSubmission(env, 'astronaut');
    expect(await count('SELECT COUNT(*) AS n FROM submission_pairs WHERE a = ?', 'astronaut')).toBe(4);
  });
});

describe('a lease', () => {
  it('lets one holder in at a time across separate callers, and frees a lease whose holder died when it expires', async () => {
    env = await createTestEnv();
    const inside: string[] = [];
    let overlapped = false;
    const hold = (who: string) =>
      withLease(env.db, env.clock, 'reload', async () => {
        if (inside.length > 0) overlapped = true;
        inside.push(who);
        await new Promise((resolve) => setTimeout(resolve, 30));
        inside.splice(inside.indexOf(who), 1);
        return who;
      });
    expect(await Promise.all(['a', 'b', 'c'].map(hold))).toEqual(['a', 'b', 'c']);
    expect(overlapped).toBe(false);
    expect(await count('SELECT COUNT(*) AS n FROM leases')).toBe(0);

    // A holder that died left its lease; it is taken once expired, not before.
    await env.db
      .prepare("INSERT INTO leases (name, holder, expires_at) VALUES ('reload', 'dead', ?)")
      .bind(new Date(env.clock.now().getTime() + 60_000).toISOString())
      .run();
    let entered = false;
    const waiting = withLease(env.db, env.clock, 'reload', async () => (entered = true));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(entered).toBe(false);
    env.clock.advance(61_000);
    await waiting;
    expect(entered).toBe(true);
  });
});
