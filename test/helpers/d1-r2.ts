import { Miniflare } from 'miniflare';
import { r2BlobStore, type R2BucketLike } from '../../lib/blobs/r2.js';
import type { Storage } from '../../lib/env.js';
import type { AllResult, RunResult, SqlValue, Statement } from '../../lib/ports.js';

/**
 * The Worker's storage for the test env (SVC_TEST_ADAPTERS=d1-r2): a D1 database and an R2
 * bucket of miniflare 3, in memory, a fresh pair for every env; the R2 bucket behind the Worker's
 * adapter (r2BlobStore), the database behind D1's limits as the test env keeps them.
 *
 * One miniflare holds PAIRS databases and buckets, so a test file starts workerd about once
 * (a second each time). Statements and bucket calls reach the bindings through a small Worker that
 * makes them there and answers JSON (or the object's bytes): one local HTTP call each, where
 * miniflare's binding proxy from Node makes several (about 8 ms against 30 ms a statement here)
 * and refuses a Buffer from Node's pool as an R2 value. D1 and R2 themselves still do all the work.
 */
const PAIRS = 48;

const BRIDGE = `
const UNDEFINED = '__undefined__';
const described = (o) => ({ key: o.key, size: o.size, etag: o.etag, uploaded: o.uploaded.toISOString() });
async function d1(db, { method, statements }) {
  const prepared = statements.map(([sql, values]) => db.prepare(sql).bind(...values.map((v) => (v === UNDEFINED ? undefined : v))));
  return Response.json({ result: method === 'batch' ? await db.batch(prepared) : await prepared[0][method]() });
}
async function r2(bucket, op, request, params) {
  const key = params.get('key');
  if (op === 'get') {
    const object = await bucket.get(key);
    return object ? new Response(object.body) : new Response(null, { status: 404 });
  }
  if (op === 'head') {
    const object = await bucket.head(key);
    return Response.json({ result: object ? described(object) : null });
  }
  if (op === 'put') return Response.json({ result: described(await bucket.put(key, await request.arrayBuffer())) });
  if (op === 'delete') return Response.json({ result: await bucket.delete(key) ?? null });
  const options = JSON.parse(params.get('options'));
  const page = await bucket.list(options);
  return Response.json({ result: { objects: page.objects.map(described), truncated: page.truncated, cursor: page.truncated ? page.cursor : undefined } });
}
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const [, kind, binding, op] = url.pathname.split('/');
    try {
      return kind === 'd1' ? await d1(env[binding], await request.json()) : await r2(env[binding], op, request, url.searchParams);
    } catch (error) {
      return Response.json({ error: error instanceof Error ? error.message : String(error) }, { status: 500 });
    }
  },
};`;
// JSON has no undefined; D1 refuses it as a bound value, so it is carried across to be refused there.
const UNDEFINED = '__undefined__';

interface Instance {
  miniflare: Miniflare;
  url: Promise<URL>;
  used: number;
}

const instances: Instance[] = [];

function startInstance(): Instance {
  const names = Array.from({ length: PAIRS }, (_, i) => i);
  const miniflare = new Miniflare({
    modules: true,
    script: BRIDGE,
    compatibilityDate: '2025-07-18',
    d1Databases: Object.fromEntries(names.map((i) => [`DB${i}`, `test-db-${i}`])),
    r2Buckets: Object.fromEntries(names.map((i) => [`MEDIA${i}`, `test-media-${i}`])),
  });
  const instance = { miniflare, url: miniflare.ready, used: 0 };
  instances.push(instance);
  return instance;
}

type Method = 'first' | 'all' | 'run' | 'batch';

class BridgedStatement implements Statement {
  constructor(
    private readonly send: (method: Method, statements: BridgedStatement[]) => Promise<unknown>,
    readonly sql: string,
    readonly values: SqlValue[] = [],
  ) {}

  bind(...values: SqlValue[]): Statement {
    return new BridgedStatement(this.send, this.sql, values);
  }

  first<T>(): Promise<T | null> {
    return this.send('first', [this]) as Promise<T | null>;
  }

  all<T>(): Promise<AllResult<T>> {
    return this.send('all', [this]) as Promise<AllResult<T>>;
  }

  run(): Promise<RunResult> {
    return this.send('run', [this]) as Promise<RunResult>;
  }
}

/** Sends one call to the bridge Worker: its JSON `result`, or its error thrown here. */
async function bridged(url: URL, init: RequestInit = {}): Promise<unknown> {
  const { result, error } = (await (await fetch(url, init)).json()) as { result?: unknown; error?: string };
  if (error !== undefined) throw new Error(error);
  return result;
}

/** An R2 bucket of the bridge as R2's binding answers (objects' `uploaded` a Date). */
function bridgedBucket(base: URL, name: string): R2BucketLike {
  const at = (op: string, params: Record<string, string>) => new URL(`/r2/${name}/${op}?${new URLSearchParams(params)}`, base);
  type Described = { key: string; size: number; etag: string; uploaded: string };
  const object = (o: Described | null) => o && { ...o, uploaded: new Date(o.uploaded) };
  return {
    async get(key) {
      const answer = await fetch(at('get', { key }));
      if (answer.status === 404) return null;
      if (!answer.ok) throw new Error(((await answer.json()) as { error: string }).error);
      const bytes = await answer.arrayBuffer();
      return { arrayBuffer: async () => bytes };
    },
    head: async (key) => object((await bridged(at('head', { key }))) as Described | null),
    put: (key, value) => bridged(at('put', { key }), { method: 'PUT', body: value as Uint8Array<ArrayBuffer> }),
    delete: async (key) => void (await bridged(at('delete', { key }), { method: 'DELETE' })),
    async list(options) {
      const page = (await bridged(at('list', { options: JSON.stringify(options) }))) as { objects: Described[]; truncated: boolean; cursor?: string };
      return { ...page, objects: page.objects.map((o) => object(o)!) };
    },
  };
}

/** A fresh D1 database and R2 bucket; closing the database makes its later statements fail, as a closed SQLite file's do. */
export async function d1r2Storage(): Promise<Storage> {
  const last = instances.at(-1);
  const instance = last && last.used < PAIRS ? last : startInstance();
  const n = instance.used++;
  const url = await instance.url;
  let open = true;

  const send = async (method: Method, statements: BridgedStatement[]): Promise<unknown> => {
    if (!open) throw new Error('The database connection is not open');
    const body = { method, statements: statements.map((s) => [s.sql, s.values.map((v) => (v === undefined ? UNDEFINED : v))]) };
    return bridged(new URL(`/d1/DB${n}`, url), { method: 'POST', body: JSON.stringify(body) });
  };
  const db: Storage['db'] = {
    prepare: (sql) => new BridgedStatement(send, sql),
    batch: (statements) => send('batch', statements as BridgedStatement[]) as Promise<unknown[]>,
    close: () => void (open = false),
    get open() {
      return open;
    },
  };
  return { db, blobs: r2BlobStore(bridgedBucket(url, `MEDIA${n}`)) };
}

/** Stops every miniflare this test file started. */
export async function stopD1r2(): Promise<void> {
  await Promise.all(instances.splice(0).map((i) => i.miniflare.dispose()));
}
