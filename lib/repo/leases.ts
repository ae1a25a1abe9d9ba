import type { Clock, Database } from '../ports.js';

/**
 * Runs `fn` while holding the named lease, so that it runs once at a time across every process and
 * Worker isolate sharing the database. A holder that died frees the lease when it expires. Waiting
 * backs off (50 ms doubling to 1 s) so a long wait costs few queries (D1 counts each).
 */
export async function withLease<T>(db: Database, clock: Clock, name: string, fn: () => Promise<T>, leaseMs = 5 * 60_000): Promise<T> {
  const holder = crypto.randomUUID();
  for (let wait = 50; ; wait = Math.min(1000, wait * 2)) {
    const now = clock.now();
    const taken = await db
      .prepare(
        `INSERT INTO leases (name, holder, expires_at) VALUES (?, ?, ?)
         ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at WHERE leases.expires_at <= ?
         RETURNING holder`,
      )
      .bind(name, holder, new Date(now.getTime() + leaseMs).toISOString(), now.toISOString())
      .first<{ holder: string }>();
    if (taken?.holder === holder) break;
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
  try {
    return await fn();
  } finally {
    await db.prepare('DELETE FROM leases WHERE name = ? AND holder = ?').bind(name, holder).run();
  }
}

/**
 * The Node service owns its database file alone, so at start-up every lease was left by a process
 * that died (as every `running` job was): they go, instead of holding a reload back until expiry.
 */
export async function clearLeases(db: Database): Promise<void> {
  await db.prepare('DELETE FROM leases').run();
}
