import type { Database } from '../ports.js';

/** Throws when the database does not answer (the health check's `degraded`). */
export async function pingDatabase(db: Database): Promise<void> {
  await db.prepare('SELECT 1 AS ok').first();
}
