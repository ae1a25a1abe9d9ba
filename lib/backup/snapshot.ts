import { Worker } from 'node:worker_threads';

/**
 * Copies the SQLite database at `source` into `target` as it is at one instant, while the service
 * goes on writing, on a worker thread (snapshot-worker.mjs) so the event loop is never held.
 */
export function snapshotDatabase(source: string, target: string): Promise<{ pages: number }> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./snapshot-worker.mjs', import.meta.url), { workerData: { source, target } });
    worker.once('message', (message: { pages: number } | { error: string }) => {
      if ('error' in message) reject(new Error(`database snapshot failed: ${message.error}`));
      else resolve(message);
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`database snapshot stopped (exit ${code})`)));
  });
}
