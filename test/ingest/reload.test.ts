import { createHash } from 'node:crypto';
import { appendFileSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { D1_MAX_BOUND_VALUES, D1_MAX_QUERIES, limitedDatabase } from '../../lib/db/limits.js';
import { quickId, quickTitle } from '../../lib/ingest/candidate.js';
import { reload as reloadFiles } from '../../lib/ingest/reload.js';
import { countedBlobStore, SubrequestLimitExceeded, subrequestBudget } from '../../lib/net/subrequests.js';
import { createTestEnv, type TestEnv } from '../helpers/env.js';
import { copyFixture, fixturePath, reencoded } from '../helpers/fixtures.js';
import type { BlobStore, Env } from '../../lib/ports.js';

let env: TestEnv;

/** A reload, then the analyses it queued (enrichment stays queued: no provider is set up here). */
async function reload() {
  const res = await env.call('POST', '/api/submissions/reload');
  expect(res.status).toBe(200);
  const report = await res.json();
  await env.jobs.drain('analyse');
  return report;
}

async function review(id: string) {
  const row = await env.db.prepare('SELECT * FROM submissions WHERE id = ?').bind(id).first<Record<string, unknown>>();
  const evidence = (await env.db.prepare('SELECT * FROM evidence WHERE submission_id = ?').bind(id).all<Record<string, unknown>>()).results;
  return { row: row!, evidence };
}

describe('reload of the fixture photos', () => {
  beforeAll(async () => {
    env = await createTestEnv();
    for (const name of ['astronaut.png', 'camera.png', 'coffee.png', 'chelsea.png', 'rocket.jpg']) copyFixture(name, env.paths.imagesDir);
    writeFileSync(join(env.paths.imagesDir, 'camera_copy.jpg'), await reencoded('camera.png', 70));
  });
  afterAll(async () => env.dispose());

  it('imports every image with fingerprints, faces, a thumbnail and queued jobs', async () => {
    const report = await reload();
    expect(report.imported.sort()).toEqual(['astronaut', 'camera', 'camera-copy', 'chelsea', 'coffee', 'rocket']);
    expect(report).toMatchObject({ updated: [], unchanged: 0, rejected: [], queued_jobs: 6 });
    const astronaut = await review('astronaut');
    expect(astronaut.row).toMatchObject({ analysis_status: 'done', format: 'png', width: 512, height: 512, title: 'astronaut', origin: 'quick' });
    expect(astronaut.row.phash).toMatch(/^[0-9a-f]{16}$/);
    expect(JSON.parse(String(astronaut.row.faces))).toHaveLength(1);
    expect(JSON.parse(String((await review('camera')).row.faces))).toHaveLength(1);
    expect(JSON.parse(String((await review('coffee')).row.faces))).toEqual([]);
    expect(astronaut.row.thumb_path).toBe('thumbs/astronaut.jpg');
    const thumb = await sharp(join(env.dataDir, String(astronaut.row.thumb_path))).metadata();
    expect(thumb).toMatchObject({ format: 'jpeg', width: 320, height: 320 });
    expect(thumb.exif).toBeUndefined();
    // Each finished analysis queued its enrichment.
    const jobs = (await (await env.call('GET', '/api/jobs')).json()).jobs as { type: string; status: string }[];
    expect(jobs.filter((j) => j.type === 'analyse' && j.status === 'done')).toHaveLength(6);
    expect(jobs.filter((j) => j.type === 'enrich' && j.status === 'queued')).toHaveLength(6);
  });

  it('matches a photo and its re-encoded copy on both sides, and nothing else', async () => {
    const camera = await review('camera');
    const copy = await review('camera-copy');
    expect(camera.evidence.map((e) => [e.group_key, e.matched_submission_id])).toEqual([['internal', 'camera-copy']]);
    expect(copy.evidence.map((e) => [e.group_key, e.matched_submission_id])).toEqual([['internal', 'camera']]);
    expect(Number(copy.evidence[0].similarity)).toBeGreaterThanOrEqual(0.9);
    // The match (25) and the cameraman's face (10).
    expect(copy.row).toMatchObject({ risk_level: 'medium', risk_score: 35 });
    expect(JSON.parse(String(copy.row.risk_signals))).toEqual([
      { code: 'internal_match', label: '내부 유사 제출물', weight: 25, evidence_ids: [copy.evidence[0].id] },
      { code: 'faces', label: '얼굴 포함 (초상권)', weight: 10, evidence_ids: [] },
    ]);
    for (const id of ['astronaut', 'coffee', 'chelsea', 'rocket']) expect((await review(id)).evidence).toEqual([]);
  });

  it('changes nothing on a second reload', async () => {
    const before = await review('camera');
    const report = await reload();
    expect(report).toMatchObject({ imported: [], updated: [], unchanged: 6, rejected: [], queued_jobs: 0 });
    expect((await review('camera')).evidence.map((e) => e.id)).toEqual(before.evidence.map((e) => e.id));
  });

  it('re-analyses changed bytes and drops the match that no longer holds', async () => {
    copyFixture('rocket.jpg', env.paths.imagesDir, 'camera_copy.jpg');
    const report = await reload();
    expect(report.updated).toEqual(['camera-copy']);
    expect(report.queued_jobs).toBe(1);
    // Its first enrichment job has not run yet: that one waiting job covers the new bytes.
    const jobs = (await (await env.call('GET', '/api/jobs?status=queued')).json()).jobs;
    expect(jobs.filter((j: { submission_id: string }) => j.submission_id === 'camera-copy')).toMatchObject([{ type: 'enrich' }]);
    expect((await review('camera')).evidence).toEqual([]);
    expect((await review('rocket')).evidence.map((e) => e.matched_submission_id)).toEqual(['camera-copy']);
  });
});

describe('the registry and refusals', () => {
  beforeEach(async () => {
    env = await createTestEnv({ SVC_MAX_IMAGE_PIXELS: '300000' });
  });
  afterEach(async () => env.dispose());

  const writeRegistry = (entries: unknown) => writeFileSync(env.paths.registryFile, typeof entries === 'string' ? entries : JSON.stringify(entries));
  const entry = (id: string, file: string, extra: Record<string, unknown> = {}) => ({
    id,
    title: `Title ${id}`,
    file,
    width: 512,
    height: 512,
    submitted_at: '2026-03-01 09:30',
    ...extra,
  });

  it('imports explicit entries with the real epoch of a Seoul wall-clock time, and never the same file twice', async () => {
    copyFixture('astronaut.png', env.paths.imagesDir);
    copyFixture('coffee.png', env.paths.imagesDir);
    writeRegistry([entry('SUB-001', 'images/astronaut.png')]);
    const report = await reload();
    expect(report.imported.sort()).toEqual(['SUB-001', 'coffee']);
    const { row } = await review('SUB-001');
    expect(row).toMatchObject({ title: 'Title SUB-001', submitted_at: '2026-03-01 09:30', origin: 'registry' });
    expect(row.submitted_at_epoch).toBe(Date.UTC(2026, 2, 1, 0, 30) / 1000);
    const res = await env.call('GET', '/api/jobs');
    expect((await res.json()).jobs.map((j: { type: string; submission_id: string; status: string }) => [j.type, j.submission_id, j.status]).sort()).toEqual([
      ['analyse', 'SUB-001', 'done'],
      ['analyse', 'coffee', 'done'],
      ['enrich', 'SUB-001', 'queued'],
      ['enrich', 'coffee', 'queued'],
    ]);
  });

  it('updates a changed title or time without analysing again', async () => {
    copyFixture('astronaut.png', env.paths.imagesDir);
    writeRegistry([entry('SUB-001', 'images/astronaut.png')]);
    await reload();
    writeRegistry([entry('SUB-001', 'images/astronaut.png', { title: 'New title', submitted_at: '2026-03-02 10:00' })]);
    const report = await reload();
    expect(report).toMatchObject({ imported: [], updated: ['SUB-001'], queued_jobs: 0 });
    expect((await review('SUB-001')).row).toMatchObject({
      title: 'New title',
      submitted_at: '2026-03-02 10:00',
      submitted_at_epoch: Date.UTC(2026, 2, 2, 1, 0) / 1000,
    });
  });

  it('takes new bytes and a new title of an entry at once, and the queue finds it by the new title', async () => {
    copyFixture('astronaut.png', env.paths.imagesDir);
    writeRegistry([entry('SUB-001', 'images/astronaut.png')]);
    await reload();
    // The new title shares letters with the id, as most do: the search grams of both are written once.
    copyFixture('camera.png', env.paths.imagesDir, 'astronaut.png');
    writeRegistry([entry('SUB-001', 'images/astronaut.png', { title: 'SUB-001 retaken' })]);
    expect(await reload()).toMatchObject({ imported: [], updated: ['SUB-001'], queued_jobs: 1 });
    expect((await review('SUB-001')).row).toMatchObject({ title: 'SUB-001 retaken', bytes: readFileSync(fixturePath('camera.png')).length });
    const found = await (await env.call('GET', `/api/review-queue?q=${encodeURIComponent('retaken')}`)).json();
    expect(found.items.map((item: { id: string }) => item.id)).toEqual(['SUB-001']);
  });

  it('refuses each bad entry or file with its reason while the rest import', async () => {
    copyFixture('astronaut.png', env.paths.imagesDir);
    copyFixture('camera.png', env.paths.imagesDir);
    writeFileSync(join(env.paths.imagesDir, 'notes.jpg'), 'this is text, not a picture');
    writeFileSync(
      join(env.dataDir, 'outside.png'),
      await sharp({ create: { width: 8, height: 8, channels: 3, background: '#fff' } })
        .png()
        .toBuffer(),
    );
    symlinkSync(join(env.dataDir, 'outside.png'), join(env.paths.imagesDir, 'escape.png'));
    writeFileSync(
      join(env.paths.imagesDir, 'huge.png'),
      await sharp({ create: { width: 1000, height: 1000, channels: 3, background: '#abc' } })
        .png()
        .toBuffer(),
    );
    writeFileSync(
      join(env.paths.imagesDir, 'drawing.svg'),
      '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><rect width="64" height="40" fill="red"/></svg>',
    );
    writeRegistry([
      entry('ok', 'images/astronaut.png'),
      entry('dotdot', 'images/../outside.png'),
      entry('absolute', '/etc/passwd'),
      entry('linked', 'images/escape.png'),
      entry('missing', 'images/nope.png'),
      entry('ok', 'images/camera.png'),
      entry('bad-time', 'images/camera.png', { submitted_at: '2026-02-30 10:00' }),
      entry('bad id!', 'images/camera.png'),
      { id: 'no-title', file: 'images/camera.png' },
      'not an object',
    ]);
    const report = await reload();
    // camera.png is named by entries (refused ones too), so it is not imported as a quick submission.
    expect(report.imported.sort()).toEqual(['drawing', 'ok']);
    const reasons = Object.fromEntries(
      report.rejected.map((r: { id: string | null; file: string | null; reason: string }) => [r.id ?? r.file ?? 'none', r.reason]),
    );
    expect(reasons.dotdot).toMatch(/leaves data\/submissions\/images/);
    expect(reasons.absolute).toMatch(/relative path/);
    expect(reasons.linked).toMatch(/link that leaves/);
    expect(reasons.missing).toBe('file does not exist');
    expect(reasons.ok).toBe('duplicate id ok in the registry');
    expect(reasons['bad-time']).toBe('submitted_at 2026-02-30 10:00 is not a real time');
    expect(reasons['bad id!']).toMatch(/^invalid entry: id: /);
    expect(reasons['no-title']).toMatch(/invalid entry/);
    expect(reasons.none).toMatch(/invalid entry/);
    expect(reasons.notes).toBe('not an image');
    expect(reasons.huge).toMatch(/1000000 pixels, more than the limit of 300000/);
    expect(report.rejected).toHaveLength(11);
    expect((await review('drawing')).row).toMatchObject({ format: 'svg', analysis_status: 'done' });
  });

  it('imports nothing from a registry that is not JSON, says why, and keeps what is stored', async () => {
    copyFixture('astronaut.png', env.paths.imagesDir);
    writeRegistry([entry('SUB-001', 'images/astronaut.png')]);
    await reload();
    writeRegistry('[{"id": "SUB-001", "title": "broken"');
    copyFixture('rocket.jpg', env.paths.imagesDir);
    const report = await reload();
    expect(report.rejected).toEqual([{ file: 'submissions.json', id: null, reason: expect.stringMatching(/^registry is not valid JSON/) }]);
    expect(report.imported).toEqual(['rocket']);
    expect((await review('SUB-001')).row).toMatchObject({ title: 'Title SUB-001', analysis_status: 'done' });
    expect(await env.db.prepare("SELECT COUNT(*) AS n FROM submissions WHERE file = 'images/astronaut.png'").first()).toEqual({ n: 1 });
  });

  it('refuses a registry id that a quick submission of another file already holds', async () => {
    copyFixture('astronaut.png', env.paths.imagesDir, 'photo.png');
    await reload();
    copyFixture('rocket.jpg', env.paths.imagesDir);
    writeRegistry([entry('photo', 'images/rocket.jpg')]);
    const report = await reload();
    expect(report.rejected).toEqual([
      { file: 'images/rocket.jpg', id: 'photo', reason: 'id photo is already used by the quick submission of images/photo.png' },
    ]);
    expect(report.imported).toEqual([]);
    expect((await review('photo')).row).toMatchObject({ file: 'images/photo.png', origin: 'quick' });
  });

  it('gives colliding quick names unique ids that stay stable across reloads', async () => {
    copyFixture('astronaut.png', env.paths.imagesDir, 'Photo.png');
    copyFixture('rocket.jpg', env.paths.imagesDir, 'photo.jpg');
    const first = await reload();
    expect(first.imported.sort()).toEqual(['photo', 'photo-2']);
    const ids = (await env.db.prepare('SELECT id, file FROM submissions ORDER BY file').all()).results;
    utimesSync(join(env.paths.imagesDir, 'photo.jpg'), new Date('2026-01-01T00:00:00Z'), new Date('2026-01-01T00:00:00Z'));
    await reload();
    expect((await env.db.prepare('SELECT id, file FROM submissions ORDER BY file').all()).results).toEqual(ids);
  });
});

describe('reload as an index pass', () => {
  beforeEach(async () => {
    env = await createTestEnv();
  });
  afterEach(async () => env.dispose());

  it('imports nothing twice when two reloads run at once', async () => {
    for (const name of ['astronaut.png', 'camera.png', 'coffee.png']) copyFixture(name, env.paths.imagesDir);
    const [a, b] = await Promise.all(
      [env.call('POST', '/api/submissions/reload'), env.call('POST', '/api/submissions/reload')].map(async (r) => (await r).json()),
    );
    expect([...a.imported, ...b.imported].sort()).toEqual(['astronaut', 'camera', 'coffee']);
    expect(a.unchanged + b.unchanged).toBe(3);
    expect(a.queued_jobs + b.queued_jobs).toBe(3);
    expect(await env.db.prepare("SELECT COUNT(*) AS n FROM jobs WHERE type = 'analyse'").first()).toEqual({ n: 3 });
  });

  it('waits for a reload running in another process or Worker isolate (its lease in the database)', async () => {
    copyFixture('camera.png', env.paths.imagesDir);
    const expires = new Date(env.clock.now().getTime() + 60_000).toISOString();
    await env.db.prepare("INSERT INTO leases (name, holder, expires_at) VALUES ('reload', 'another isolate', ?)").bind(expires).run();
    const waiting = reloadFiles(env);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await env.db.prepare('SELECT COUNT(*) AS n FROM submissions').first()).toEqual({ n: 0 });
    // The other reload ends and gives the lease back.
    await env.db.prepare("DELETE FROM leases WHERE name = 'reload'").run();
    expect((await waiting).imported).toEqual(['camera']);
    expect(await env.db.prepare('SELECT COUNT(*) AS n FROM leases').first()).toEqual({ n: 0 });
  });

  it('does not read a file whose size, mtime and inode are unchanged, and reads it again when they change', async () => {
    copyFixture('camera.png', env.paths.imagesDir);
    const file = join(env.paths.imagesDir, 'camera.png');
    // A whole-second time, so that setting it again gives exactly the same stat (no sub-ms part).
    const mtime = new Date('2026-04-01T00:00:00Z');
    utimesSync(file, mtime, mtime);
    await reload();
    // Same size and mtime, other bytes: proof that the bytes were not read.
    const bytes = readFileSync(file);
    bytes[bytes.length - 20] ^= 0xff;
    writeFileSync(file, bytes);
    utimesSync(file, mtime, mtime);
    expect(await reload()).toMatchObject({ imported: [], updated: [], unchanged: 1, queued_jobs: 0 });
    // A touched file is read and hashed: the same bytes stay unchanged, with the new mtime recorded.
    copyFixture('camera.png', env.paths.imagesDir);
    utimesSync(file, new Date('2026-05-01T00:00:00Z'), new Date('2026-05-01T00:00:00Z'));
    expect(await reload()).toMatchObject({ imported: [], updated: ['camera'], queued_jobs: 0 });
    expect(await reload()).toMatchObject({ imported: [], updated: [], unchanged: 1, queued_jobs: 0 });
  });

  it('reads a refused file once: unchanged, it is refused again from the record; changed into an image, it imports', async () => {
    copyFixture('camera.png', env.paths.imagesDir);
    writeFileSync(join(env.paths.imagesDir, 'notes.jpg'), 'this is text, not a picture');
    const refusal = [{ file: 'images/notes.jpg', id: 'notes', reason: 'not an image' }];
    expect(await reload()).toMatchObject({ imported: ['camera'], rejected: refusal });
    const reads: string[] = [];
    const get = env.blobs.get.bind(env.blobs);
    env.blobs.get = (key) => (reads.push(key), get(key));
    expect(await reload()).toMatchObject({ imported: [], unchanged: 1, rejected: refusal });
    expect(reads.filter((key) => key.startsWith('submissions/images/'))).toEqual([]);
    copyFixture('coffee.png', env.paths.imagesDir);
    writeFileSync(join(env.paths.imagesDir, 'notes.jpg'), readFileSync(join(env.paths.imagesDir, 'coffee.png')));
    rmSync(join(env.paths.imagesDir, 'coffee.png'));
    expect(await reload()).toMatchObject({ imported: ['notes'], rejected: [] });
    expect(await env.db.prepare('SELECT COUNT(*) AS n FROM refused_files').first()).toEqual({ n: 0 });
  });

  it('refuses unread a file larger than the runtime reads whole (the Worker: 12 MB), by its listed size', async () => {
    copyFixture('camera.png', env.paths.imagesDir);
    copyFixture('rocket.jpg', env.paths.imagesDir);
    const camera = readFileSync(join(env.paths.imagesDir, 'camera.png')).length;
    expect(readFileSync(join(env.paths.imagesDir, 'rocket.jpg')).length).toBeLessThan(camera);
    const reads: string[] = [];
    const get = env.blobs.get.bind(env.blobs);
    env.blobs.get = (key) => (reads.push(key), get(key));
    const report = await reloadFiles({ ...env, maxFileBytes: camera - 1 });
    expect(report).toMatchObject({
      imported: ['rocket'],
      rejected: [
        { file: 'images/camera.png', id: 'camera', reason: expect.stringMatching(/^file is 0\.1 MB, more than the 0\.1 MB this service reads whole$/) },
      ],
    });
    expect(reads).not.toContain('submissions/images/camera.png');
    expect((await reloadFiles(env)).imported).toEqual(['camera']);
  });

  it('skips a file still being written with the reason, keeps nothing of it, and takes it whole on the next reload', async () => {
    copyFixture('camera.png', env.paths.imagesDir);
    const whole = readFileSync(fixturePath('rocket.jpg'));
    const file = join(env.paths.imagesDir, 'rocket.jpg');
    writeFileSync(file, whole.subarray(0, 4096));
    // The copy goes on while the reload runs: between the listing and the read, the writer adds a piece.
    // The file is read with `get`, or with `digest` where the store reads in worker threads.
    const [get, digest] = [env.blobs.get, env.blobs.digest];
    const copying = (key: string) => key === 'submissions/images/rocket.jpg' && appendFileSync(file, whole.subarray(4096, 12288));
    env.blobs.get = (key) => (copying(key), get.call(env.blobs, key));
    if (digest) env.blobs.digest = (key, headBytes) => (copying(key), digest.call(env.blobs, key, headBytes));
    expect(await reload()).toMatchObject({
      imported: ['camera'],
      rejected: [{ file: 'images/rocket.jpg', id: 'rocket', reason: 'file is still being written (4096 bytes listed, 12288 read); the next reload takes it' }],
    });
    expect(await env.db.prepare("SELECT COUNT(*) AS n FROM submissions WHERE id = 'rocket'").first()).toEqual({ n: 0 });
    expect(await env.db.prepare('SELECT COUNT(*) AS n FROM refused_files').first()).toEqual({ n: 0 });
    // The copy ends; the next reload takes the whole file.
    [env.blobs.get, env.blobs.digest] = [get, digest];
    writeFileSync(file, whole);
    expect(await reload()).toMatchObject({ imported: ['rocket'], rejected: [] });
    expect((await review('rocket')).row).toMatchObject({ bytes: whole.length, sha256: createHash('sha256').update(whole).digest('hex') });
  });

  it('resolves registry files from the listing, not with a store request per entry', async () => {
    const tiny = await sharp({ create: { width: 16, height: 16, channels: 3, background: '#7a5' } })
      .png()
      .toBuffer();
    const entries = Array.from({ length: 40 }, (_, i) => {
      writeFileSync(join(env.paths.imagesDir, `r${i}.png`), Buffer.concat([tiny, Buffer.from([i])]));
      return { id: `R-${i}`, title: `entry ${i}`, file: `images/r${i}.png`, width: 16, height: 16, submitted_at: '2026-03-01 09:00' };
    });
    writeFileSync(join(env.paths.dataDir, 'submissions', 'submissions.json'), JSON.stringify(entries));
    const operations: string[] = [];
    for (const name of ['get', 'head', 'list', 'digest'] as const) {
      const own = env.blobs[name]?.bind(env.blobs) as ((...args: unknown[]) => unknown) | undefined;
      if (own) (env.blobs as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => (operations.push(name), own(...args));
    }
    expect((await reloadFiles(env)).imported).toHaveLength(40);
    // The registry itself, one page of the listing, and each new file's bytes (read whole, or
    // digested in worker threads where the store can).
    expect(operations.filter((o) => o === 'head')).toEqual([]);
    expect(operations.filter((o) => o === 'list')).toEqual(['list']);
    expect(operations.filter((o) => o === 'get' || o === 'digest')).toHaveLength(41);
  });

  it('reports a quick file that is gone, and keeps its submission and evidence', async () => {
    copyFixture('camera.png', env.paths.imagesDir);
    copyFixture('camera.png', env.paths.imagesDir, 'copy.png');
    await reload();
    rmSync(join(env.paths.imagesDir, 'copy.png'));
    expect(await reload()).toMatchObject({ removed: ['copy'], unchanged: 1 });
    expect((await review('copy')).evidence.map((e) => e.matched_submission_id)).toEqual(['camera']);
  });
});

describe('quick ids and titles', () => {
  it('derives them from the file name', () => {
    expect(quickId('My Photo_01.JPG')).toBe('my-photo-01');
    expect(quickId('사진 1.png')).toMatch(/^image-[0-9a-f]{8}$/);
    expect(quickId('---.png')).toMatch(/^image-[0-9a-f]{8}$/);
    expect(quickTitle('my_summer-photo.jpg')).toBe('my summer photo');
  });
});

describe('reload within the Worker platform limits', () => {
  it('imports 600 new files over reloads that each stay within 1,000 D1 queries and 1,000 subrequests', async () => {
    const limited = await createTestEnv();
    try {
      const tiny = await sharp({ create: { width: 16, height: 16, channels: 3, background: '#7a5' } })
        .jpeg()
        .toBuffer();
      const names = Array.from({ length: 600 }, (_, i) => `n${String(i).padStart(3, '0')}.jpg`);
      names.forEach((name, i) => writeFileSync(join(limited.paths.imagesDir, name), Buffer.concat([tiny, Buffer.from([i & 0xff, i >> 8])])));
      writeFileSync(join(limited.paths.imagesDir, 'notes.jpg'), 'this is text, not a picture');
      // One reload is one Worker invocation: fresh budgets, wrapped as worker.ts wraps its bindings
      // (the image service's probe standing for its service-binding call).
      const invocation = (): Env => {
        const subrequests = subrequestBudget();
        return {
          ...limited,
          db: limitedDatabase(limited.db, { maxBoundValues: D1_MAX_BOUND_VALUES, maxQueries: D1_MAX_QUERIES }),
          blobs: countedBlobStore(limited.blobs, subrequests),
          images: { ...limited.images, probe: (bytes) => (subrequests.take(), limited.images.probe(bytes)) },
          subrequests,
        };
      };
      const reports = [];
      for (let left = Infinity; left > 0; ) {
        const report = await reloadFiles(invocation());
        expect(report.remaining, 'each reload reads more').toBeLessThan(left);
        left = report.remaining;
        reports.push(report);
      }
      // 2 subrequests a file: the first reload reads 494 of the 601 (1,000 less the listing, the
      // registry lookup and a reserve of 10), the second the rest.
      expect(reports.map((r) => r.remaining)).toEqual([107, 0]);
      // The answers name the first 100 imported of each reload; the counts and the stored ids say all.
      expect(reports.map((r) => r.counts.imported)).toEqual([494, 106]);
      const stored = await limited.db.prepare('SELECT id FROM submissions ORDER BY id').all<{ id: string }>();
      expect(stored.results.map((r) => r.id)).toEqual(names.map((n) => quickId(n)));
      expect(reports.reduce((n, r) => n + r.queued_jobs, 0)).toBe(600);
      // The refused file (last in name order) was left by the first reload, read by the second, and
      // is refused again by the next from the record.
      expect(reports.map((r) => r.rejected.map((x: { reason: string }) => x.reason))).toEqual([[], ['not an image']]);
      expect(await reloadFiles(invocation())).toMatchObject({ unchanged: 600, remaining: 0, rejected: [{ file: 'images/notes.jpg', reason: 'not an image' }] });
    } finally {
      await limited.dispose();
    }
  });

  it('fails a piece of work that would pass 1,000 subrequests with a clear error, before the request is made', async () => {
    const budget = subrequestBudget(3);
    const made: string[] = [];
    const store = countedBlobStore({ ...({} as BlobStore), head: async (key) => (made.push(key), null) }, budget);
    for (const key of ['a', 'b', 'c']) await store.head(key);
    expect(() => store.head('d')).toThrow(SubrequestLimitExceeded);
    expect(() => store.head('d')).toThrow('Worker limit: more than 3 subrequests (R2, the image service, outbound fetches) in one invocation');
    expect(made).toEqual(['a', 'b', 'c']);
    expect(budget.left()).toBe(0);
  });
});
