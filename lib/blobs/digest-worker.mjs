// Reads and hashes files off the main thread for digest-pool.ts. Plain .mjs (node built-ins only),
// so that it needs no TypeScript loader in a worker.
// Protocol, one message per batch:
//   in:  { id, files: string[], headBytes }
//   out: { id, digests: ({ size, sha256, head: Uint8Array } | 'link' | null)[] }
//        (null: no regular file to read there; 'link': the name is a symbolic link, not followed)
import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';

// A link is not followed here: whether its target stays in its folder is the main thread's check
// (folder.ts). Not blocking, so that a pipe named like a picture is opened and refused, not waited on.
const FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** The bytes of the regular file at `file`, 'link' for a symbolic link, null for anything else. */
function readRegularFile(file) {
  let fd;
  try {
    fd = openSync(file, FLAGS);
  } catch (error) {
    return error.code === 'ELOOP' ? 'link' : null;
  }
  try {
    return fstatSync(fd).isFile() ? readFileSync(fd) : null;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

parentPort.on('message', ({ id, files, headBytes }) => {
  const digests = [];
  const moved = [];
  for (const file of files) {
    const bytes = readRegularFile(file);
    if (bytes === null || bytes === 'link') {
      digests.push(bytes);
      continue;
    }
    const head = new Uint8Array(bytes.subarray(0, headBytes));
    moved.push(head.buffer);
    digests.push({ size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex'), head });
  }
  parentPort.postMessage({ id, digests }, moved);
});
