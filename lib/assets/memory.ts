import type { ConsoleAssets } from '../ports.js';

/** Files held in memory, as the Worker bundle carries them. */
export function mapAssets(files: Record<string, string>): ConsoleAssets {
  const encoded = new Map(Object.entries(files).map(([name, text]) => [name, new TextEncoder().encode(text)]));
  return { get: async (name) => encoded.get(name) ?? null };
}
