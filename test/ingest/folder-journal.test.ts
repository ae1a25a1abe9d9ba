import { renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { open, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { watchSubmissionsFolder, type FolderWatch } from '../../lib/ingest/folder-watch.js';
import { reload as reloadFiles } from '../../lib/ingest/reload.js';
import { readFolderJournal } from '../../lib/repo/folder-journal.js';
import { countedDatabase } from '../helpers/counted-db.js';
import { createTestEnv, type TestEnv } from '../helpers/env.js';
import { wholeList } from '../helpers/reload-report.js';
import { body } from '../review/seed.js';

/**
 * The folder journal of the Node service: while the watcher runs, a reload in which nothing
 * changed answers without listing the folder; a file added, or one changed in place with the same
 * size and times, is still found. (The Worker has no watcher: every reload there is a full pass.)
 */
let env: TestEnv;
let watch: FolderWatch;
let listings: number;
let blue: Buffer;
let red: Buffer;

const solid = (background: string) =>
  sharp({ create: { width: 8, height: 8, channels: 3, background } })
    .png()
    .toBuffer();

beforeAll(async () => {
  [blue, red] = await Promise.all([solid('#2040a0'), solid('#a02040')]);
});
beforeEach(async () => {
  env = await createTestEnv();
  // Every listing of the store is counted: a quiet reload makes none.
  const list = env.blobs.list.bind(env.blobs);
  listings = 0;
  env.blobs.list = (prefix, options) => {
    listings++;
    return list(prefix, options);
  };
  watch = await watchSubmissionsFolder(env.db, env.paths, env.log);
});
afterEach(async () => {
  await watch.close();
  await env.dispose();
});

const reload = () => body(env.call('POST', '/api/submissions/reload'));
const image = (name: string) => join(env.paths.imagesDir, name);

/**
 * Until the watcher has journalled something and then nothing more for 200 ms: one write brings
 * several events (the data, the close, the times put back), each journalled as it comes.
 */
async function journalled(): Promise<void> {
  let last = 0;
  let since = Date.now();
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 20))) {
    const { lastSeq } = await readFolderJournal(env.db);
    if (lastSeq !== last) [last, since] = [lastSeq, Date.now()];
    else if (last > 0 && Date.now() - since >= 200) return;
  }
  throw new Error('the watcher journalled nothing within 10 s');
}

/** Writes the file a piece at a time, as a copy of a large file does: its size grows while a reload may look. */
async function writtenInPieces(path: string, bytes: Buffer, piece = 64 * 1024): Promise<void> {
  const handle = await open(path, 'w');
  try {
    for (let at = 0; at < bytes.length; at += piece) await handle.write(bytes.subarray(at, at + piece));
  } finally {
    await handle.close();
  }
}

/** A PNG of random pixels: large, since it barely compresses. */
const noise = (side: number) =>
  sharp(Buffer.from(Array.from({ length: side * side * 3 }, () => Math.floor(Math.random() * 256))), { raw: { width: side, height: side, channels: 3 } })
    .png()
    .toBuffer();

/** A reload that lists the folder, and one that does not, counted. */
async function reloadCounted() {
  const before = listings;
  const report = await reload();
  return { report, listed: listings > before };
}

describe('the folder journal', () => {
  it('a reload with nothing changed answers from the last pass without listing the folder, refusals and removals included', async () => {
    writeFileSync(image('one.png'), blue);
    writeFileSync(image('two.png'), red);
    writeFileSync(image('broken.png'), 'not a picture');
    await journalled();
    const first = await reloadCounted();
    expect(first.listed).toBe(true);
    expect(first.report.imported.sort()).toEqual(['one', 'two']);

    const quiet = await reloadCounted();
    expect(quiet.listed).toBe(false);
    expect(quiet.report).toMatchObject({ imported: [], updated: [], unchanged: 2, removed: [], counts: { imported: 0, rejected: 1 } });
    expect(quiet.report.rejected).toEqual(first.report.rejected);
    expect((await reloadCounted()).listed).toBe(false);
  });

  it('a reload sent in the same tick as a burst of copies, one still being written, imports every file of it', async () => {
    writeFileSync(image('first.png'), blue);
    await journalled();
    await reload();
    const pictures = await Promise.all(Array.from({ length: 40 }, (_, i) => solid(`#${(16 + i * 5).toString(16)}4080`)));
    const large = await noise(700);

    const copies = [...pictures.map((bytes, i) => writeFile(image(`burst-${i}.png`), bytes)), writtenInPieces(image('large.png'), large)];
    const answer = reloadCounted();
    await Promise.all(copies);
    const { report, listed } = await answer;
    expect(listed).toBe(false);
    expect(report.imported.sort()).toEqual([...pictures.map((_, i) => `burst-${i}`), 'large'].sort());
    expect(report).toMatchObject({ updated: [], unchanged: 1, removed: [], rejected: [] });
  });

  it('lists the folder when the journal says a watcher runs but none answers', async () => {
    writeFileSync(image('one.png'), blue);
    await journalled();
    const { report_id } = await reload();
    // The jobs process killed without a word: its journal still names it as the running watcher.
    const { epoch } = await readFolderJournal(env.db);
    await watch.close();
    await env.db.prepare('UPDATE folder_watch SET epoch = ?, clean_report_id = ?').bind(epoch, report_id).run();
    writeFileSync(image('two.png'), red);
    expect(await reloadCounted()).toMatchObject({ listed: true, report: { imported: ['two'], unchanged: 1 } });
  });

  it('finds a file changed in place with the same size and the same times', async () => {
    // A whole second, so that the file's times can be put back exactly.
    const when = new Date('2026-11-20T01:02:03Z');
    writeFileSync(image('photo.png'), blue);
    utimesSync(image('photo.png'), when, when);
    await reload();
    expect(red.length).toBe(blue.length);
    const before = statSync(image('photo.png'));
    writeFileSync(image('photo.png'), red);
    utimesSync(image('photo.png'), when, when);
    const after = statSync(image('photo.png'));
    expect([after.size, after.mtimeMs, after.ino]).toEqual([before.size, before.mtimeMs, before.ino]);
    await journalled();

    const changed = await reloadCounted();
    expect(changed).toMatchObject({ listed: false, report: { updated: ['photo'], unchanged: 0 } });
    const row = await env.db.prepare('SELECT sha256 FROM submissions WHERE id = ?').bind('photo').first<{ sha256: string }>();
    expect(row?.sha256).toBe((await import('node:crypto')).createHash('sha256').update(red).digest('hex'));
    expect((await reloadCounted()).listed).toBe(false);
  });

  it('a full pass asked for reads a file the journal saw changed in place, with the same size and times, and no other', async () => {
    const when = new Date('2026-11-20T01:02:03Z');
    for (const name of ['photo.png', 'other.png']) {
      writeFileSync(image(name), name === 'photo.png' ? blue : red);
      utimesSync(image(name), when, when);
    }
    await reload();
    writeFileSync(image('photo.png'), red);
    utimesSync(image('photo.png'), when, when);
    await journalled();

    const full = await body(env.call('POST', '/api/submissions/reload?full=true'));
    expect(full).toMatchObject({ imported: [], updated: ['photo'], unchanged: 1 });
    const row = await env.db.prepare('SELECT sha256 FROM submissions WHERE id = ?').bind('photo').first<{ sha256: string }>();
    expect(row?.sha256).toBe((await import('node:crypto')).createHash('sha256').update(red).digest('hex'));
  });

  it('reads only the files it names: added, removed and renamed, without listing, to the answer a full pass gives', async () => {
    for (const name of ['one.png', 'two.png', 'keep.png']) writeFileSync(image(name), name === 'two.png' ? red : blue);
    writeFileSync(image('broken.png'), 'not a picture');
    await journalled();
    await reload();
    writeFileSync(image('three.png'), red);
    rmSync(image('two.png'));
    renameSync(image('one.png'), image('uno.png'));
    await journalled();
    const named = await reloadCounted();
    expect(named.listed).toBe(false);
    expect(named.report).toMatchObject({ updated: [], unchanged: 1, queued_jobs: 2 });
    expect(named.report.imported.sort()).toEqual(['three', 'uno']);
    expect(named.report.removed.sort()).toEqual(['one', 'two']);
    expect(named.report.rejected).toEqual([{ file: 'images/broken.png', id: 'broken', reason: 'not an image' }]);

    // A full pass, asked for, lists the folder and finds the same.
    const before = listings;
    const full = await body(env.call('POST', '/api/submissions/reload?full=true'));
    expect(listings).toBeGreaterThan(before);
    expect(full).toMatchObject({ imported: [], updated: [], unchanged: 3, queued_jobs: 0, rejected: named.report.rejected });
    expect(full.removed.sort()).toEqual(['one', 'two']);
  });

  it('a reload with nothing changed after thousands of refusals reads and writes a bounded number of report rows; its report pages them all', async () => {
    const refused = 3000;
    writeFileSync(image('one.png'), blue);
    for (let i = 0; i < refused; i++) writeFileSync(image(`junk-${String(i).padStart(4, '0')}.png`), `not a picture: ${i}`);
    await journalled();
    const first = await reload();
    expect(first.counts).toEqual({ imported: 1, updated: 0, removed: 0, rejected: refused });

    const db = countedDatabase(env.db);
    const quiet = await reloadFiles({ ...env, db });
    expect(quiet).toMatchObject({ unchanged: 1, counts: { imported: 0, updated: 0, removed: 0, rejected: refused } });
    expect(quiet.rejected).toEqual(first.rejected);
    // The report row, the answer's first 100 of each list, the audit event: nothing in proportion to the refusals.
    expect(db.tally.rows).toBeLessThan(300);
    expect(db.tally.statements).toBeLessThan(40);
    expect(await env.db.prepare('SELECT COUNT(*) AS n FROM reload_standing').first()).toEqual({ n: refused });

    const paged = await wholeList(env, quiet.report_id, 'rejected', 1000);
    expect(paged.pages).toEqual([1000, 1000, 1000]);
    expect(new Set(paged.items.map((item) => item.file))).toEqual(
      new Set(Array.from({ length: refused }, (_, i) => `images/junk-${String(i).padStart(4, '0')}.png`)),
    );
    expect(paged.items.every((item) => item.reason === 'not an image')).toBe(true);
  });

  it('a refusal fixed by a good image leaves the list on the next named reload, the others stand; a removed file is reported once', async () => {
    writeFileSync(image('keep.png'), blue);
    writeFileSync(image('gone.png'), red);
    for (const name of ['bad-1.png', 'bad-2.png', 'bad-3.png']) writeFileSync(image(name), `not a picture: ${name}`);
    await journalled();
    await reload();
    writeFileSync(image('bad-2.png'), red);
    rmSync(image('gone.png'));
    await journalled();

    const named = await reloadCounted();
    expect(named).toMatchObject({ listed: false, report: { imported: ['bad-2'], removed: ['gone'], unchanged: 1, counts: { removed: 1, rejected: 2 } } });
    expect(named.report.rejected.map((r: { file: string }) => r.file)).toEqual(['images/bad-1.png', 'images/bad-3.png']);
    // The removal stands, once: through a reload with nothing changed, and one that names the file again.
    expect(await reloadCounted()).toMatchObject({ listed: false, report: { removed: ['gone'], counts: { removed: 1, rejected: 2 } } });
    writeFileSync(image('gone.png'), blue);
    rmSync(image('gone.png'));
    await journalled();
    const again = await reloadCounted();
    expect(again).toMatchObject({ listed: false, report: { imported: [], removed: ['gone'], counts: { removed: 1, rejected: 2 } } });
    expect((await wholeList(env, again.report.report_id, 'removed', 10)).items).toEqual([{ id: 'gone', file: null, reason: null }]);

    // A full pass finds the same.
    const full = await body(env.call('POST', '/api/submissions/reload?full=true'));
    expect(full).toMatchObject({ removed: ['gone'], rejected: named.report.rejected, counts: { imported: 0, removed: 1, rejected: 2 } });
  });

  it('lists the folder again for a file the registry named and refused, a changed registry, and when no watcher runs', async () => {
    writeFileSync(image('one.png'), blue);
    const entry = { id: 'poster', title: 'Poster', file: 'images/poster.png', width: 8, height: 8, submitted_at: '2026-11-20 10:00' };
    writeFileSync(env.paths.registryFile, JSON.stringify([entry]));
    await journalled();
    expect(await reload()).toMatchObject({ imported: ['one'], rejected: [{ file: 'images/poster.png', id: 'poster', reason: 'file does not exist' }] });
    writeFileSync(image('poster.png'), red);
    await journalled();
    expect(await reloadCounted()).toMatchObject({ listed: true, report: { imported: ['poster'], rejected: [] } });

    writeFileSync(env.paths.registryFile, '[]');
    await journalled();
    expect((await reloadCounted()).listed).toBe(true);

    await watch.close();
    expect((await reloadCounted()).listed).toBe(true);
    expect((await reloadCounted()).listed).toBe(true);
  });
});
