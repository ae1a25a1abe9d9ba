import { clearReloadProgress, writeReloadProgress, type ReloadProgress } from '../repo/reload-progress.js';
import type { Env } from '../ports.js';

/** How often the progress is written: a pass over a million files reports in a few hundred small writes. */
const WRITE_MS = 500;

export interface ProgressWriter {
  /** More files listed and compared. */
  listed(count: number): Promise<void>;
  /** Of the files to read, `read` are read and stored. */
  reading(read: number, toRead: number): Promise<void>;
  clear(): Promise<void>;
}

/** The running reload's progress for GET /api/submissions/reload/progress (lib/repo/reload-progress.ts). */
export function progressWriter(env: Env): ProgressWriter {
  const state: Omit<ReloadProgress, 'updated_at'> = { started_at: env.clock.now().toISOString(), phase: 'listing', listed: 0, to_read: 0, read: 0 };
  let writtenAt = Number.NEGATIVE_INFINITY;
  const write = async (now: boolean) => {
    if (!now && performance.now() - writtenAt < WRITE_MS) return;
    writtenAt = performance.now();
    await writeReloadProgress(env.db, { ...state, updated_at: env.clock.now().toISOString() });
  };
  return {
    listed(count) {
      state.listed += count;
      return write(false);
    },
    reading(read, toRead) {
      const starting = state.phase === 'listing';
      Object.assign(state, { phase: 'reading', read, to_read: toRead });
      return write(starting);
    },
    clear: () => clearReloadProgress(env.db),
  };
}
