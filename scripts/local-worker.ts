import { join } from 'node:path';
import { Miniflare } from 'miniflare';
import { migrate } from '../lib/db/migrate.js';
import { buildWorker } from './build-worker.js';
import type { Database } from '../lib/ports.js';

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
  /** Sees the path of every call the Worker makes to the image service, and which instance made it (tests). */
  onImageCall?: (path: string, instance: number) => void;
  /** Why the work may not start yet (`npm run dev:worker` copying images), or null: the Worker's STARTUP binding. */
  startup?: () => string | null;
  /** Applies the migrations to D1 before answering (the default); false leaves a fresh D1 empty (tests of the start-up). */
  migrate?: boolean;
  /**
   * Instances of the Worker, each consuming its own queue (1 by default): the first serves HTTP;
   * the scheduled sweep of each sends notices for waiting jobs to its own queue (benches).
   */
  consumers?: number;
}

/**
 * The binding straight from workerd to the image service, as a service binding reaches its
 * container in production. Through a function here instead, every image the Worker sends (each
 * file twice: the reload's probe and the analysis) was received and sent again by this Node
 * process, on the same CPU the deployment is measured on (docs/decisions/0045-one-round-trip-per-step.md).
 */
const straightTo = (imageServiceUrl: string) => ({ external: { address: new URL(imageServiceUrl).host, http: {} } });

/** The binding through a function here, which sees the path of every call (tests and the scale bench count them). */
function watchedImageService(imageServiceUrl: string, seen: (path: string) => void) {
  return async (request: Request) => {
    const path = new URL(request.url).pathname;
    seen(path);
    const answer = await fetch(`${imageServiceUrl}${path}`, {
      method: request.method,
      headers: { 'content-type': request.headers.get('content-type') ?? '' },
      body: await request.arrayBuffer(),
    });
    return new Response(await answer.arrayBuffer(), { status: answer.status, headers: answer.headers }) as never;
  };
}

export async function startLocalWorker(options: LocalWorkerOptions): Promise<Miniflare> {
  const consumers = options.consumers ?? 1;
  const scriptPath = await buildWorker();
  // Each instance of the Worker consumes its own queue: miniflare delivers one batch at a time per
  // queue, where Cloudflare runs several consumer invocations of one queue at once. D1 and R2 are
  // shared by id (the binding names, as before, so a dev data folder keeps its D1 and R2), as every
  // invocation shares them in production.
  const workers = Array.from({ length: consumers }, (_, i) => ({
    name: `svc-${i}`,
    modules: true,
    scriptPath,
    compatibilityDate: '2025-07-18',
    compatibilityFlags: ['nodejs_compat'],
    d1Databases: { DB: 'DB' },
    r2Buckets: { MEDIA: 'MEDIA' },
    queueProducers: { JOBS: `svc-jobs-${i}` },
    queueConsumers: { [`svc-jobs-${i}`]: { maxBatchSize: 4, maxBatchTimeout: 1 } },
    serviceBindings: {
      IMAGES: options.onImageCall
        ? watchedImageService(options.imageServiceUrl, (path) => options.onImageCall?.(path, i))
        : straightTo(options.imageServiceUrl),
      ...(options.startup ? { STARTUP: async () => Response.json({ reason: options.startup!() }) as never } : {}),
    },
    bindings: options.bindings,
  }));
  const mf = new Miniflare({
    ...(options.host ? { host: options.host } : {}),
    ...(options.port !== undefined ? { port: options.port } : {}),
    ...(options.persistDir ? { d1Persist: join(options.persistDir, 'd1'), r2Persist: join(options.persistDir, 'r2') } : {}),
    workers,
  });
  if (options.migrate ?? true) await migrate((await mf.getD1Database('DB')) as unknown as Database);
  return mf;
}
