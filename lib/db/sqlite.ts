import BetterSqlite3 from 'better-sqlite3';
import type { AllResult, Database, RunResult, SqlValue, Statement } from '../ports.js';

/** A better-sqlite3 file behind the D1-shaped interface: WAL, foreign keys on, `batch` a real transaction. */
export interface SqliteDatabase extends Database {
  close(): void;
  readonly open: boolean;
}

/**
 * Compiled statements by SQL text. Compiling costs more than running most of these queries, and
 * the same few texts come back on every request; the bound keeps texts built with a varying
 * number of placeholders from growing it without end.
 */
class StatementCache {
  private readonly compiled = new Map<string, BetterSqlite3.Statement>();

  constructor(
    private readonly raw: BetterSqlite3.Database,
    private readonly limit = 500,
  ) {}

  get(sql: string): BetterSqlite3.Statement {
    let stmt = this.compiled.get(sql);
    if (stmt) return stmt;
    stmt = this.raw.prepare(sql);
    if (this.compiled.size >= this.limit) this.compiled.delete(this.compiled.keys().next().value!);
    this.compiled.set(sql, stmt);
    return stmt;
  }
}

class SqliteStatement implements Statement {
  constructor(
    private readonly cache: StatementCache,
    readonly sql: string,
    readonly values: SqlValue[] = [],
  ) {}

  bind(...values: SqlValue[]): Statement {
    return new SqliteStatement(this.cache, this.sql, values);
  }

  private stmt() {
    return this.cache.get(this.sql);
  }

  runSync(): RunResult | AllResult<unknown> {
    const stmt = this.stmt();
    if (stmt.reader) return { results: stmt.all(...this.values), success: true };
    const info = stmt.run(...this.values);
    return { success: true, meta: { changes: info.changes, last_row_id: Number(info.lastInsertRowid) } };
  }

  async first<T>(): Promise<T | null> {
    return (this.stmt().get(...this.values) as T | undefined) ?? null;
  }

  async all<T>(): Promise<AllResult<T>> {
    return { results: this.stmt().all(...this.values) as T[], success: true };
  }

  async run(): Promise<RunResult> {
    const stmt = this.stmt();
    // A write with RETURNING is a reader to better-sqlite3; run it all the same and count its rows.
    if (stmt.reader) {
      const rows = stmt.all(...this.values);
      return { success: true, meta: { changes: rows.length, last_row_id: 0 } };
    }
    const info = stmt.run(...this.values);
    return { success: true, meta: { changes: info.changes, last_row_id: Number(info.lastInsertRowid) } };
  }
}

/** The service's own database, or (`readonly`) a copy to read without changing a byte of it, such as a backup's. */
export function openSqlite(file: string, { readonly = false } = {}): SqliteDatabase {
  const raw = new BetterSqlite3(file, { readonly, fileMustExist: readonly });
  if (!readonly) {
    raw.pragma('journal_mode = WAL');
    raw.pragma('foreign_keys = ON');
    raw.pragma('busy_timeout = 5000');
    raw.pragma('synchronous = NORMAL');
  }
  const transaction = raw.transaction((statements: SqliteStatement[]) => statements.map((s) => s.runSync()));
  const cache = new StatementCache(raw);
  // data_version moves with every commit of another connection (another process's included),
  // total_changes with every row this connection wrote: together, with anything committed.
  const mark = raw.prepare("SELECT (SELECT data_version FROM pragma_data_version) || '.' || total_changes()").pluck();
  return {
    prepare: (sql) => new SqliteStatement(cache, sql),
    async batch(statements) {
      return transaction(statements as SqliteStatement[]);
    },
    writeMark: async () => mark.get() as string,
    close: () => raw.close(),
    get open() {
      return raw.open;
    },
  };
}
