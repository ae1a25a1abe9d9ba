import { join } from 'node:path';
import { Miniflare } from 'miniflare';
import { migrate } from '../lib/db/migrate.js';
import type { Database } from '../lib/db/types.js';
import { buildWorker } from './build-worker.js';

/**
 * The Worker bundle under miniflare with what wrangler.toml gives it in production: D1 (`DB`, the
 * migrations applied), R2 (`MEDIA`), the job queue and its consumer (`JOBS`, batches of 4), and the
 * image service behind the `IMAGES` binding (a running image-service.ts, reached over HTTP).
 * `npm run dev:worker`, the Worker test and the Worker scale bench all start it here.
 */
export interface LocalWorkerOptions {
  /** The Worker's vars and secrets. */
  bindings: Record<string, string>;
  imageServiceUrl: string;
  host?: string;
  port?: number;
  /** Keeps D1 and R2 under this folder between runs (dev); in memory otherwise. */
  persistDir?: string;
  /** Sees the path of every call the Worker makes to the image service (tests). */
  onImageCall?: (path: string) => void;
}

export async function startLocalWorker(options: LocalWorkerOptions): Promise<Miniflare> {
  const mf = new Miniflare({
    modules: true,
    scriptPath: await buildWorker(),
    compatibilityDate: '2025-07-18',
    compatibilityFlags: ['nodejs_compat'],
    ...(options.host ? { host: options.host } : {}),
    ...(options.port !== undefined ? { port: options.port } : {}),
    d1Databases: ['DB'],
    r2Buckets: ['MEDIA'],
    ...(options.persistDir ? { d1Persist: join(options.persistDir, 'd1'), r2Persist: join(options.persistDir, 'r2') } : {}),
    queueProducers: { JOBS: 'svc-jobs' },
    queueConsumers: { 'svc-jobs': { maxBatchSize: 4, maxBatchTimeout: 1 } },
    serviceBindings: {
      async IMAGES(request) {
        const path = new URL(request.url).pathname;
        options.onImageCall?.(path);
        const answer = await fetch(`${options.imageServiceUrl}${path}`, {
          method: request.method,
          headers: { 'content-type': request.headers.get('content-type') ?? '' },
          body: await request.arrayBuffer(),
        });
        return new Response(await answer.arrayBuffer(), { status: answer.status, headers: answer.headers }) as never;
      },
    },
    bindings: options.bindings,
  });
  await migrate((await mf.getD1Database('DB')) as unknown as Database);
  return mf;
}
