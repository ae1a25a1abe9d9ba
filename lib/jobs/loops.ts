import { randomUUID } from 'node:crypto';
import { isStorageFull } from '../http/errors.js';
import { claimNextJob, finishJob, putJobBack, type Job, type JobEnd, type JobType } from '../repo/jobs.js';
import type { Env, JobNotice } from '../ports.js';

/**
 * Jobs are rows of the job table, the record of all work and of its progress. The jobs port is
 * how workers learn that rows were queued: in Node, the in-process runner below; in the Worker,
 * Cloudflare Queues (lib/jobs/queue.ts). Either way a worker claims a row in one atomic statement,
 * so a job never runs twice at once and a repeated or late notice finds nothing to do.
 */
export type JobOutcome = { status: 'done' | 'skipped' } | { status: 'failed'; error: string };
export type JobHandler = (env: Env, job: Job) => Promise<JobOutcome>;

export interface JobWorker {
  handler: JobHandler;
  concurrency: number;
}

/**
 * A job stopped by a full disk. It went back to the queue, or, when even that write was refused,
 * `putBack` does it once there is room; meanwhile no worker should claim more work.
 */
export class StorageFull extends Error {
  constructor(
    message: string,
    readonly putBack: (() => Promise<void>) | null,
  ) {
    super(message);
    this.name = 'StorageFull';
  }
}

/** True when work stopped on a full disk, inside a job (StorageFull) or around it (claiming one). */
export const stoppedByFullStorage = (error: unknown) => error instanceof StorageFull || isStorageFull(error);

/** How long a job loop waits after a full disk before it tries again. */
export const STORAGE_RETRY_MS = 10_000;

async function waitForStorage(env: Env, job: Job, token: string, error: unknown): Promise<StorageFull> {
  const reason = `waiting for storage: ${error instanceof Error ? error.message : String(error)}`;
  const putBack = () => putJobBack(env.db, job.id, token, reason);
  try {
    await putBack();
    return new StorageFull(`job ${job.id} (${job.type}) waits for storage`, null);
  } catch (again) {
    if (!isStorageFull(again)) throw again;
    return new StorageFull(`job ${job.id} (${job.type}) waits for storage and is not back in the queue yet`, putBack);
  }
}

/**
 * How many times a job whose handler threw runs before it is failed. A throw is a failure outside
 * the job's own input (a handler answers that with a `failed` outcome: a rejected image, a file
 * gone), such as the image service answering 500 or a dropped connection while the machine is
 * loaded: the next try mostly succeeds (5 analyses of 10,000 through three Worker consumers at load
 * 15-19 failed once this way). A failure that lasts fails the job, and the next reload queues the
 * submission's owed work again.
 */
export const JOB_ATTEMPTS = 3;

/**
 * A worker that runs job after job: each time the oldest queued job of the first of `types` that
 * has one. It records each job's end with its claim of the next, in one batch (on D1 one round
 * trip where there were two, and one claim where each type found empty was one more), and the
 * last end when it stops (`close`, which the worker calls whatever stopped it). A handler's throw
 * is the job's failure, never the worker's: the job goes back to the queue until it has run
 * JOB_ATTEMPTS times, then fails; a full disk puts it back, and it runs again when there is room
 * (StorageFull is thrown).
 */
export interface JobSlot {
  /** Claims the next job and runs it; false when none could be claimed. */
  next(): Promise<boolean>;
  /** Records the end of the job run last, unless the claim after it did. */
  close(): Promise<void>;
}

export function jobSlot(env: Env, types: readonly JobType[], handlerOf: (job: Job) => JobHandler): JobSlot {
  // Kept until a batch that records it commits: a claim that fails leaves it for the next one or close.
  let ended: JobEnd | null = null;
  return {
    async next() {
      const token = randomUUID();
      const job = await claimNextJob(env.db, types, token, env.clock.now().toISOString(), ended).catch((error) => {
        // The claim writes too (the last job's end): a full disk refusing it stops the worker as one inside a job does.
        throw isStorageFull(error) ? new StorageFull(`a job claim waits for storage: ${(error as Error).message}`, null) : error;
      });
      ended = null;
      if (!job) return false;
      ended = await runClaimed(env, job, token, handlerOf(job));
      return true;
    },
    async close() {
      if (ended) await finishJob(env.db, ended);
      ended = null;
    },
  };
}

/** Runs a claimed job: the end to record, or null when the job went back to the queue to run again. */
async function runClaimed(env: Env, job: Job, token: string, handler: JobHandler): Promise<JobEnd | null> {
  let outcome: JobOutcome;
  try {
    outcome = await handler(env, job);
  } catch (error) {
    if (isStorageFull(error)) throw await waitForStorage(env, job, token, error);
    const reason = error instanceof Error ? error.message : String(error);
    if (job.attempts < JOB_ATTEMPTS) {
      env.log.warn('job failed, queued again', { job: job.id, type: job.type, attempt: job.attempts, error: reason });
      await putJobBack(env.db, job.id, token, reason);
      return null;
    }
    outcome = { status: 'failed', error: reason };
  }
  const error = outcome.status === 'failed' ? outcome.error : null;
  return { id: job.id, token, status: outcome.status, error, finishedAt: env.clock.now().toISOString() };
}

/** Claims the oldest queued job of a type and runs it to its recorded end; false when none could be claimed. */
export async function runNextJob(env: Env, type: JobType, handler: JobHandler): Promise<boolean> {
  const slot = jobSlot(env, [type], () => handler);
  try {
    return await slot.next();
  } finally {
    await slot.close();
  }
}

/**
 * The in-process runner of the Node service. Each job type has its own loops (analysis is CPU
 * work, one loop per core; enrichment waits on providers), so a long enrichment never holds up the
 * analysis of new submissions. A job left running by a process that died is put back in the queue
 * at start-up.
 */
export interface JobRunner extends JobNotice {
  start(): void;
  /** Runs queued jobs (of one type, or all) in this call until none can be claimed (for tests and one-shot use). */
  drain(type?: JobType): Promise<number>;
  /** Stops claiming and waits for the jobs in flight. */
  stop(): Promise<void>;
}

const IDLE_POLL_MS = 2000;

export function createJobRunner(env: Env, workers: Record<JobType, JobWorker>): JobRunner {
  let running = false;
  const loops: Promise<void>[] = [];
  let wakeUp: (() => void)[] = [];
  const types = Object.keys(workers) as JobType[];

  const runOne = (type: JobType) => runNextJob(env, type, workers[type].handler);

  async function loop(type: JobType): Promise<void> {
    let stranded: (() => Promise<void>) | null = null;
    while (running) {
      let worked = false;
      let full = false;
      try {
        if (stranded) await stranded();
        stranded = null;
        worked = await runOne(type);
      } catch (error) {
        full = stoppedByFullStorage(error);
        if (error instanceof StorageFull && error.putBack) stranded = error.putBack;
        const message = error instanceof Error ? error.message : String(error);
        if (full) env.log.warn('storage full: the job loop waits', { type, error: message });
        else env.log.error('job loop error', { type, error: message });
      }
      if (worked) {
        // A finished job may have queued another (an analysis queues its enrichment).
        wake();
      } else if (running) {
        await pause(full ? STORAGE_RETRY_MS : IDLE_POLL_MS);
      }
    }
  }

  function pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wakeUp.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  function wake() {
    const waiting = wakeUp;
    wakeUp = [];
    for (const w of waiting) w();
  }

  return {
    start() {
      if (running) return;
      running = true;
      for (const type of types) for (let i = 0; i < workers[type].concurrency; i++) loops.push(loop(type));
    },
    async notify() {
      wake();
    },
    async drain(only) {
      let count = 0;
      // Types in order, again until a whole pass finds nothing: an analysis queues an enrichment.
      for (let found = true; found; ) {
        found = false;
        for (const type of only ? [only] : types) {
          // One worker's throw (a full disk) stops its siblings too, and drain ends when all have.
          let stopped = false;
          const settled = await Promise.allSettled(
            Array.from({ length: workers[type].concurrency }, async () => {
              let n = 0;
              try {
                while (!stopped && (await runOne(type))) n++;
              } catch (error) {
                stopped = true;
                throw error;
              }
              return n;
            }),
          );
          const failure = settled.find((s) => s.status === 'rejected');
          if (failure) throw failure.reason;
          const n = settled.reduce((a, s) => a + (s.status === 'fulfilled' ? s.value : 0), 0);
          count += n;
          if (n > 0 && !only) found = true;
        }
      }
      return count;
    },
    async stop() {
      running = false;
      wake();
      await Promise.all(loops.splice(0));
    },
  };
}
