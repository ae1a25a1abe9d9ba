import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestEnv } from '../helpers/env.js';
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

/** Every item of one list of a report, following next_cursor page by page. */
async function wholeList(reportId: string, list: string, limit: number) {
  const items: { id: string | null; file: string | null; reason: string | null }[] = [];
  const pages: number[] = [];
  for (let cursor: string | null = null; ; ) {
    const page: { items: typeof items; next_cursor: string | null } = await body(
      env.call('GET', `/api/reloads/${reportId}?list=${list}&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`),
    );
    items.push(...page.items);
    pages.push(page.items.length);
    cursor = page.next_cursor;
    if (!cursor) return { items, pages, last: page };
  }
}

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
    let seen = await progress();
    for (const deadline = Date.now() + 10_000; seen?.phase !== 'reading' && Date.now() < deadline; seen = await progress()) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
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
});
