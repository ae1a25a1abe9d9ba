// A worker script for the pool's tests (test/threads/worker-pool.test.ts), speaking the pool's
// protocol: `{ id, act }` in, `{ id, threadId }` out. `exit` ends the worker as a crash would;
// `spin` never answers, as a read stuck for good.
import { parentPort, threadId } from 'node:worker_threads';

parentPort.on('message', ({ id, act }) => {
  if (act === 'exit') process.exit(3);
  // Busy for good: only the pool's terminate ends it.
  while (act === 'spin') Math.random();
  parentPort.postMessage({ id, threadId });
});
