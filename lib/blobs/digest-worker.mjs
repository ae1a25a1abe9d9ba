// Reads and hashes files off the main thread for digest-pool.ts. Plain .mjs (node built-ins only),
// so that it needs no TypeScript loader in a worker.
// Protocol, one message per batch:
//   in:  { id, files: string[], headBytes }
//   out: { id, digests: ({ size, sha256, head: Uint8Array } | null)[] }  (null: the file cannot be read)
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';

parentPort.on('message', ({ id, files, headBytes }) => {
  const digests = [];
  const moved = [];
  for (const file of files) {
    let bytes;
    try {
      bytes = readFileSync(file);
    } catch {
      digests.push(null);
      continue;
    }
    const head = new Uint8Array(bytes.subarray(0, headBytes));
    moved.push(head.buffer);
    digests.push({ size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex'), head });
  }
  parentPort.postMessage({ id, digests }, moved);
});
