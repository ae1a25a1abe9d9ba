/**
 * The columns a record shows just as they are stored, taken from a row by name, so that a row's
 * mapping spells out only the columns that need converting (JSON, flags, media paths).
 */
export function storedAs<Row, Key extends keyof Row>(row: Row, keys: readonly Key[]): Pick<Row, Key> {
  const picked = {} as Pick<Row, Key>;
  for (const key of keys) picked[key] = row[key];
  return picked;
}

/** The rows a reading statement of a batch answered (D1 and the SQLite adapter both answer `{ results }`). */
export function rowsOf<T>(result: unknown): T[] {
  return (result as { results?: T[] }).results ?? [];
}
