import { JOB_HANDLERS } from './handlers.js';
import { jobSlot, STORAGE_RETRY_MS, stoppedByFullStorage } from './loops.js';
import { JOB_TYPES } from '../repo/jobs.js';
import type { Env, JobNotice } from '../ports.js';

/**
 * The jobs port on Cloudflare Queues. A message says only "a job was queued"; the consumer claims
 * the oldest queued row (analysis first) exactly as the Node runner does. Delivery is at least once
 * and messages carry no job, so a repeated, late or lost message is harmless: a repeat finds
 * nothing to claim, and the scheduled sweep sends notices for rows still waiting.
 */
export interface QueueLike {
  sendBatch(messages: { body: unknown }[]): Promise<unknown>;
}

export interface MessageLike {
  ack(): void;
  retry(options?: { delaySeconds?: number }): void;
}

/** A queue takes at most 100 messages per batch (the platform's limit). */
export const QUEUE_BATCH_LIMIT = 100;
const NOTICE = { work: 1 } as const;

export function queueJobs(queue: QueueLike): JobNotice {
  return {
    async notify(count) {
      for (let sent = 0; sent < count; sent += QUEUE_BATCH_LIMIT) {
        await queue.sendBatch(Array.from({ length: Math.min(QUEUE_BATCH_LIMIT, count - sent) }, () => ({ body: NOTICE })));
      }
    },
  };
}

/**
 * Whether a consumer invocation may start one more job: it has spent little enough of its D1
 * queries and subrequests that the jobs in flight beside it still fit (worker.ts decides).
 */
export type RoomForAnotherJob = () => boolean;

/**
 * Each message of the batch runs jobs, the batch's at once, and its slot claims the next job as soon
 * as its own finishes, while the invocation has room, so no slot idles waiting for the batch's
 * slowest job and the queue's next batch (and the Node service's loops run the same way). The
 * notices of the jobs a slot ran beyond its own find nothing and are acknowledged; one that stops
 * for want of room leaves at least as many notices queued as jobs. A message whose job could not be
 * run because storage failed is retried (after the queue's max_retries it goes to the dead-letter
 * queue); a job that failed is recorded as failed by its slot and its message acknowledged.
 */
export async function consumeJobNotices(env: Env, messages: readonly MessageLike[], room: RoomForAnotherJob): Promise<void> {
  // A job mostly waits (the image service, providers, D1), and each claims its own row.
  await Promise.all(
    messages.map(async (message) => {
      // Analysis first: the types in JOB_TYPES' order, each job's end recorded with the next claim.
      const slot = jobSlot(env, JOB_TYPES, (job) => JOB_HANDLERS[job.type]);
      try {
        try {
          while (await slot.next()) if (!room()) break;
        } finally {
          await slot.close();
        }
        message.ack();
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        if (stoppedByFullStorage(error)) {
          // The job is back in the queue (or the stale-job sweep puts it back): try again later.
          env.log.warn('storage full: job notice retried later', { error: reason });
          message.retry({ delaySeconds: STORAGE_RETRY_MS / 1000 });
          return;
        }
        env.log.error('job notice could not be handled', { error: reason });
        message.retry();
      }
    }),
  );
}
