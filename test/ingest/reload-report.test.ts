import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../lib/db/migrate.js';
import { saveReloadReport } from '../../lib/repo/reload-reports.js';
import { useTestEnv } from '../helpers/env.js';
import { wholeList as wholeListOf } from '../helpers/reload-report.js';
import { until } from '../helpers/until.js';
import { body, refusal } from '../review/seed.js';

/**
 * A reload's answer names at most the first 100 of each list with the counts; the whole lists are
 * kept in a report paged by GET /api/reloads/{id}. Files are put through the blob port, so this
 * runs on the data folder and on R2 (vitest.d1-r2.config.ts).
 */
let png: Buffer;
beforeAll(async () => {
  png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#336699' } })
    .png()
    .toBuffer();
});
const env = useTestEnv();

const put = (name: string, bytes: Buffer) => env.blobs.put(`submissions/images/${name}`, bytes);
const reload = () => body(env.call('POST', '/api/submissions/reload'));

/** Every item of one list of a report, page by page. */
const wholeList = (reportId: string, list: string, limit: number) => wholeListOf(env, reportId, list, limit);

describe('the reload report', () => {
  it('answers counts and the first 100 of each list; the report pages every item in the same order', async () => {
    for (let i = 0; i < 150; i++) await put(`p-${String(i).padStart(3, '0')}.png`, png);
    await put('not-an-image.png', Buffer.from('plain text, not a picture'));
    const answer = await reload();
    expect(answer.counts).toEqual({ imported: 150, updated: 0, removed: 0, rejected: 1 });
    expect(answer.imported).toHaveLength(100);
    expect(answer.rejected).toEqual([{ file: 'images/not-an-image.png', id: 'not-an-image', reason: expect.any(String) }]);
    expect(answer.report_id).toMatch(/^rl_/);

    const imported = await wholeList(answer.report_id, 'imported', 60);
    expect(imported.pages).toEqual([60, 60, 30]);
    expect(imported.items.slice(0, 100).map((i) => i.id)).toEqual(answer.imported);
    expect(new Set(imported.items.map((i) => i.id)).size).toBe(150);
    expect(imported.last).toMatchObject({ id: answer.report_id, counts: answer.counts, queued_jobs: answer.queued_jobs, list: 'imported', next_cursor: null });
    const rejected = await wholeList(answer.report_id, 'rejected', 500);
    expect(rejected.items).toEqual(answer.rejected);
  });

  it('a reload that changes nothing keeps a report with empty lists', async () => {
    await put('one.png', png);
    await reload();
    const again = await reload();
    expect(again).toMatchObject({ imported: [], updated: [], unchanged: 1, counts: { imported: 0, updated: 0, removed: 0, rejected: 0 } });
    expect((await wholeList(again.report_id, 'imported', 10)).items).toEqual([]);
  });

  it('each kept report pages the refusals and removals of its own pass while later passes change them', async () => {
    for (const name of ['a', 'b', 'c']) await put(`${name}.png`, Buffer.from(`not a picture: ${name}`));
    for (const name of ['kept', 'gone']) await put(`${name}.png`, png);
    const first = await reload();
    expect(first.counts).toMatchObject({ imported: 2, removed: 0, rejected: 3 });

    // b fixed by a good image, gone deleted, d refused anew.
    await put('b.png', png);
    await env.blobs.delete('submissions/images/gone.png');
    await put('d.png', Buffer.from('not a picture: d'));
    const second = await reload();
    expect(second).toMatchObject({ imported: ['b'], removed: ['gone'], counts: { imported: 1, removed: 1, rejected: 3 } });
    expect(second.rejected.map((r: { file: string }) => r.file)).toEqual(['images/a.png', 'images/c.png', 'images/d.png']);
    const third = await reload();
    expect(third).toMatchObject({ imported: [], removed: ['gone'], rejected: second.rejected, counts: { ...second.counts, imported: 0 } });

    const files = async (reportId: string, list: string) => (await wholeList(reportId, list, 2)).items.map((item) => item.file ?? item.id);
    expect(await files(first.report_id, 'rejected')).toEqual(['images/a.png', 'images/b.png', 'images/c.png']);
    expect(await files(first.report_id, 'removed')).toEqual([]);
    for (const { report_id } of [second, third]) {
      expect(await files(report_id, 'rejected')).toEqual(['images/a.png', 'images/c.png', 'images/d.png']);
      expect(await files(report_id, 'removed')).toEqual(['gone']);
    }
    // What stands is kept once: the first pass's three refusals, then the second's changes from
    // the first refusal it does not share (c again, d) and its removal; the third adds nothing.
    expect(await env.db.prepare('SELECT COUNT(*) AS n FROM reload_standing').first()).toEqual({ n: 6 });
  });

  it('after the upgrade that keeps removals and refusals standing, the reports kept before page the same lists, and a reload carries on from them', async () => {
    for (const name of ['a', 'b']) await put(`${name}.png`, Buffer.from(`not a picture: ${name}`));
    await put('gone.png', png);
    const first = await reload();
    await env.blobs.delete('submissions/images/gone.png');
    await put('c.png', Buffer.from('not a picture: c'));
    const second = await reload();
    const lists = async (reportId: string) => ({
      removed: (await wholeList(reportId, 'removed', 100)).items,
      rejected: (await wholeList(reportId, 'rejected', 100)).items,
    });
    const before = [await lists(first.report_id), await lists(second.report_id)];
    expect(before[1].rejected).toHaveLength(3);

    // The database as migration 0025 left it: each report's removals and refusals among its items.
    for (const [i, { report_id }] of [first, second].entries()) {
      for (const list of ['removed', 'rejected'] as const) {
        for (const [seq, item] of before[i][list].entries()) {
          await env.db
            .prepare('INSERT INTO reload_report_items (report_id, list, seq, submission_id, file, reason) VALUES (?, ?, ?, ?, ?, ?)')
            .bind(report_id, list, seq, item.id, item.file, item.reason)
            .run();
        }
      }
    }
    for (const sql of ['DROP TABLE reload_standing', 'DROP INDEX reload_reports_seq', 'ALTER TABLE reload_reports DROP COLUMN seq'])
      await env.db.prepare(sql).run();
    await env.db.prepare("DELETE FROM schema_migrations WHERE name LIKE '0026%'").run();
    expect(await migrate(env.db)).toEqual(['0026_reload_standing.sql']);

    expect([await lists(first.report_id), await lists(second.report_id)]).toEqual(before);
    const third = await reload();
    expect(third).toMatchObject({ imported: [], removed: ['gone'], rejected: second.rejected, counts: { ...second.counts, imported: 0 } });
    expect(await lists(third.report_id)).toEqual(before[1]);
    expect([await lists(first.report_id), await lists(second.report_id)]).toEqual(before);
  });

  it('shows how far a running reload has come, and nothing once it is done', async () => {
    for (const name of ['a.png', 'b.png', 'c.png']) await put(name, png);
    const progress = async () => (await body(env.call('GET', '/api/submissions/reload/progress'))).reload;
    expect(await progress()).toBeNull();
    // The files' reads wait until the progress has been seen.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const [get, digest] = [env.blobs.get, env.blobs.digest];
    const held = (key: string) => (key.startsWith('submissions/images/') ? gate : Promise.resolve());
    env.blobs.get = async (key) => (await held(key), get.call(env.blobs, key));
    if (digest) env.blobs.digest = async (key, headBytes) => (await held(key), digest.call(env.blobs, key, headBytes));
    const running = reload();
    const seen = await until('the reload to read its files', progress, (shown) => shown?.phase === 'reading', { timeoutMs: 10_000, everyMs: 20 });
    expect(seen).toMatchObject({ phase: 'reading', listed: 3, to_read: 3, read: 0 });
    release();
    expect((await running).counts.imported).toBe(3);
    expect(await progress()).toBeNull();
  });

  it('keeps the last 20 reports; an older or unknown one is 404, a list it has not 400', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 21; i++) ids.push((await reload()).report_id);
    await refusal(env.call('GET', `/api/reloads/${ids[0]}`), 404, 'not_found');
    await body(env.call('GET', `/api/reloads/${ids[1]}`));
    await refusal(env.call('GET', '/api/reloads/rl_unknown'), 404, 'not_found');
    await refusal(env.call('GET', `/api/reloads/${ids[20]}?list=everything`), 400, 'invalid_request');
  });

  it('drops a report that lists more items than a statement deletes, every item of it, once 20 newer ones are kept', async () => {
    const imported = Array.from({ length: 4500 }, (_, i) => `big-${i}`);
    const none = { whole: [] };
    const big = await saveReloadReport(
      env.db,
      { imported, updated: [], removed: none, rejected: none, unchanged: 0, queued_jobs: 0, remaining: 0 },
      env.clock.now().toISOString(),
    );
    expect((await wholeList(big, 'imported', 1000)).items).toHaveLength(4500);
    const itemsOf = (id: string) => env.db.prepare('SELECT COUNT(*) AS n FROM reload_report_items WHERE report_id = ?').bind(id).first();
    for (let i = 0; i < 19; i++) await reload();
    expect(await itemsOf(big)).toEqual({ n: 4500 });
    await reload();
    await refusal(env.call('GET', `/api/reloads/${big}`), 404, 'not_found');
    expect(await itemsOf(big)).toEqual({ n: 0 });
  });
});
