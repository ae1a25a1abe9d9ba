/**
 * The D1-shaped database interface every repository function takes. It is the subset of
 * Cloudflare D1's API the service uses, so the same repository code runs on better-sqlite3 locally
 * and on D1 (the repository tests run on both).
 */

export type SqlValue = string | number | null;

export interface RunResult {
  success: boolean;
  meta: { changes: number; last_row_id: number };
}

export interface AllResult<T> {
  results: T[];
  success: boolean;
}

export interface Statement {
  bind(...values: SqlValue[]): Statement;
  first<T = Record<string, unknown>>(): Promise<T | null>;
  all<T = Record<string, unknown>>(): Promise<AllResult<T>>;
  run(): Promise<RunResult>;
}

export interface Database {
  prepare(sql: string): Statement;
  /** The only atomic unit: every statement commits, or none does. */
  batch(statements: Statement[]): Promise<unknown[]>;
}
