import type { Database, Statement } from '../../lib/ports.js';

/**
 * What work made of the database port: each `first`, `all` or `run` is one statement and one round
 * trip (on D1, one call into its process), a `batch` one round trip for all its statements. `sql`
 * lists each round trip's statements, the first words of each, in the order they were sent.
 * `rows` counts the rows the statements answered and those they wrote (inserted, changed or deleted).
 */
export interface DatabaseTally {
  roundTrips: number;
  statements: number;
  rows: number;
  sql: string[][];
}

/** Rows a statement's result answered or wrote: `all`'s results, `first`'s row, `run`'s changes. */
function rowsOf(result: unknown): number {
  if (result === null || typeof result !== 'object') return 0;
  const { results, meta } = result as { results?: unknown[]; meta?: { changes?: number } };
  if (Array.isArray(results)) return results.length;
  return typeof meta?.changes === 'number' ? meta.changes : 1;
}

/** The port wrapped so that a test can count what one piece of work sends; `tally` is read and `reset` as the test goes. */
export function countedDatabase(db: Database): Database & { tally: DatabaseTally; reset(): void } {
  const tally: DatabaseTally = { roundTrips: 0, statements: 0, rows: 0, sql: [] };
  const sqlOf = new WeakMap<Statement, string>();
  const inner = new WeakMap<Statement, Statement>();
  const sent = (sql: string[]) => {
    tally.roundTrips++;
    tally.statements += sql.length;
    tally.sql.push(sql.map((s) => s.replace(/\s+/g, ' ').trim().slice(0, 60)));
  };
  const counted = <T>(result: T): T => {
    tally.rows += rowsOf(result);
    return result;
  };
  const wrap = (statement: Statement, sql: string): Statement => {
    const wrapped: Statement = {
      bind: (...values) => wrap(statement.bind(...values), sql),
      first: <T>() => (sent([sql]), statement.first<T>().then(counted)),
      all: <T>() => (sent([sql]), statement.all<T>().then(counted)),
      run: () => (sent([sql]), statement.run().then(counted)),
    };
    inner.set(wrapped, statement);
    sqlOf.set(wrapped, sql);
    return wrapped;
  };
  return {
    tally,
    reset() {
      Object.assign(tally, { roundTrips: 0, statements: 0, rows: 0, sql: [] });
    },
    prepare: (sql) => wrap(db.prepare(sql), sql),
    batch(statements) {
      sent(statements.map((s) => sqlOf.get(s) ?? '?'));
      return db.batch(statements.map((s) => inner.get(s) ?? s)).then((results) => {
        for (const result of results) counted(result);
        return results;
      });
    },
    ...(db.writeMark && { writeMark: () => (sent(['write mark']), db.writeMark!()) }),
  };
}
