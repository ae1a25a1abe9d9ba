import { randomUUID } from 'node:crypto';
import type { Env } from './env.js';
import { claimNextJob, finishJob, type Job } from './repo/jobs.js';

/**
 * The in-process worker for jobs kept in the database. SVC_ENRICH_CONCURRENCY loops each claim one
 * job at a time (a claim is one atomic statement, so no job runs twice at once); a job left
 * running by a process that died is put back in the queue at start-up (see requeueInterruptedJobs).
 */
export type JobOutcome = { status: 'done' | 'skipped' } | { status: 'failed'; error: string };
export type JobHandler = (env: Env, job: Job) => Promise<JobOutcome>;

export interface JobRunner {
  start(): void;
  /** Tells idle loops that a job was queued. */
  wake(): void;
  /** Runs queued jobs in this call until none can be claimed (for tests and one-shot use). */
  drain(): Promise<number>;
  /** Stops claiming and waits for the jobs in flight. */
  stop(): Promise<void>;
}

const IDLE_POLL_MS = 2000;

export function createJobRunner(env: Env, handlers: Record<string, JobHandler>, concurrency: number): JobRunner {
  let running = false;
  const loops: Promise<void>[] = [];
  let wakeUp: (() => void)[] = [];

  async function runOne(): Promise<boolean> {
    const token = randomUUID();
    const job = await claimNextJob(env.db, token, env.clock.now().toISOString());
    if (!job) return false;
    let outcome: JobOutcome;
    const handler = handlers[job.type];
    try {
      outcome = handler ? await handler(env, job) : { status: 'failed', error: `no handler for job type ${job.type}` };
    } catch (error) {
      outcome = { status: 'failed', error: error instanceof Error ? error.message : String(error) };
    }
    await finishJob(env.db, job.id, token, outcome.status, outcome.status === 'failed' ? outcome.error : null, env.clock.now().toISOString());
    return true;
  }

  async function loop(): Promise<void> {
    while (running) {
      let worked = false;
      try {
        worked = await runOne();
      } catch (error) {
        env.log.error('job loop error', { error: error instanceof Error ? error.message : String(error) });
      }
      if (!worked && running) {
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

  return {
    start() {
      if (running) return;
      running = true;
      for (let i = 0; i < concurrency; i++) loops.push(loop());
    },
    wake() {
      const waiting = wakeUp;
      wakeUp = [];
      for (const w of waiting) w();
    },
    async drain() {
      let count = 0;
      const workers = Array.from({ length: concurrency }, async () => {
        while (await runOne()) count++;
      });
      await Promise.all(workers);
      return count;
    },
    async stop() {
      running = false;
      this.wake();
      await Promise.all(loops.splice(0));
    },
  };
}
