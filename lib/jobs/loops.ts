import { randomUUID } from 'node:crypto';
import { claimNextJob, finishJob, type Job, type JobType } from '../repo/jobs.js';
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
 * Claims the oldest queued job of a type and runs it to its recorded end; false when none could
 * be claimed. A handler's throw is the job's failure, never the worker's.
 */
export async function runNextJob(env: Env, type: JobType, handler: JobHandler): Promise<boolean> {
  const token = randomUUID();
  const job = await claimNextJob(env.db, type, token, env.clock.now().toISOString());
  if (!job) return false;
  let outcome: JobOutcome;
  try {
    outcome = await handler(env, job);
  } catch (error) {
    outcome = { status: 'failed', error: error instanceof Error ? error.message : String(error) };
  }
  await finishJob(env.db, job.id, token, outcome.status, outcome.status === 'failed' ? outcome.error : null, env.clock.now().toISOString());
  return true;
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
    while (running) {
      let worked = false;
      try {
        worked = await runOne(type);
      } catch (error) {
        env.log.error('job loop error', { type, error: error instanceof Error ? error.message : String(error) });
      }
      if (worked) {
        // A finished job may have queued another (an analysis queues its enrichment).
        wake();
      } else if (running) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, IDLE_POLL_MS);
          wakeUp.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    }
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
          const done = await Promise.all(
            Array.from({ length: workers[type].concurrency }, async () => {
              let n = 0;
              while (await runOne(type)) n++;
              return n;
            }),
          );
          const n = done.reduce((a, b) => a + b, 0);
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
