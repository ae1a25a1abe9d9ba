/**
 * Reads `read` until `done` holds for what it gives, and returns that; past `timeoutMs` throws,
 * naming `what` and the last value read. For what runs beside a test (job loops, another process, a
 * Worker, a file another store writes): a bound instead of a fixed sleep, which a loaded machine
 * may not honour.
 */
export async function until<T>(
  what: string,
  read: () => T | Promise<T>,
  done: (value: T) => boolean,
  { timeoutMs = 60_000, everyMs = 100 }: { timeoutMs?: number; everyMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}: ${JSON.stringify(value) ?? String(value)}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
