import { readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { D1_MAX_BOUND_VALUES, D1_MAX_QUERIES, limitedDatabase } from '../../lib/db/limits.js';
import { quickId, quickTitle, reload as reloadFiles } from '../../lib/ingest.js';
import { createTestEnv, type TestEnv } from '../helpers/env.js';
import { copyFixture, reencoded } from '../helpers/fixtures.js';

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
    expect(copy.row).toMatchObject({ risk_level: 'low', risk_score: 25 });
    expect(JSON.parse(String(copy.row.risk_signals))).toEqual([
      { code: 'internal_match', label: '내부 유사 제출물', weight: 25, evidence_ids: [copy.evidence[0].id] },
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

  const writeRegistry = (entries: unknown) =>
    writeFileSync(env.paths.registryFile, typeof entries === 'string' ? entries : JSON.stringify(entries));
  const entry = (id: string, file: string, extra: Record<string, unknown> = {}) => ({ id, title: `Title ${id}`, file, width: 512, height: 512, submitted_at: '2026-03-01 09:30', ...extra });

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
    expect((await review('SUB-001')).row).toMatchObject({ title: 'New title', submitted_at: '2026-03-02 10:00', submitted_at_epoch: Date.UTC(2026, 2, 2, 1, 0) / 1000 });
  });

  it('refuses each bad entry or file with its reason while the rest import', async () => {
    copyFixture('astronaut.png', env.paths.imagesDir);
    copyFixture('camera.png', env.paths.imagesDir);
    writeFileSync(join(env.paths.imagesDir, 'notes.jpg'), 'this is text, not a picture');
    writeFileSync(join(env.dataDir, 'outside.png'), await sharp({ create: { width: 8, height: 8, channels: 3, background: '#fff' } }).png().toBuffer());
    symlinkSync(join(env.dataDir, 'outside.png'), join(env.paths.imagesDir, 'escape.png'));
    writeFileSync(join(env.paths.imagesDir, 'huge.png'), await sharp({ create: { width: 1000, height: 1000, channels: 3, background: '#abc' } }).png().toBuffer());
    writeFileSync(join(env.paths.imagesDir, 'drawing.svg'), '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><rect width="64" height="40" fill="red"/></svg>');
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
    const reasons = Object.fromEntries(report.rejected.map((r: { id: string | null; file: string | null; reason: string }) => [r.id ?? r.file ?? 'none', r.reason]));
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
    expect(report.rejected).toEqual([{ file: 'images/rocket.jpg', id: 'photo', reason: 'id photo is already used by the quick submission of images/photo.png' }]);
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
    const [a, b] = await Promise.all([env.call('POST', '/api/submissions/reload'), env.call('POST', '/api/submissions/reload')].map(async (r) => (await r).json()));
    expect([...a.imported, ...b.imported].sort()).toEqual(['astronaut', 'camera', 'coffee']);
    expect(a.unchanged + b.unchanged).toBe(3);
    expect(a.queued_jobs + b.queued_jobs).toBe(3);
    expect(await env.db.prepare("SELECT COUNT(*) AS n FROM jobs WHERE type = 'analyse'").first()).toEqual({ n: 3 });
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
  it('imports 600 new files in fewer than D1’s 1,000 queries per invocation', async () => {
    const limited = await createTestEnv();
    try {
      const tiny = await sharp({ create: { width: 16, height: 16, channels: 3, background: '#7a5' } }).jpeg().toBuffer();
      for (let i = 0; i < 600; i++) writeFileSync(join(limited.paths.imagesDir, `n${String(i).padStart(3, '0')}.jpg`), Buffer.concat([tiny, Buffer.from([i & 0xff, i >> 8])]));
      // The Worker's guard, as it wraps D1 once per invocation: one reload is one request.
      limited.db = limitedDatabase(limited.db, { maxBoundValues: D1_MAX_BOUND_VALUES, maxQueries: D1_MAX_QUERIES }) as typeof limited.db;
      const report = await reloadFiles(limited);
      expect(report.imported).toHaveLength(600);
      expect(report.queued_jobs).toBe(600);
    } finally {
      await limited.dispose();
    }
  });
});
