import consoleFiles from 'virtual:console-assets';
import migrationNames from 'virtual:migrations';
import { mapAssets } from './lib/assets/memory.js';
import { SYSTEM_ACTOR } from './lib/auth/actor.js';
import { r2BlobStore, type R2BucketLike } from './lib/blobs/r2.js';
import { buildConfig, type Config } from './lib/config.js';
import { D1_MAX_QUERIES, limitedDatabase } from './lib/db/limits.js';
import { httpImageService, type Fetcher } from './lib/images/http-service.js';
import { consumeJobNotices, queueJobs, type MessageLike, type QueueLike, type RoomForAnotherJob } from './lib/jobs/queue.js';
import { createLogger } from './lib/log.js';
import { fetchEgress } from './lib/net/fetch-egress.js';
import { countQueuedJobs, queueOwedWork, requeueStaleJobs } from './lib/repo/jobs.js';
import { appliedMigrationCount } from './lib/repo/schema.js';
import { runRetention } from './lib/review/retention.js';
import { countedBlobStore, countedEgress, countedFetcher, countedQueue, SUBREQUEST_LIMIT, subrequestBudget } from './lib/net/subrequests.js';
import { createRouter } from './functions/router.js';
import { systemClock } from './lib/time.js';
import type { Database, Env, Logger, Startup } from './lib/ports.js';

/**
 * The Worker entry: the same router, handlers and console as the Node service (server.ts), on
 * Cloudflare's engine. D1 is the database, R2 the blob store, a queue carries job notices, and
 * everything that decodes pixels goes to the image service through the IMAGES service binding.
 * Settings are the Worker's string bindings (vars and secrets), read like the process environment.
 */
export interface WorkerBindings {
  DB: Database;
  MEDIA: R2BucketLike;
  JOBS: QueueLike;
  IMAGES: { fetch: Fetcher };
  /** Only under `npm run dev:worker` (scripts/local-worker.ts): answers `{reason}`, null once its start-up work is done. */
  STARTUP?: { fetch: Fetcher };
  [setting: string]: unknown;
}

interface ScheduledEventLike {
  cron: string;
  scheduledTime: number;
}

// The daily retention run; the other trigger sweeps jobs every few minutes (wrangler.toml). A
// Worker module exports its handlers only, so none of these is exported.
const RETENTION_CRON = '0 3 * * *';
// A job running longer than this lost its consumer (a Worker invocation cannot run for so long).
const STALE_JOB_MS = 15 * 60 * 1000;
// Pages of owed work a sweep looks at (lib/repo/jobs.ts: 5,000 submissions and at most 4 queries a
// page): 800 of the invocation's 1,000 queries, a million pending submissions. Past a million, the
// rest is reached by a later sweep, once analyses have taken the first pages' submissions out.
const OWED_PAGES = 200;
// An isolate has 128 MB, and a queue batch runs its 4 jobs side by side, each holding the file it
// analyses and the copy it sends to the image service: 4 x 2 x 12 MiB leaves room for the rest.
const MAX_FILE_BYTES = 12 * 1024 * 1024;

interface IsolateParts {
  bindings: WorkerBindings;
  config: Config;
  log: Logger;
  startedAt: Date;
  /** Start-up seen done (isolateStartup): then never asked again in this isolate. */
  migrated: boolean;
  workReady: boolean;
}

let isolate: IsolateParts | undefined;
const router = createRouter();
const assets = mapAssets(consoleFiles);

/** Parts that live as long as the isolate: the config and the log. */
function isolateParts(bindings: WorkerBindings): IsolateParts {
  if (isolate?.bindings === bindings) return isolate;
  const settings = Object.fromEntries(Object.entries(bindings).filter((e): e is [string, string] => typeof e[1] === 'string'));
  const { config, warnings } = buildConfig(settings);
  const log = createLogger(config, { sink: (level, line) => (level === 'info' ? console.log(line) : console.error(line)) });
  for (const warning of warnings) log.warn('configuration corrected', { warning });
  isolate = { bindings, config, log, startedAt: systemClock.now(), migrated: false, workReady: false };
  return isolate;
}

/**
 * One invocation's env: fresh budgets of D1 queries (lib/db/limits.ts) and of subrequests to R2, the
 * image service, the queue and the web (lib/net/subrequests.ts); the rest shared. A queue consumer
 * starts a further job only while half of each budget is left: the batch's other jobs may be in
 * flight beside it, and a batch of 4 jobs has always fit in a whole budget (an analysis makes 25-34
 * queries in 16-20 round trips, and 4 subrequests).
 */
function invocation(bindings: WorkerBindings): { env: Env; room: RoomForAnotherJob } {
  const parts = isolateParts(bindings);
  const subrequests = subrequestBudget();
  const db = limitedDatabase(bindings.DB);
  const env: Env = {
    config: parts.config,
    db,
    blobs: countedBlobStore(r2BlobStore(bindings.MEDIA), subrequests),
    egress: countedEgress(fetchEgress(), subrequests),
    assets,
    clock: systemClock,
    log: parts.log,
    version: '0.1.0',
    startedAt: parts.startedAt,
    images: httpImageService(countedFetcher((request) => bindings.IMAGES.fetch(request), subrequests)),
    jobs: queueJobs(countedQueue(bindings.JOBS, subrequests)),
    actor: SYSTEM_ACTOR,
    subrequests,
    maxFileBytes: MAX_FILE_BYTES,
    startup: isolateStartup(parts),
  };
  return { env, room: () => db.queriesLeft() >= D1_MAX_QUERIES / 2 && subrequests.left() >= SUBREQUEST_LIMIT / 2 };
}

/**
 * Start-up as the Worker sees it. D1 must hold every migration this bundle was built with: a
 * deployment whose migrations were not applied, or `npm run dev:worker` before it has applied them,
 * answered 500 "no such table". And a `STARTUP` binding, where there is one (`npm run dev:worker`
 * while it copies the data folder's images into the bucket), must say the work may start: a reload
 * meanwhile would find half the images and the registry naming files not yet there. Each is asked
 * until it says yes, then never again in this isolate.
 */
function isolateStartup(parts: IsolateParts): Startup {
  const { bindings } = parts;
  return {
    async waiting(what) {
      if (!parts.migrated) {
        const applied = await appliedMigrationCount(bindings.DB, migrationNames);
        if (applied < migrationNames.length) return `the database is not migrated yet (${applied} of ${migrationNames.length} migrations applied)`;
        parts.migrated = true;
      }
      if (what === 'database' || parts.workReady) return null;
      const reason = bindings.STARTUP
        ? ((await (await bindings.STARTUP.fetch(new Request('http://startup/'))).json()) as { reason: string | null }).reason
        : null;
      if (reason) return reason;
      parts.workReady = true;
      return null;
    },
  };
}

/** Requeues jobs whose consumer died, queues owed work, and sends a notice for each waiting job. */
async function sweepJobs(env: Env): Promise<number> {
  const now = env.clock.now();
  await requeueStaleJobs(env.db, new Date(now.getTime() - STALE_JOB_MS).toISOString());
  await queueOwedWork(env.db, now.toISOString(), OWED_PAGES);
  const waiting = await countQueuedJobs(env.db);
  await env.jobs.notify(waiting);
  return waiting;
}

export default {
  fetch(request: Request, bindings: WorkerBindings): Promise<Response> {
    // Cloudflare sets this header on every request it delivers; a client cannot.
    return router.fetch(request, invocation(bindings).env, { clientAddress: request.headers.get('cf-connecting-ip') });
  },
  async queue(batch: { messages: readonly MessageLike[] }, bindings: WorkerBindings): Promise<void> {
    const { env, room } = invocation(bindings);
    await consumeJobNotices(env, batch.messages, room);
  },
  async scheduled(event: ScheduledEventLike, bindings: WorkerBindings): Promise<void> {
    const { env } = invocation(bindings);
    if (event.cron === RETENTION_CRON) await runRetention(env);
    else await sweepJobs(env);
  },
};
