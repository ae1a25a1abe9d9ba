import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tarWriter } from '../../lib/backup/tar.js';
import { createTestEnv, type TestEnv } from '../helpers/env.js';
import { copyFixture } from '../helpers/fixtures.js';
import { folderHashes, runScript, sha256, startBackup } from './helpers.js';

/** Restore's refusals, the archive as tar reads it, and a backup killed half-way. */

const scratch = mkdtempSync(join(tmpdir(), 'svc-restore-'));
let env: TestEnv;
let archive: string;

beforeAll(async () => {
  env = await createTestEnv();
  const images = join(env.dataDir, 'submissions', 'images');
  copyFixture('camera.png', images);
  copyFixture('rocket.jpg', images, '로켓 사진.jpg');
  await env.call('POST', '/api/submissions/reload');
  await env.jobs.drain();
  archive = join(scratch, 'backup.tar');
  const made = await runScript('backup', [archive], { SVC_DATA_DIR: env.dataDir });
  expect(made.stderr).toBe('');
}, 120_000);

afterAll(async () => {
  await env.dispose();
  rmSync(scratch, { recursive: true, force: true });
});

/** What is left in a folder besides the given names: a refused restore leaves nothing. */
const leftovers = (dir: string, known: string[]) => readdirSync(dir).filter((name) => !known.includes(name));

describe('the archive', () => {
  it('opens with tar, and every file it holds has the SHA-256 its manifest lists', () => {
    const out = join(scratch, 'untarred');
    mkdirSync(out);
    execFileSync('tar', ['-xf', archive, '-C', out]);
    const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8'));
    expect(manifest.schema.migration).toMatch(/^\d{4}_.+\.sql$/);
    expect(manifest.files.map((f: { path: string }) => f.path)).toEqual(
      expect.arrayContaining(['svc.sqlite3', 'submissions/images/camera.png', 'submissions/images/로켓 사진.jpg', 'thumbs/camera.jpg']),
    );
    for (const file of manifest.files) expect(sha256(readFileSync(join(out, file.path)))).toBe(file.sha256);
    expect(manifest.missing).toEqual([]);
  });

  it('is readable by its owner alone: it holds the accounts and every case', () => {
    expect(statSync(archive).mode & 0o777).toBe(0o600);
  });

  it('is not written over: a second backup under the same name is refused', async () => {
    const again = await runScript('backup', [archive], { SVC_DATA_DIR: env.dataDir });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/exists already/);
  });
});

describe('restore', () => {
  it('restores into a new folder the files of the data folder, byte for byte', async () => {
    const target = join(scratch, 'fresh', 'data');
    const ran = await runScript('restore', [archive, '--data', target]);
    expect(ran.stderr).toBe('');
    const restored = folderHashes(target);
    restored.delete('svc.sqlite3');
    const live = new Map([...folderHashes(env.dataDir)].filter(([path]) => !path.startsWith('svc.sqlite3')));
    expect(restored).toEqual(live);
    // Each file keeps its modification time: a quick submission's time is its file's.
    const mtime = (root: string, key: string) => Math.floor(statSync(join(root, key)).mtimeMs / 1000);
    for (const key of restored.keys()) expect([key, mtime(target, key)]).toEqual([key, mtime(env.dataDir, key)]);
    // The database and every file: the two submitted images and their thumbnails.
    expect(JSON.parse(ran.stdout)).toMatchObject({ files: 5 });
    expect(live.size).toBe(4);
  });

  it('refuses a folder that is not empty, and leaves it as it was', async () => {
    const target = join(scratch, 'busy');
    mkdirSync(target);
    writeFileSync(join(target, 'notes.txt'), 'keep me');
    const ran = await runScript('restore', [archive, '--data', target]);
    expect(ran.code).toBe(1);
    expect(ran.stderr.trim()).toMatch(/^restore refused: .*busy is not empty: restore into an empty or new folder$/);
    expect(readdirSync(target)).toEqual(['notes.txt']);
  });

  it('refuses an archive whose file does not match its SHA-256, and leaves nothing behind', async () => {
    const parent = join(scratch, 'damaged');
    mkdirSync(parent);
    const damaged = join(parent, 'damaged.tar');
    const bytes = readFileSync(archive);
    // A byte inside the database's bytes (the first entry, after its 512-byte header).
    bytes[512 + 1000] ^= 0xff;
    writeFileSync(damaged, bytes);
    const ran = await runScript('restore', [damaged, '--data', join(parent, 'data')]);
    expect(ran.code).toBe(1);
    expect(ran.stderr.trim()).toBe('restore refused: svc.sqlite3 does not match its SHA-256 in the manifest: the archive is damaged');
    expect(leftovers(parent, ['damaged.tar'])).toEqual([]);
  });

  it('refuses an archive cut short', async () => {
    const parent = join(scratch, 'cut');
    mkdirSync(parent);
    const cut = join(parent, 'cut.tar');
    writeFileSync(cut, readFileSync(archive).subarray(0, statSync(archive).size - 4096));
    const ran = await runScript('restore', [cut, '--data', join(parent, 'data')]);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toMatch(/is damaged: the archive ends|has no manifest.json/);
    expect(leftovers(parent, ['cut.tar'])).toEqual([]);
  });

  it('refuses an archive naming a path outside the data folder, and writes nothing anywhere', async () => {
    const parent = join(scratch, 'hostile');
    mkdirSync(parent);
    const hostile = join(parent, 'hostile.tar');
    const out = await open(hostile, 'w');
    const tar = tarWriter(out);
    await tar.addBytes('evidence/../../escaped.txt', Buffer.from('outside'), new Date());
    await tar.finish();
    await out.close();
    const ran = await runScript('restore', [hostile, '--data', join(parent, 'data')]);
    expect(ran.code).toBe(1);
    expect(ran.stderr.trim()).toBe('restore refused: the archive holds "evidence/../../escaped.txt", which no backup writes');
    expect(leftovers(parent, ['hostile.tar'])).toEqual([]);
  });

  it('refuses a database with a migration newer than the code knows', async () => {
    const newer = await createTestEnv();
    try {
      await newer.db.prepare("INSERT INTO schema_migrations (name, applied_at) VALUES ('9999_from_the_future.sql', '2026-11-21T03:00:00.000Z')").run();
      const parent = join(scratch, 'newer');
      mkdirSync(parent);
      const made = await runScript('backup', [join(parent, 'newer.tar')], { SVC_DATA_DIR: newer.dataDir });
      expect(made.code).toBe(0);
      const ran = await runScript('restore', [join(parent, 'newer.tar'), '--data', join(parent, 'data')]);
      expect(ran.code).toBe(1);
      expect(ran.stderr).toMatch(/^restore refused: the backup's schema \(9999_from_the_future\.sql\) is newer than this code knows \(\d{4}_.+\.sql\)/);
      expect(leftovers(parent, ['newer.tar'])).toEqual([]);
    } finally {
      await newer.dispose();
    }
  });
});

it('leaves no archive under its name when the backup is killed half-way (kill -9)', async () => {
  const parent = join(scratch, 'killed');
  mkdirSync(parent);
  const final = join(parent, 'killed.tar');
  // A large submitted file (sparse: no disk for the source) keeps the backup copying long enough to kill.
  truncateSync(copyFixture('coffee.png', join(env.dataDir, 'submissions', 'images'), 'large.png'), 512 * 1024 * 1024);
  try {
    const child = startBackup(final, env.dataDir);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    for (let i = 0; i < 3000 && (statSync(`${final}.partial`, { throwIfNoEntry: false })?.size ?? 0) < 8 * 1024 * 1024; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    child.kill('SIGKILL');
    await exited;
    // Nothing writes it any more: the process that was copying is the one killed.
    const left = statSync(`${final}.partial`).size;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(statSync(`${final}.partial`).size).toBe(left);
    expect(left).toBeGreaterThan(8 * 1024 * 1024);
    expect(existsSync(final)).toBe(false);
  } finally {
    rmSync(join(env.dataDir, 'submissions', 'images', 'large.png'));
  }
  // The next backup under that name is whole, and restores.
  expect((await runScript('backup', [final], { SVC_DATA_DIR: env.dataDir })).code).toBe(0);
  expect(existsSync(`${final}.partial`)).toBe(false);
  expect((await runScript('restore', [final, '--data', join(parent, 'data')])).code).toBe(0);
}, 120_000);
