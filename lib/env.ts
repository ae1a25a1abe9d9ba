import { SYSTEM_ACTOR, type Actor } from './auth/actor.js';
import type { Config } from './config.js';
import type { ConsoleAssets } from './assets.js';
import { folderAssets } from './assets-folder.js';
import { folderBlobStore } from './blobs/folder.js';
import type { BlobStore } from './blobs/types.js';
import type { Database } from './db/types.js';
import { migrate } from './db/migrate.js';
import { openSqlite } from './db/sqlite.js';
import { localImageService } from './images/local-service.js';
import type { ImageService } from './images/service.js';
import { nodeEgress } from './net/http-client.js';
import type { Egress } from './net/egress.js';
import { JOB_HANDLERS } from './job-handlers.js';
import { createJobRunner, type JobNotice, type JobRunner } from './jobs.js';
import { createLogger, type Logger } from './log.js';
import { dataPaths, ensureDataDirs, type DataPaths } from './paths.js';
import { unlimitedSubrequests, type Subrequests } from './subrequests.js';
import { systemClock, type Clock } from './time.js';

/** Everything a handler may use; built once at start-up (or by a test) from the validated config. */
export interface Env {
  config: Config;
  db: Database;
  /** Submitted images, downloads, captures, derived copies and thumbnails (lib/blobs/types.ts). */
  blobs: BlobStore;
  /** Every outbound HTTP request (lib/net/egress.ts). */
  egress: Egress;
  /** The console's static files. */
  assets: ConsoleAssets;
  clock: Clock;
  log: Logger;
  version: string;
  startedAt: Date;
  /** Everything that decodes pixels (lib/images/service.ts). */
  images: ImageService;
  jobs: JobNotice;
  /** Who the current work is for: the caller of a request (set by the router), else the service itself. */
  actor: Actor;
  /** What this invocation may still send to storage and other services (lib/subrequests.ts). */
  subrequests: Subrequests;
  /** The largest submitted file this runtime reads whole; a reload refuses larger ones unread. */
  maxFileBytes: number;
}

/** Where the records and the media are kept. The env closes the database when it closes. */
export interface Storage {
  db: Database & { close(): void; readonly open: boolean };
  blobs: BlobStore;
}

export interface EnvOptions {
  clock?: Clock;
  log?: Logger;
  version?: string;
  /**
   * Records and media kept elsewhere than in SVC_DATA_DIR's SQLite file and folder, such as a D1
   * database and an R2 bucket (lib/blobs/r2.ts).
   */
  storage?: Storage;
  /** Who runs the jobs this env queues: by default job loops in this process (server.ts may run them in another). */
  jobs?: JobRunner;
}

/** The Node service's env: its storage, its in-process job runner and image service, which it closes. */
export interface OwnedEnv extends Env {
  db: Storage['db'];
  paths: DataPaths;
  jobs: JobRunner;
  close(): Promise<void>;
}

/** Opens the SQLite file under SVC_DATA_DIR (or takes the given storage), applies migrations and wires the services. */
export async function createEnv(config: Config, options: EnvOptions = {}): Promise<OwnedEnv> {
  const paths = dataPaths(config.SVC_DATA_DIR);
  ensureDataDirs(paths);
  const { db, blobs } = options.storage ?? { db: openSqlite(paths.database), blobs: folderBlobStore(paths.dataDir) };
  await migrate(db);
  const clock = options.clock ?? systemClock;
  const images = localImageService(config.SVC_MAX_IMAGE_PIXELS);
  const env: OwnedEnv = {
    config,
    db,
    paths,
    blobs,
    egress: nodeEgress,
    assets: folderAssets(),
    clock,
    log: options.log ?? createLogger(config),
    version: options.version ?? '0.1.0',
    startedAt: clock.now(),
    images,
    actor: SYSTEM_ACTOR,
    subrequests: unlimitedSubrequests,
    maxFileBytes: Number.POSITIVE_INFINITY,
    jobs: undefined as unknown as JobRunner,
    async close() {
      await env.jobs.stop();
      await images.close();
      if (db.open) db.close();
    },
  };
  // The runner needs the finished env, and the env holds the runner.
  env.jobs = options.jobs ?? createJobRunner(env, {
    analyse: { handler: JOB_HANDLERS.analyse, concurrency: config.SVC_ANALYSIS_CONCURRENCY },
    enrich: { handler: JOB_HANDLERS.enrich, concurrency: config.SVC_ENRICH_CONCURRENCY },
    index: { handler: JOB_HANDLERS.index, concurrency: 1 },
  });
  return env;
}
