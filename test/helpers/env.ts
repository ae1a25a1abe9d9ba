import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { buildConfig, type Config } from '../../lib/config.js';
import { D1_MAX_BOUND_VALUES, limitedDatabase, type LimitedDatabase } from '../../lib/db/limits.js';
import { createEnv, type OwnedEnv, type Storage } from '../../lib/env.js';
import { createLogger } from '../../lib/log.js';
import { createRouter } from '../../functions/router.js';
import { d1r2Storage } from './d1-r2.js';
import { checkAnswer } from './openapi-check.js';
import { TEST_ADMIN_TOKEN } from './admin-token.js';
import type { Clock, Database, Statement } from '../../lib/ports.js';

/**
 * Which storage adapters every test env runs on: the Node service's SQLite file and data folder
 * (the default), or the Worker's D1 and R2 (`SVC_TEST_ADAPTERS=d1-r2`, vitest.d1-r2.config.ts).
 */
const ADAPTERS = process.env.SVC_TEST_ADAPTERS ?? 'sqlite-folder';
if (ADAPTERS !== 'sqlite-folder' && ADAPTERS !== 'd1-r2') throw new Error(`SVC_TEST_ADAPTERS: sqlite-folder or d1-r2, not ${JSON.stringify(ADAPTERS)}`);

/** A clock the test moves by hand. */
export function fakeClock(start = '2026-11-21T03:00:00.000Z'): Clock & { set(iso: string): void; advance(ms: number): void } {
  let t = new Date(start).getTime();
  return {
    now: () => new Date(t),
    set: (iso) => {
      t = new Date(iso).getTime();
    },
    advance: (ms) => {
      t += ms;
    },
  };
}

/** `call` sends the admin token unless the test gives its own authorization. */
export { TEST_ADMIN_TOKEN };

export interface TestEnv extends OwnedEnv {
  dataDir: string;
  clock: ReturnType<typeof fakeClock>;
  /**
   * Calls the router with a plain Request: no server, no port. It acts as the admin token unless
   * `headers.authorization` is given (an empty string sends none: an anonymous caller).
   */
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Response>;
  dispose(): Promise<void>;
}

/**
 * Rate limits off: the test clock stands still, so no bucket would refill between a test's calls.
 * The rate-limit tests (test/auth/rate-limits.test.ts) set them; servers on a real clock keep the defaults.
 */
const NO_RATE_LIMITS = { SVC_RATE_LIMIT_PER_SECOND: '0', SVC_RATE_LIMIT_ANONYMOUS_PER_SECOND: '0' };

/** A fresh env on a temporary data folder (or a fresh D1 and R2); `overrides` are environment variables as text. */
export async function createTestEnv(overrides: Record<string, string> = {}): Promise<TestEnv> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-test-'));
  const { config } = buildConfig({ SVC_DATA_DIR: dataDir, SVC_ADMIN_TOKEN: TEST_ADMIN_TOKEN, ...NO_RATE_LIMITS, ...overrides }, undefined, {
    cores: availableParallelism(),
  });
  const clock = fakeClock();
  const storage: Storage | undefined = ADAPTERS === 'd1-r2' ? await d1r2Storage() : undefined;
  const env = await createEnv(config, { clock, log: createLogger(config, { silent: true }), storage });
  keepD1BindingRules(env);
  const router = createRouter();
  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const given = { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, ...headers };
    if (given.authorization === '') delete (given as Record<string, string>).authorization;
    const init: RequestInit = { method, headers: given };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      if (!('content-type' in headers)) (init.headers as Record<string, string>)['content-type'] = 'application/json';
    }
    return router.fetch(new Request(`http://127.0.0.1${path}`, init) as never, env).then(async (response) => {
      await checkAnswer(method, path, response);
      return response;
    });
  };
  return Object.assign(env, {
    dataDir,
    clock,
    call,
    async dispose() {
      await env.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  }) as TestEnv;
}

/**
 * A fresh env for each test of the file (or describe block), disposed after it: the returned object
 * stands for the env of the test that runs. `overrides` as for createTestEnv.
 */
export function useTestEnv(overrides: Record<string, string> = {}): TestEnv {
  let current: TestEnv | undefined;
  beforeEach(async () => {
    current = await createTestEnv(overrides);
  });
  afterEach(async () => {
    await current?.dispose();
    current = undefined;
  });
  const env = () => {
    if (!current) throw new Error('the test env exists only while a test runs');
    return current;
  };
  return new Proxy({} as TestEnv, {
    get(_, key) {
      const value = Reflect.get(env(), key);
      return typeof value === 'function' ? value.bind(env()) : value;
    },
    set: (_, key, value) => Reflect.set(env(), key, value),
  });
}

/**
 * Every statement the suite runs keeps D1's rules for bound values, which better-sqlite3 alone would
 * never show: at most 100 per statement (lib/db/limits.ts; miniflare's D1 does not check it either),
 * and none undefined (D1 refuses it, better-sqlite3 binds null). The query budget is the Worker's
 * per invocation, not a test's.
 */
function keepD1BindingRules(env: OwnedEnv): void {
  const own = env.db;
  const guarded = limitedDatabase(refusingUndefined(own), { maxBoundValues: D1_MAX_BOUND_VALUES, maxQueries: Number.POSITIVE_INFINITY });
  env.db = Object.defineProperties(guarded, {
    close: { value: () => own.close() },
    open: { get: () => own.open },
  }) as LimitedDatabase & typeof own;
}

function refusingUndefined(db: Database): Database {
  const inner = new WeakMap<Statement, Statement>();
  const wrap = (statement: Statement, sql: string): Statement => {
    const wrapped: Statement = {
      bind(...values) {
        const at = values.indexOf(undefined as never);
        if (at >= 0) throw new TypeError(`D1 refuses undefined as bound value ${at + 1} of: ${sql.replace(/\s+/g, ' ').slice(0, 200)}`);
        return wrap(statement.bind(...values), sql);
      },
      first: () => statement.first(),
      all: () => statement.all(),
      run: () => statement.run(),
    };
    inner.set(wrapped, statement);
    return wrapped;
  };
  return {
    prepare: (sql) => wrap(db.prepare(sql), sql),
    batch: (statements) => db.batch(statements.map((s) => inner.get(s) ?? s)),
    ...(db.writeMark && { writeMark: db.writeMark }),
  };
}

export function testConfig(overrides: Record<string, string> = {}): Config {
  return buildConfig(overrides).config;
}
