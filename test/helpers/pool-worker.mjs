// A worker script for the pool's tests (test/threads/worker-pool.test.ts), speaking the pool's
// protocol: `{ id, act }` in, `{ id, threadId }` out. `exit` ends the worker as a crash would;
// `spin` never answers, as a read stuck for good; `refuse` answers that one call with an error;
// `fatal` says the worker cannot work at all, as a library that did not start.
import { parentPort, threadId } from 'node:worker_threads';

parentPort.on('message', ({ id, act }) => {
  if (act === 'exit') process.exit(3);
  if (act === 'refuse') return parentPort.postMessage({ id, error: `call ${id} refused` });
  if (act === 'fatal') return parentPort.postMessage({ fatal: 'the library did not start' });
  // Busy for good: only the pool's terminate ends it.
  while (act === 'spin') Math.random();
  parentPort.postMessage({ id, threadId });
});
