/** The rows a reading statement of a batch answered (D1 and the SQLite adapter both answer `{ results }`). */
export function rowsOf<T>(result: unknown): T[] {
  return (result as { results?: T[] }).results ?? [];
}
