import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { digestFile } from '../../lib/blobs/digest-pool.js';
import { workerPool } from '../../lib/threads/worker-pool.js';

/**
 * The worker threads that read files and JPEGs off the event loop: a worker that crashes or that
 * owes an answer past its deadline is replaced, and its callers are answered, not left waiting.
 */
const script = new URL('../helpers/pool-worker.mjs', import.meta.url);
type Act = { act: 'answer' | 'exit' | 'spin' | 'refuse' | 'fatal' };
// Ample: a worker's start alone can take over a second on a loaded machine.
const AMPLE = { deadlineMs: 10_000 };

describe('the worker pool', () => {
  it('answers each call from a worker, and replaces a worker that crashes', async () => {
    const pool = workerPool<Act, { threadId: number }>(script, 1);
    const first = await pool.call({ act: 'answer' }, AMPLE);
    expect(first).toMatchObject({ ok: true });
    const again = await pool.call({ act: 'answer' }, AMPLE);
    expect(again).toEqual(first);

    expect(await pool.call({ act: 'exit' }, AMPLE)).toEqual({ ok: false, reason: 'failed', why: 'the worker exited with code 3' });
    const next = await pool.call({ act: 'answer' }, AMPLE);
    expect(next.ok && first.ok && next.answer.threadId !== first.answer.threadId).toBe(true);
  });

  it('answers a call past its deadline as late, the others its worker owed as dropped, and replaces the worker', async () => {
    const pool = workerPool<Act, { threadId: number }>(script, 1);
    const first = await pool.call({ act: 'answer' }, AMPLE);
    const started = performance.now();
    const [stuck, behind] = await Promise.all([pool.call({ act: 'spin' }, { deadlineMs: 200 }), pool.call({ act: 'answer' }, { deadlineMs: 60_000 })]);
    expect(stuck).toEqual({ ok: false, reason: 'late', why: 'no answer within 200 ms' });
    expect(behind).toMatchObject({ ok: false, reason: 'dropped' });
    expect(performance.now() - started).toBeLessThan(10_000);
    const next = await pool.call({ act: 'answer' }, AMPLE);
    expect(next.ok && first.ok && next.answer.threadId !== first.answer.threadId).toBe(true);
  });

  it('counts a deadline from when the worker runs, not from a start that waits for a busy calling thread', async () => {
    const pool = workerPool<Act, { threadId: number }>(script, 1);
    const asked = pool.call({ act: 'answer' }, { deadlineMs: 300 });
    // The thread that started the worker is busy past the deadline (a loaded machine) before it hears the worker is up.
    const busyUntil = performance.now() + 1000;
    while (performance.now() < busyUntil);
    expect(await asked).toMatchObject({ ok: true });
  });

  it('answers a call the worker refuses with its error, and only that call: the worker goes on', async () => {
    const pool = workerPool<Act, { threadId: number }>(script, 1);
    const [before, refused, after] = await Promise.all([
      pool.call({ act: 'answer' }, AMPLE),
      pool.call({ act: 'refuse' }, AMPLE),
      pool.call({ act: 'answer' }, AMPLE),
    ]);
    expect(refused).toEqual({ ok: false, reason: 'error', why: expect.stringMatching(/^call \d+ refused$/) });
    expect(before.ok && after.ok && before.answer.threadId === after.answer.threadId).toBe(true);
  });

  it('a worker that cannot work fails every call it owed with its reason, and is replaced', async () => {
    const pool = workerPool<Act, { threadId: number }>(script, 1);
    const first = await pool.call({ act: 'answer' }, AMPLE);
    // The calls behind the fatal message were sent to the same worker: none is left waiting.
    const owed = await Promise.all([pool.call({ act: 'fatal' }, AMPLE), pool.call({ act: 'spin' }, { deadlineMs: 60_000 })]);
    expect(owed).toEqual([
      { ok: false, reason: 'failed', why: 'the library did not start' },
      { ok: false, reason: 'failed', why: 'the library did not start' },
    ]);
    const next = await pool.call({ act: 'answer' }, AMPLE);
    expect(next.ok && first.ok && next.answer.threadId !== first.answer.threadId).toBe(true);
  });
});

describe('file digests', () => {
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  /** Five small pictures in a fresh folder. */
  const photos = () => {
    dir = mkdtempSync(join(tmpdir(), 'digest-'));
    return Array.from({ length: 5 }, (_, i) => {
      const file = join(dir, `photo-${i}.jpg`);
      writeFileSync(file, `bytes of photo ${i}`);
      return file;
    });
  };
  const sha256Of = (files: string[]) => files.map((_, i) => createHash('sha256').update(`bytes of photo ${i}`).digest('hex'));

  it('a pipe named like a picture answers null at once and a link answers "link" (not followed); the files beside them are read', async () => {
    const files = photos();
    // Opening a pipe for reading would wait for a writer that never comes: with the default
    // deadline of a minute, a wait would outlast the test.
    const pipe = join(dir, 'pipe.jpg');
    execFileSync('mkfifo', [pipe]);
    const link = join(dir, 'link.jpg');
    symlinkSync(files[0], link);
    const digests = await Promise.all([...files, pipe, link].map((file) => digestFile(file, 4)));
    expect(digests.slice(-2)).toEqual([null, 'link']);
    expect(digests.slice(0, -2).map((d) => typeof d === 'object' && d?.sha256)).toEqual(sha256Of(files));
    expect(await digestFile(files[0], 4)).toMatchObject({ size: 'bytes of photo 0'.length, head: new TextEncoder().encode('byte') });
  });

  it('a file read past its deadline answers null alone; the files of its batch are asked again and read', async () => {
    const files = photos();
    // As a read from a hung share: 512 MB (a hole, nothing on disk) take seconds to read and hash
    // here, far past 300 ms; its batch is late, each of the batch is asked alone, and it is late again.
    const slow = join(dir, 'slow.jpg');
    writeFileSync(slow, '');
    truncateSync(slow, 512 * 1024 * 1024);
    const digests = await Promise.all([...files, slow].map((file) => digestFile(file, 4, 300)));
    expect(digests.at(-1)).toBeNull();
    expect(digests.slice(0, -1).map((d) => typeof d === 'object' && d?.sha256)).toEqual(sha256Of(files));
  });
});
