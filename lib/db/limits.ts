import type { Database, Statement } from '../ports.js';

/**
 * D1's limits as a guard, so that going over one fails here with a clear message instead of in
 * production only: at most 100 bound values per statement and 1,000 queries per Worker invocation
 * (a batch counts each of its statements). The Worker wraps its D1 binding once per invocation.
 */
export const D1_MAX_BOUND_VALUES = 100;
export const D1_MAX_QUERIES = 1000;

export class D1LimitExceeded extends Error {
  constructor(message: string) {
    super(`D1 limit: ${message}`);
    this.name = 'D1LimitExceeded';
  }
}

/** D1 under the guard, saying how many queries this invocation has left (the queue consumer asks before each further job). */
export interface LimitedDatabase extends Database {
  queriesLeft(): number;
}

export function limitedDatabase(db: Database, limits = { maxBoundValues: D1_MAX_BOUND_VALUES, maxQueries: D1_MAX_QUERIES }): LimitedDatabase {
  let queries = 0;
  const inner = new WeakMap<Statement, Statement>();
  const count = (n: number) => {
    queries += n;
    if (queries > limits.maxQueries) throw new D1LimitExceeded(`more than ${limits.maxQueries} queries in one invocation`);
  };
  const wrap = (statement: Statement): Statement => {
    const wrapped: Statement = {
      bind(...values) {
        if (values.length > limits.maxBoundValues) throw new D1LimitExceeded(`a statement binds ${values.length} values (at most ${limits.maxBoundValues})`);
        return wrap(statement.bind(...values));
      },
      first: <T>() => (count(1), statement.first<T>()),
      all: <T>() => (count(1), statement.all<T>()),
      run: () => (count(1), statement.run()),
    };
    inner.set(wrapped, statement);
    return wrapped;
  };
  return {
    queriesLeft: () => limits.maxQueries - queries,
    prepare: (sql) => wrap(db.prepare(sql)),
    batch(statements) {
      count(statements.length);
      return db.batch(statements.map((s) => inner.get(s) ?? s));
    },
    ...(db.writeMark && { writeMark: db.writeMark }),
  };
}
