import { describe, expect, it } from 'vitest';
import { handleReviewQueue } from '../../functions/review-queue.js';
import { openSqlite } from '../../lib/db/sqlite.js';
import { countedDatabase } from '../helpers/counted-db.js';
import { useTestEnv } from '../helpers/env.js';
import { body, seedSubmission, webMatch } from './seed.js';

// The SQLite file's own behaviour (another process's connection to it): not in the D1 run, where
// no answer is kept.
const env = useTestEnv();

const queue = async (query = '') => body(env.call('GET', `/api/review-queue${query}`));

describe('the review queue kept while nothing is committed', () => {
  it('asks the database only whether anything changed when the same page is asked again', async () => {
    await seedSubmission(env, 's1', { evidence: [webMatch()] });
    await seedSubmission(env, 's2');
    const counted = countedDatabase(env.db);
    const page = async (query = '') => (await handleReviewQueue(new Request(`http://127.0.0.1/api/review-queue${query}`), { ...env, db: counted })).json();
    const first = await page();
    expect(first.items.map((s: { id: string }) => s.id).sort()).toEqual(['s1', 's2']);
    expect(counted.tally.statements).toBeGreaterThan(1);
    counted.reset();
    expect(await page()).toEqual(first);
    expect(counted.tally.sql).toEqual([['write mark']]);
    // Another filter is another page.
    counted.reset();
    expect((await page('?decision=undecided&limit=1')).items).toHaveLength(1);
    expect(counted.tally.statements).toBeGreaterThan(1);
  });

  it('shows a decision made through the API at once', async () => {
    await seedSubmission(env, 's1', { evidence: [webMatch()] });
    await seedSubmission(env, 's2');
    expect((await queue()).items.map((s: { decision: unknown }) => s.decision)).toEqual([null, null]);
    await body(env.call('POST', '/api/submissions/s1/decision', { decision: '반려' }));
    const after = await queue();
    expect(after.items.find((s: { id: string }) => s.id === 's1').decision).toMatchObject({ value: '반려' });
    expect((await queue('?decision=undecided')).items.map((s: { id: string }) => s.id)).toEqual(['s2']);
  });

  it('shows what another process committed to the same file at once', async () => {
    await seedSubmission(env, 's1');
    expect((await queue()).items[0].title).toBe('title of s1');
    // The jobs process, or a second request process: its own connection to the same file.
    const other = openSqlite(env.paths.database);
    try {
      await other.prepare("UPDATE submissions SET title = 'renamed by another process' WHERE id = 's1'").run();
    } finally {
      other.close();
    }
    expect((await queue()).items[0].title).toBe('renamed by another process');
    expect((await queue('?q=renamed')).total).toBe(1);
  });
});
