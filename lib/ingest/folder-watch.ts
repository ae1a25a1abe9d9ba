import { mkdirSync, watch, type FSWatcher } from 'node:fs';
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import {
  FENCE_PREFIX,
  fenceJournalled,
  FOLDER_ENTRIES_CHANGED,
  lastFolderChange,
  lastJournalled,
  recordFolderChanges,
  REGISTRY_CHANGED,
  startFolderJournal,
  stopFolderJournal,
} from '../repo/folder-journal.js';
import { newId } from '../repo/json.js';
import type { DataPaths } from '../paths.js';
import type { Database, Logger, WatchedFolder } from '../ports.js';

/** How often the folder's own times are looked at (the events themselves are journalled at once). */
const POLL_MS = 500;
/** inotify's default queue length, for a system that does not say its own. */
const DEFAULT_QUEUED_EVENTS = 16_384;

export interface FolderWatch {
  close(): Promise<void>;
}

/**
 * The Node service's journal of the submissions folder (lib/repo/folder-journal.ts), so that a
 * reload reads only what changed instead of listing a million files. `fs.watch` names each image
 * file added, removed, renamed or changed in place. Linux drops the events of an overflowing inotify
 * queue without a word (libuv passes no overflow on), but a queue overflows only once it holds
 * `max_queued_events` unread events, and every one of those is still delivered, in one read: so a
 * turn of the event loop that brings half that many or more is journalled as "the folder's entries
 * changed" (a full pass). The images folder's own identity and the registry's times are also read
 * twice a second, for a folder replaced under the watcher and a registry written by a rename. A
 * watcher that fails stops the journal: reloads are full passes again. It also journals the fences
 * reloads write (`watchedFolder`), to tell them it has caught up.
 */
export async function watchSubmissionsFolder(db: Database, paths: DataPaths, log: Logger): Promise<FolderWatch> {
  const epoch = newId('fw');
  await startFolderJournal(db, epoch);
  const pending = new Set<string>();
  const watchers: FSWatcher[] = [];
  let stopped = false;
  let seen = await folderTimes(paths);

  const burst = (await queuedEventLimit()) / 2;
  let flushQueued = false;
  let events = 0;
  const failed = (error: unknown) => void stop(error instanceof Error ? error.message : String(error));
  // Changes seen in one turn of the event loop are written together, as soon as the turn ends.
  const note = (name: string) => {
    pending.add(name);
    events++;
    if (flushQueued) return;
    flushQueued = true;
    setImmediate(() => {
      if (events >= burst) pending.add(FOLDER_ENTRIES_CHANGED);
      const names = [...pending];
      pending.clear();
      flushQueued = false;
      events = 0;
      recordFolderChanges(db, names).catch(failed);
    });
  };
  const stop = async (reason: string | null) => {
    if (stopped) return;
    stopped = true;
    clearInterval(pollTimer);
    for (const w of watchers) w.close();
    if (reason) log.warn('folder watch stopped: reloads list the folder again', { reason });
    await stopFolderJournal(db, epoch).catch(() => {});
  };

  // A file written in place is 'change'; 'rename' is an entry added, removed or renamed: either names it.
  const images = watch(paths.imagesDir, (_event, name) => note(name ? name.toString() : FOLDER_ENTRIES_CHANGED));
  const submissions = watch(paths.submissionsDir, (_event, name) => {
    const file = name?.toString();
    if (file === basename(paths.registryFile)) note(REGISTRY_CHANGED);
    else if (file === basename(paths.imagesDir) || file === undefined) note(FOLDER_ENTRIES_CHANGED);
  });
  mkdirSync(paths.fencesDir, { recursive: true });
  const fences = watch(paths.fencesDir, (_event, name) => {
    if (name) note(FENCE_PREFIX + name.toString());
  });
  for (const w of [images, submissions, fences]) {
    w.on('error', failed);
    watchers.push(w);
  }

  const pollTimer = setInterval(() => {
    folderTimes(paths).then((now) => {
      if (now.images !== seen.images) note(FOLDER_ENTRIES_CHANGED);
      if (now.registry !== seen.registry) note(REGISTRY_CHANGED);
      seen = now;
    }, failed);
  }, POLL_MS);
  // Neither keeps the process alive.
  pollTimer.unref();
  for (const w of watchers) w.unref();

  return { close: () => stop(null) };
}

/**
 * The images folder's identity (its entries are named by the watcher, so its times are not needed)
 * and the registry's modification and change times, to the nanosecond.
 */
async function folderTimes(paths: DataPaths): Promise<{ images: string; registry: string }> {
  const info = (path: string) => stat(path, { bigint: true }).catch(() => null);
  const [images, registry] = [await info(paths.imagesDir), await info(paths.registryFile)];
  return {
    images: images ? `${images.dev}:${images.ino}` : 'none',
    registry: registry ? `${registry.mtimeNs}:${registry.ctimeNs}:${registry.size}:${registry.ino}` : 'none',
  };
}

/** The kernel's inotify queue length (Linux; 16,384 unless raised), past which events are dropped. */
async function queuedEventLimit(): Promise<number> {
  const text = await readFile('/proc/sys/fs/inotify/max_queued_events', 'utf8').catch(() => '');
  const limit = Number.parseInt(text, 10);
  return Number.isFinite(limit) && limit > 0 ? limit : DEFAULT_QUEUED_EVENTS;
}

/** How long a reload waits for the watcher to journal its fence: a turn of the watcher's event loop, unless none runs or it is stuck. */
const FENCE_DEADLINE_MS = 2_000;
/** How often the journal is read for the fence. */
const FENCE_POLL_MS = 5;
/** How long the folder must have been quiet for the files being copied in to be taken as whole. */
const QUIET_MS = 100;
/** How long a reload waits at most for the copies to go quiet; past it, a file still being written is left for the next reload. */
const SETTLE_MS = 2_000;

/**
 * The submissions folder as a reload asks after it, from any process over the same data folder: a
 * reload sent the instant after a burst of copies must not trust a journal the watcher has not
 * finished writing. The reload writes a fence, a file in `fencesDir`, which the watcher watches
 * through the same inotify instance as the images folder (libuv keeps one per event loop), whose
 * events come in the order they happened: once the fence is journalled, so is every change made
 * before it. While the journal holds changes, the reload then waits for them to stop for QUIET_MS
 * (a fence each time), so that files still being copied in are read whole, SETTLE_MS at most.
 */
export function watchedFolder(db: Database, paths: DataPaths): WatchedFolder {
  const fence = async (): Promise<boolean> => {
    const name = newId('fence');
    const file = join(paths.fencesDir, name);
    const after = await lastJournalled(db);
    try {
      await writeFile(file, '');
    } catch {
      // The fences folder is gone (removed under the service): no watcher journals it.
      return false;
    }
    try {
      for (const deadline = performance.now() + FENCE_DEADLINE_MS; ; await delay(FENCE_POLL_MS)) {
        if (await fenceJournalled(db, name, after)) return true;
        if (performance.now() >= deadline) return false;
      }
    } finally {
      await rm(file, { force: true });
    }
  };
  return {
    async caughtUp() {
      if (!(await fence())) return false;
      let last = await lastFolderChange(db);
      // Nothing journalled: no copy that began before this reload is still going.
      if (last === 0) return true;
      for (const deadline = performance.now() + SETTLE_MS; performance.now() < deadline; ) {
        await delay(QUIET_MS);
        if (!(await fence())) return false;
        const now = await lastFolderChange(db);
        if (now === last) return true;
        last = now;
      }
      return true;
    },
  };
}
