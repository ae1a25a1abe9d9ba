import os from 'node:os';
import { Worker } from 'node:worker_threads';

/**
 * Worker threads that run one script, one per core by default, for work that would otherwise hold
 * the event loop or stay on one core (the data folder's file digests, the JPEG reader, the
 * geometric check's OpenCV). A call goes to the least busy worker; workers start on first use and
 * do not keep the process alive while idle. A worker that fails, or that has been on one call past
 * the call's deadline (counted from when the worker takes it up), is dropped: every call it owed is
 * answered with why, and the next call starts another. The script answers each message
 * `{ id, ...request }` with `{ id, ...answer }`, or with `{ id, error }` when it could not do that
 * one call (the others go on), and posts `{ fatal }` when it cannot work at all (a library that
 * did not start): it is then dropped as a worker that failed, with that reason.
 */
export interface WorkerPool<Request, Answer> {
  call(request: Request, options: { deadlineMs: number; transfer?: ArrayBuffer[] }): Promise<PoolOutcome<Answer>>;
}

/**
 * `late`: this call's deadline passed (what it asked is stuck or slow: asking it again may hang
 * the next worker too); `dropped`: its worker was dropped for another call's deadline (this one
 * may be asked again); `failed`: its worker failed (an error, an exit, its `fatal` message);
 * `error`: the worker could not do this call (its worker goes on). `why` says what happened, for
 * the caller's own error.
 */
export type PoolOutcome<Answer> = { ok: true; answer: Answer } | { ok: false; reason: 'late' | 'dropped' | 'failed' | 'error'; why: string };

/** What a worker posts: an answer or an error for one call, or that it cannot work at all. */
type Posted = { id: number; error?: string } | { fatal: string };

interface Owed {
  settle(outcome: PoolOutcome<never>): void;
  deadlineMs: number;
  /** Set once the worker takes the call up. */
  timer?: NodeJS.Timeout;
}

interface Slot {
  worker: Worker | null;
  /** The worker runs its script: a deadline counts from here, not from a start that waits for a core. */
  online: boolean;
  /** In the order sent, which is the order a worker takes its messages up. */
  owed: Map<number, Owed>;
}

export function workerPool<Request extends object, Answer extends object>(script: URL, size = os.availableParallelism()): WorkerPool<Request, Answer> {
  const slots: Slot[] = Array.from({ length: Math.max(1, size) }, () => ({ worker: null, online: false, owed: new Map() }));
  let nextId = 0;

  /** Drops the worker, answering every call it owed: `late` names the call past its deadline, otherwise `failure` says why the worker failed. */
  const drop = (slot: Slot, worker: Worker, { late, failure = '' }: { late?: number; failure?: string }) => {
    if (slot.worker !== worker) return;
    slot.worker = null;
    for (const [id, owed] of slot.owed) {
      clearTimeout(owed.timer);
      if (late === undefined) owed.settle({ ok: false, reason: 'failed', why: failure });
      else if (id === late) owed.settle({ ok: false, reason: 'late', why: `no answer within ${owed.deadlineMs} ms` });
      else owed.settle({ ok: false, reason: 'dropped', why: 'its worker was dropped for another call that passed its deadline' });
    }
    slot.owed.clear();
    void worker.terminate();
  };

  // The oldest call owed is the one the worker is on: its deadline runs from then, so that a call
  // waiting behind a stuck one is not blamed for it.
  const armHead = (slot: Slot, worker: Worker) => {
    const head = slot.owed.entries().next().value;
    if (!head || head[1].timer || !slot.online) return;
    const [id, owed] = head;
    // Not referenced: a stuck worker is dropped if the process is still running, and never keeps it running.
    owed.timer = setTimeout(() => drop(slot, worker, { late: id }), owed.deadlineMs).unref();
  };

  const start = (slot: Slot) => {
    const worker = new Worker(script);
    worker.on('online', () => {
      if (slot.worker !== worker) return;
      slot.online = true;
      armHead(slot, worker);
    });
    worker.on('message', (posted: Posted) => {
      if ('fatal' in posted) return drop(slot, worker, { failure: posted.fatal });
      const { id, ...answer } = posted;
      const owed = slot.owed.get(id);
      slot.owed.delete(id);
      if (slot.owed.size === 0) worker.unref();
      if (!owed) return;
      clearTimeout(owed.timer);
      armHead(slot, worker);
      if (typeof answer.error === 'string') owed.settle({ ok: false, reason: 'error', why: answer.error });
      else owed.settle({ ok: true, answer: answer as never });
    });
    worker.on('error', (error) => drop(slot, worker, { failure: error.message }));
    worker.on('exit', (code) => drop(slot, worker, { failure: `the worker exited with code ${code}` }));
    slot.worker = worker;
    slot.online = false;
    return worker;
  };

  return {
    call(request, { deadlineMs, transfer = [] }) {
      const slot = slots.reduce((least, candidate) => (candidate.owed.size < least.owed.size ? candidate : least));
      const worker = slot.worker ?? start(slot);
      const id = nextId++;
      return new Promise((resolve) => {
        slot.owed.set(id, { settle: resolve as Owed['settle'], deadlineMs });
        armHead(slot, worker);
        // Referenced while it owes an answer, so that a caller awaiting it keeps the process alive.
        worker.ref();
        worker.postMessage({ ...request, id }, transfer);
      });
    },
  };
}
