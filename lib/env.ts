import { SYSTEM_ACTOR } from './auth/actor.js';
import type { Config } from './config.js';
import { folderAssets } from './assets/folder.js';
import { folderBackups } from './backup/folder.js';
import { folderBlobStore } from './blobs/folder.js';
import { migrate } from './db/migrate.js';
import { openSqlite } from './db/sqlite.js';
import { folderKeypointStore } from './images/keypoint-store.js';
import { localImageService } from './images/local-service.js';
import { watchedFolder } from './ingest/folder-watch.js';
import { nodeEgress } from './net/http-client.js';
import { JOB_HANDLERS } from './jobs/handlers.js';
import { createJobRunner, type JobRunner } from './jobs/loops.js';
import { createLogger } from './log.js';
import { backupFolder, dataPaths, ensureDataDirs, type DataPaths } from './paths.js';
import { unlimitedSubrequests } from './net/subrequests.js';
import { systemClock } from './time.js';
import type { BlobStore, Clock, Database, Env, Logger } from './ports.js';

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
  /**
   * Who runs the jobs this env queues: job loops in this process (the default), or, for a request
   * process of server.ts's cluster, the primary process, told over node:cluster's channel.
   */
  jobs?: 'in-process' | 'primary';
}

/** What a request process sends the primary when its requests queued jobs. */
export interface JobsQueuedMessage {
  type: 'jobs-queued';
  count: number;
}

/** The jobs port of a request process: it runs no job, it tells the primary, whose loops do. */
function primaryProcessJobs(): JobRunner {
  return {
    start() {},
    notify: async (count) => void process.send!({ type: 'jobs-queued', count } satisfies JobsQueuedMessage),
    drain: async () => 0,
    stop: async () => {},
  };
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
  const keypoints = config.SVC_KEYPOINTS_MAX_MB > 0 ? folderKeypointStore(paths.keypointsDir, config.SVC_KEYPOINTS_MAX_MB * 1024 * 1024) : undefined;
  const images = localImageService(config.SVC_MAX_IMAGE_PIXELS, { keypoints });
  const version = options.version ?? '0.1.0';
  const env: OwnedEnv = {
    config,
    db,
    paths,
    blobs,
    egress: nodeEgress,
    assets: folderAssets(),
    clock,
    log: options.log ?? createLogger(config),
    version,
    startedAt: clock.now(),
    images,
    actor: SYSTEM_ACTOR,
    subrequests: unlimitedSubrequests,
    maxFileBytes: Number.POSITIVE_INFINITY,
    // Online backups copy the SQLite file and the data folder; other storage has its own (D1 Time Travel).
    backups: options.storage
      ? undefined
      : folderBackups({ dataDir: paths.dataDir, folder: backupFolder(config), keep: config.SVC_BACKUP_KEEP, version, clock }),
    // The data folder's submissions are journalled by the jobs process's watcher (server.ts); a bucket's are not.
    watchedFolder: options.storage ? undefined : watchedFolder(db, paths),
    jobs: undefined as unknown as JobRunner,
    async close() {
      await env.jobs.stop();
      await images.close();
      if (db.open) db.close();
    },
  };
  // The runner needs the finished env, and the env holds the runner.
  env.jobs =
    options.jobs === 'primary'
      ? primaryProcessJobs()
      : createJobRunner(env, {
          analyse: { handler: JOB_HANDLERS.analyse, concurrency: config.SVC_ANALYSIS_CONCURRENCY },
          enrich: { handler: JOB_HANDLERS.enrich, concurrency: config.SVC_ENRICH_CONCURRENCY },
          index: { handler: JOB_HANDLERS.index, concurrency: 1 },
          backup: { handler: JOB_HANDLERS.backup, concurrency: 1 },
        });
  return env;
}
