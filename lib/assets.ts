/**
 * The console's static files (static/), by plain file name. The Node service reads them from the
 * folder (lib/assets-folder.ts); the Worker carries them inside its bundle (`mapAssets`).
 */
export interface ConsoleAssets {
  get(name: string): Promise<Uint8Array | null>;
}

/** Files held in memory, as the Worker bundle carries them. */
export function mapAssets(files: Record<string, string>): ConsoleAssets {
  const encoded = new Map(Object.entries(files).map(([name, text]) => [name, new TextEncoder().encode(text)]));
  return { get: async (name) => encoded.get(name) ?? null };
}
