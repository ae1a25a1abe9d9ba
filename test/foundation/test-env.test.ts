import { describe, expect, it } from 'vitest';
import { useTestEnv } from '../helpers/env.js';

/**
 * The test env refuses what D1 refuses, on whichever storage it runs (better-sqlite3 alone would
 * take both), so a statement that would fail in the Worker fails the suite.
 */
const env = useTestEnv();

describe('the test env keeps D1 binding rules', () => {
  it('refuses undefined as a bound value, and binds null', async () => {
    const refused = async () =>
      env.db
        .prepare('SELECT ? AS v')
        .bind(undefined as never)
        .first();
    await expect(refused).rejects.toThrow(/undefined/);
    expect(await env.db.prepare('SELECT ? AS v').bind(null).first()).toEqual({ v: null });
  });

  it('refuses more than 100 bound values in one statement', () => {
    const values = Array.from({ length: 101 }, (_, i) => `s${i}`);
    const sql = `SELECT id FROM submissions WHERE id IN (${values.map(() => '?').join(',')})`;
    expect(() => env.db.prepare(sql).bind(...values)).toThrow('D1 limit: a statement binds 101 values (at most 100)');
  });
});
