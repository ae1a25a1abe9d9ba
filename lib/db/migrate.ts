import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Database } from '../ports.js';

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'migrations');

/** Splits a migration file into statements; the files keep one statement per `;` at a line end. */
export function splitStatements(sql: string): string[] {
  return sql
    .split(/;\s*$/m)
    .map((s) => s.replace(/^\s*--.*$/gm, '').trim())
    .filter((s) => s.length > 0);
}

export function migrationFiles(dir = MIGRATIONS_DIR): { name: string; sql: string }[] {
  return readdirSync(dir)
    .filter((f) => /^\d+_.+\.sql$/.test(f))
    .sort()
    .map((name) => ({ name, sql: readFileSync(join(dir, name), 'utf8') }));
}

/** Applies every numbered migration not yet applied, each file in one batch with its bookkeeping row. */
export async function migrate(db: Database, dir = MIGRATIONS_DIR): Promise<string[]> {
  await db.prepare('CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)').run();
  const done = new Set((await db.prepare('SELECT name FROM schema_migrations').all<{ name: string }>()).results.map((r) => r.name));
  const applied: string[] = [];
  for (const { name, sql } of migrationFiles(dir)) {
    if (done.has(name)) continue;
    const statements = splitStatements(sql).map((s) => db.prepare(s));
    statements.push(db.prepare('INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)').bind(name, new Date().toISOString()));
    await db.batch(statements);
    applied.push(name);
  }
  return applied;
}
