import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { buildConfig } from '../../lib/config.js';
import { createLogger } from '../../lib/log.js';
import type { Logger } from '../../lib/ports.js';
import { startServer, type RunningServer } from '../../server.js';
import { TEST_ADMIN_TOKEN } from './admin-token.js';
import { copyFixture } from './fixtures.js';

/**
 * The real Node server on 127.0.0.1, on a free port with a temporary data folder, for the tests that
 * need HTTP itself (sockets, stop and restart, the browser console). Unless `settings` say otherwise,
 * providers have no keys (so nothing leaves the machine) and the language model points at a closed
 * local port; `startFakeProviders().settings` points it at the fake-provider world instead.
 */

export interface Seed {
  /** File name in data/submissions/images -> fixture photo copied there. */
  images?: Record<string, string>;
  /** Entries of data/submissions/submissions.json. */
  registry?: unknown[];
}

export interface ServerOptions {
  /** Environment variable text over the defaults. */
  settings?: Record<string, string>;
  seed?: Seed;
  /** Accounts created through the API once the server answers. */
  accounts?: readonly { username: string; password: string; role: string }[];
  /** Where the server logs; silent unless given. */
  log?: Logger;
}

export interface TestServer {
  /** Base address, e.g. http://127.0.0.1:40123; a new one after `restart`. */
  url: string;
  dataDir: string;
  server: RunningServer;
  /**
   * A request to the server, as the admin token unless `init.headers` carry an authorization (an
   * empty one sends none: an anonymous caller).
   */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** Calls the JSON API as the admin token; throws on a non-2xx answer with the error body in the message. */
  api<T = any>(method: string, path: string, body?: unknown): Promise<T>;
  /** Stops the server and starts it again on the same data folder and settings, as a process restart does. */
  restart(): Promise<void>;
  dispose(): Promise<void>;
}

async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/**
 * `fetch` and `api` of a TestServer for any service at `url` (the Worker under miniflare too), as
 * the admin token `token`.
 */
export function adminClient(url: () => string, token = TEST_ADMIN_TOKEN): Pick<TestServer, 'fetch' | 'api'> {
  const client: Pick<TestServer, 'fetch' | 'api'> = {
    fetch(path, init = {}) {
      const headers = new Headers(init.headers);
      if (!headers.has('authorization')) headers.set('authorization', `Bearer ${token}`);
      if (headers.get('authorization') === '') headers.delete('authorization');
      return fetch(`${url()}${path}`, { ...init, headers });
    },
    async api(method, path, body) {
      const init: RequestInit = body === undefined ? { method } : { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
      const response = await client.fetch(path, init);
      const text = await response.text();
      if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
      return JSON.parse(text);
    },
  };
  return client;
}

export async function startTestServer(options: ServerOptions = {}): Promise<TestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-server-'));
  const { config } = buildConfig({
    LOCALLLM_BASE_URL: `http://127.0.0.1:${await closedPort()}`,
    ...options.settings,
    SVC_DATA_DIR: dataDir,
    SVC_HOST: '127.0.0.1',
    SVC_PORT: '0',
    SVC_ADMIN_TOKEN: TEST_ADMIN_TOKEN,
  });
  const log = options.log ?? createLogger(config, { silent: true });
  const running: TestServer = {
    url: '',
    dataDir,
    server: await startServer(config, { log }),
    ...adminClient(() => running.url),
    async restart() {
      await running.server.stop();
      running.server = await startServer(config, { log });
      running.url = running.server.url;
    },
    async dispose() {
      await running.server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  running.url = running.server.url;
  const imagesDir = join(dataDir, 'submissions', 'images');
  for (const [as, fixture] of Object.entries(options.seed?.images ?? {})) copyFixture(fixture, imagesDir, as);
  if (options.seed?.registry) writeFileSync(join(dataDir, 'submissions', 'submissions.json'), JSON.stringify(options.seed.registry, null, 2));
  for (const account of options.accounts ?? []) await running.api('POST', '/api/accounts', account);
  return running;
}

/**
 * The server of a test file or describe block: started before its first test and stopped after its
 * last. The returned object is filled in when the server starts, so read it inside hooks and tests;
 * `options` may be a function, called then, to use what an earlier hook started (fake providers).
 */
export function useTestServer(options: ServerOptions | (() => ServerOptions) = {}): TestServer {
  const holder = {} as TestServer;
  beforeAll(async () => {
    // Reads go through to the started server: its address after a restart too.
    Object.setPrototypeOf(holder, await startTestServer(typeof options === 'function' ? options() : options));
  });
  afterAll(async () => {
    await holder.dispose?.();
  });
  return holder;
}
