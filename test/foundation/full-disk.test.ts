import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, copyFileSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, utimesSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestEnv, type TestEnv } from '../helpers/env.js';
import { FIXTURE_NAMES, fixturePath } from '../helpers/fixtures.js';
import { body, refusal, snapshot } from '../review/seed.js';

/**
 * A full disk for real: the data folder (SQLite file, images, thumbnails) on a small tmpfs the test
 * mounts, filled to the last byte by a ballast file; and the SQLite file alone unable to grow
 * (`max_page_count`). Writes answer 507 and jobs wait, reads go on, and once there is room again
 * everything resumes with the database intact and nothing lost. The blob port's side on both
 * storages: test/foundation/storage-full.test.ts.
 */
let env: TestEnv | undefined;
let mounted: string | undefined;
afterEach(async () => {
  // Room first: a test that failed while the disk was full must not close the database on it.
  if (mounted) rmSync(join(mounted, 'ballast'), { force: true });
  await env?.dispose();
  env = undefined;
  if (mounted) execFileSync('umount', ['--lazy', mounted]);
  mounted = undefined;
});

/** A tmpfs of `megabytes` at a new folder, or why this machine cannot mount one (not root, no mount). */
function smallDisk(megabytes: number): { dir: string } | { cannot: string } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-full-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${megabytes}m`, 'tmpfs', dir], { stdio: 'pipe' });
    mounted = dir;
    return { dir };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    return { cannot: String((error as { stderr?: Buffer }).stderr ?? error).trim() };
  }
}

/** Writes a ballast file until the filesystem refuses a byte more; returns its path. */
function fill(dir: string): string {
  const ballast = join(dir, 'ballast');
  const fd = openSync(ballast, 'w');
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (let size = chunk.length; size > 0; ) {
      try {
        writeSync(fd, chunk, 0, size);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
        size = size === 1 ? 0 : Math.floor(size / 2);
      }
    }
  } finally {
    closeSync(fd);
  }
  return ballast;
}

const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile() && !/\.sqlite3(-wal|-shm)?$/.test(d.name) && d.name !== 'ballast')
    .map((d) => join(d.parentPath, d.name))
    .sort();
const hashes = (dir: string) => Object.fromEntries(filesUnder(dir).map((f) => [f, sha256(f)]));
const integrity = async (e: TestEnv) => (await e.db.prepare('PRAGMA integrity_check').all<{ integrity_check: string }>()).results;
const decide = (e: TestEnv, id: string, note: string) => e.call('POST', `/api/submissions/${id}/decision`, { decision: '보류', note });

describe('a full disk for real', () => {
  it('on a small filesystem: reload, decisions and analyses refused cleanly, reads served, all resumed once there is room', async () => {
    const disk = smallDisk(48);
    if ('cannot' in disk) {
      // Said in the run's output, and the same refusals are still proven on the database below and
      // through the storage port (storage-full.test.ts).
      console.warn(`full-disk test on a tmpfs: this machine cannot mount one (${disk.cannot}); covered by the page-limit and storage-port tests only`);
      return;
    }
    env = await createTestEnv({ SVC_DATA_DIR: disk.dir });
    copyFileSync(fixturePath('camera.png'), join(env.paths.imagesDir, 'camera.png'));
    await body(env.call('POST', '/api/submissions/reload'));
    await env.jobs.drain('analyse');
    await body(decide(env, 'camera', 'first look'));
    // A second image is imported and its analysis left queued; the write-ahead log is emptied so
    // that the next database write needs new space.
    copyFileSync(fixturePath('coffee.png'), join(env.paths.imagesDir, 'coffee.png'));
    await body(env.call('POST', '/api/submissions/reload'));
    await env.db.prepare('PRAGMA wal_checkpoint(TRUNCATE)').all();
    const before = await snapshot(env.db);
    const files = hashes(disk.dir);
    const ballast = fill(disk.dir);

    // A touched file (a new modification time takes no space) has the reload write its index.
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(env.paths.imagesDir, 'camera.png'), later, later);
    expect(await refusal(env.call('POST', '/api/submissions/reload'), 507, 'insufficient_storage')).toMatch(/storage is full/);
    await refusal(decide(env, 'camera', 'second look'), 507, 'insufficient_storage');
    await expect(env.jobs.drain('analyse')).rejects.toThrow(/storage/);
    const queue = await body(env.call('GET', '/api/review-queue'));
    expect(queue.items.map((i: { id: string }) => i.id).sort()).toEqual(['camera', 'coffee']);
    expect((await body(env.call('GET', '/api/submissions/camera/review'))).submission.decision.note).toBe('first look');
    expect(await snapshot(env.db)).toEqual(before);

    rmSync(ballast);
    await body(env.call('POST', '/api/submissions/reload'));
    expect(await env.jobs.drain('analyse')).toBe(1);
    await body(decide(env, 'camera', 'second look'));
    expect(await integrity(env)).toEqual([{ integrity_check: 'ok' }]);
    const review = await body(env.call('GET', '/api/submissions/coffee/review'));
    expect(review.submission).toMatchObject({ analysis_status: 'done', analysis_error: null });
    // Every file kept before the disk filled is there, byte for byte.
    const now = hashes(disk.dir);
    for (const [file, hash] of Object.entries(files)) expect(now[file], file).toBe(hash);
  });

  it('a database that cannot grow (max_page_count): a reload answers 507, stores nothing half, and completes once it may grow', async () => {
    env = await createTestEnv();
    for (const name of FIXTURE_NAMES) copyFileSync(fixturePath(name), join(env.paths.imagesDir, name));
    await body(env.call('POST', '/api/submissions/reload'));
    // Forty more submissions need pages the file may not add.
    for (let i = 0; i < 40; i++) copyFileSync(fixturePath('rocket.jpg'), join(env.paths.imagesDir, `rocket-${i}.jpg`));
    const [{ page_count }] = (await env.db.prepare('PRAGMA page_count').all<{ page_count: number }>()).results;
    await env.db.prepare(`PRAGMA max_page_count = ${page_count}`).all();
    const before = await snapshot(env.db);
    await refusal(env.call('POST', '/api/submissions/reload'), 507, 'insufficient_storage');
    expect(await snapshot(env.db)).toEqual(before);
    expect((await body(env.call('GET', '/api/review-queue?limit=100'))).items).toHaveLength(FIXTURE_NAMES.length);

    await env.db.prepare('PRAGMA max_page_count = 1073741823').all();
    const report = await body(env.call('POST', '/api/submissions/reload'));
    expect(report.imported).toHaveLength(40);
    expect(await integrity(env)).toEqual([{ integrity_check: 'ok' }]);
    expect((await env.db.prepare('PRAGMA page_count').all<{ page_count: number }>()).results[0].page_count).toBeGreaterThan(page_count);
  });
});
