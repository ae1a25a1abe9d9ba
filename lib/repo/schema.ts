import type { Database } from '../ports.js';

// Where applied migrations are recorded: lib/db/migrate.ts's own table (the Node service, the
// tests, `npm run dev:worker`), and wrangler's (`wrangler d1 migrations apply`, docs/workers.md).
const BOOKKEEPING_TABLES = ['schema_migrations', 'd1_migrations'] as const;

/** How many of these migrations the database holds, by either bookkeeping table; 0 when neither exists. */
export async function appliedMigrationCount(db: Database, names: readonly string[]): Promise<number> {
  let most = 0;
  for (const table of BOOKKEEPING_TABLES) {
    const row = await db
      .prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE name IN (SELECT value FROM json_each(?))`)
      .bind(JSON.stringify(names))
      .first<{ n: number }>()
      .catch(() => null);
    most = Math.max(most, row?.n ?? 0);
  }
  return most;
}
