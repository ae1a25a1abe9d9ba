/**
 * In-process serialisation by key: a run for a key waits for the previous run of the same key.
 * The service is one process, so this is enough to keep read-compute-write steps (a submission's
 * risk, its enrichment) from interleaving at their awaits.
 */
const chains = new Map<string, Promise<unknown>>();

export async function serialized<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const previous = chains.get(key) ?? Promise.resolve();
  const run = previous.catch(() => undefined).then(fn);
  chains.set(key, run);
  try {
    return await run;
  } finally {
    if (chains.get(key) === run) chains.delete(key);
  }
}
