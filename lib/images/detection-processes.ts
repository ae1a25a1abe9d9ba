import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * The detection processes (detection-worker.mjs), one per slot, each started on first use and
 * reused. Processes, not worker threads: onnxruntime's native code aborts the whole process when
 * the thread it runs on is stopped mid-run (a worker thread ended at its deadline took the service
 * down with it), and a crash in it ends only its own process. A request goes to the process with
 * the fewest pending. If one dies, or owes an answer past the deadline, it is killed, the requests
 * it held are rejected and its slot starts a fresh one for the next request sent there; the others
 * carry on.
 */
export interface DetectionProcesses {
  /** Sends a request to the least busy process; its answer, or why there is none. */
  run<T>(request: Record<string, unknown>): Promise<T>;
  /** Ends every process (pending requests fail) and refuses requests from then on. */
  close(): Promise<void>;
  /** Whether close was called. */
  readonly closed: boolean;
}

// A fresh detection process converts and loads its models before its first request (about 1 s of
// CPU); on a loaded machine that took longer than the 10 s a request may run, and the first
// pictures of a reload failed their detection. Loading has its own bound, and a request's
// deadline counts from when the process starts it, not while it waits its turn.
const LOAD_DEADLINE_MS = 60_000;

type WorkerMessage = { id: number; ok: true } | { id: number; ok: false; error: string } | { fatal: string } | { ready: true } | { running: number };

interface PendingDetection {
  resolve(answer: unknown): void;
  reject(error: Error): void;
  /** Set once the process starts this request. */
  timer: NodeJS.Timeout | null;
}

interface Slot {
  worker: ChildProcess | null;
  pending: Map<number, PendingDetection>;
  /** Runs until the process says its models are loaded. */
  loading: NodeJS.Timeout | null;
}

const WORKER_SCRIPT = fileURLToPath(new URL('./detection-worker.mjs', import.meta.url));

/** Whether a detection process keeps this process alive: only while it owes an answer. */
function hold(worker: ChildProcess, owed: boolean): void {
  if (owed) {
    worker.ref();
    worker.channel?.ref();
  } else {
    worker.unref();
    worker.channel?.unref();
  }
}

/** `count` processes; a request that a process has not answered `deadline` ms after starting it has that process killed. */
export function createDetectionProcesses(count: number, deadline: number): DetectionProcesses {
  const slots: Slot[] = Array.from({ length: count }, () => ({ worker: null, pending: new Map(), loading: null }));
  let nextId = 1;
  let closed = false;

  function discard(slot: Slot, stopped: ChildProcess, error: Error): void {
    if (slot.worker !== stopped) return;
    slot.worker = null;
    stopped.kill('SIGKILL');
    clearTimeout(slot.loading ?? undefined);
    slot.loading = null;
    for (const detection of slot.pending.values()) {
      clearTimeout(detection.timer ?? undefined);
      detection.reject(error);
    }
    slot.pending.clear();
  }

  function startWorker(slot: Slot): ChildProcess {
    // Plain node on the .mjs file (no loader flags of this process's), pixels sent as typed arrays.
    const started = fork(WORKER_SCRIPT, [], { execArgv: [], serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    started.on('message', (message: WorkerMessage) => {
      if ('fatal' in message) {
        discard(slot, started, new Error(message.fatal));
        return;
      }
      if ('ready' in message) {
        clearTimeout(slot.loading ?? undefined);
        slot.loading = null;
        return;
      }
      if ('running' in message) {
        const running = slot.pending.get(message.running);
        if (running) running.timer = stopAtDeadline(slot, started);
        return;
      }
      const detection = slot.pending.get(message.id);
      if (!detection) return;
      slot.pending.delete(message.id);
      clearTimeout(detection.timer ?? undefined);
      // An idle detection process must not keep this one alive.
      if (slot.pending.size === 0) hold(started, false);
      if (message.ok) detection.resolve(message);
      else detection.reject(new Error(`detection failed: ${message.error}`));
    });
    started.on('error', (error) => discard(slot, started, new Error(`the detection process failed: ${error.message}`)));
    started.on('exit', (code, signal) => discard(slot, started, new Error(`the detection process stopped (${signal ?? `exit code ${code}`})`)));
    // Not referenced, as the deadlines below: a timer never keeps the process alive on its own.
    slot.loading = setTimeout(
      () => discard(slot, started, new Error(`the detection models took longer than ${LOAD_DEADLINE_MS} ms to load`)),
      LOAD_DEADLINE_MS,
    ).unref();
    slot.worker = started;
    return started;
  }

  function stopAtDeadline(slot: Slot, target: ChildProcess): NodeJS.Timeout {
    return setTimeout(() => discard(slot, target, new Error(`detection took longer than ${deadline} ms; its process was stopped`)), deadline).unref();
  }

  function run<T>(request: Record<string, unknown>): Promise<T> {
    if (closed) return Promise.reject(new Error('the detector is closed'));
    const slot = slots.reduce((least, candidate) => (candidate.pending.size < least.pending.size ? candidate : least));
    const target = slot.worker ?? startWorker(slot);
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      slot.pending.set(id, { resolve: resolve as (answer: unknown) => void, reject, timer: null });
      hold(target, true);
      target.send({ id, ...request });
    });
  }

  return {
    run,
    get closed() {
      return closed;
    },
    async close() {
      closed = true;
      await Promise.all(
        slots.map(async (slot) => {
          const current = slot.worker;
          if (!current) return;
          const exited = current.exitCode !== null || current.signalCode !== null ? null : new Promise((resolve) => current.once('exit', resolve));
          // Waited for, so held until it is gone.
          hold(current, true);
          discard(slot, current, new Error('the detector was closed'));
          await exited;
        }),
      );
    },
  };
}
