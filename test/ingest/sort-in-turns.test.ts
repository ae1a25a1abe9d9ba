import { describe, expect, it } from 'vitest';
import { sortInTurns } from '../../lib/ingest/sort-in-turns.js';

/** The reload numbers colliding quick ids in name order, sorting a folder's new names in slices so no request waits for the whole sort. */
describe('sorting in turns of the event loop', () => {
  const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  // 35,000 names in a shuffled order, many of them equal (tagged, to see that equal names keep their order).
  const items = Array.from({ length: 35_000 }, (_, i) => ({ name: `n${(i * 7919) % 9973}`, tag: i }));

  it('gives the order Array.prototype.sort gives, equal names in their first order', async () => {
    expect(await sortInTurns(items, byName)).toEqual([...items].sort(byName));
    expect(await sortInTurns([], byName)).toEqual([]);
    expect(await sortInTurns(items.slice(0, 1), byName)).toEqual(items.slice(0, 1));
  });

  it('lets other work run while it sorts', async () => {
    let turns = 0;
    const ticking = setInterval(() => turns++, 0);
    const sorting = sortInTurns(items, byName);
    const before = turns;
    await sorting;
    clearInterval(ticking);
    expect(turns - before).toBeGreaterThan(2);
  });
});
