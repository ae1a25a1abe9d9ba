import { setImmediate as nextTurn } from 'node:timers/promises';

// Items sorted, or merged, between turns of the event loop: a slice of 10,000 names sorts in a few
// milliseconds, where 100,000 took 100-300 ms in one go and a million over a second.
const SLICE = 10_000;

/**
 * `items` sorted by `compare` (stably), without holding the event loop for more than a slice: the
 * slices are sorted one a turn, then merged pairwise with a turn every SLICE items merged.
 */
export async function sortInTurns<T>(items: readonly T[], compare: (a: T, b: T) => number): Promise<T[]> {
  let runs: T[][] = [];
  for (let from = 0; from < items.length; from += SLICE) {
    if (from > 0) await nextTurn();
    runs.push(items.slice(from, from + SLICE).sort(compare));
  }
  let sinceTurn = 0;
  while (runs.length > 1) {
    const merged: T[][] = [];
    for (let i = 0; i < runs.length; i += 2) {
      const [a, b = []] = [runs[i], runs[i + 1]];
      const out: T[] = [];
      let x = 0;
      let y = 0;
      while (x < a.length || y < b.length) {
        // The left run's item first on a tie: the sort stays stable.
        out.push(y >= b.length || (x < a.length && compare(a[x], b[y]) <= 0) ? a[x++] : b[y++]);
        if (++sinceTurn === SLICE) {
          sinceTurn = 0;
          await nextTurn();
        }
      }
      merged.push(out);
    }
    runs = merged;
  }
  return runs[0] ?? [];
}
