import { watch, type FSWatcher } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { FOLDER_ENTRIES_CHANGED, recordFolderChanges, REGISTRY_CHANGED, startFolderJournal, stopFolderJournal } from '../repo/folder-journal.js';
import { newId } from '../repo/json.js';
import type { DataPaths } from '../paths.js';
import type { Database, Logger } from '../ports.js';

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
 * watcher that fails stops the journal: reloads are full passes again.
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
  for (const w of [images, submissions]) {
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
