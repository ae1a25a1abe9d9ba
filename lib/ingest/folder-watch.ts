import { watch, type FSWatcher } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { FOLDER_ENTRIES_CHANGED, recordFolderChanges, REGISTRY_CHANGED, startFolderJournal, stopFolderJournal } from '../repo/folder-journal.js';
import { newId } from '../repo/json.js';
import type { DataPaths } from '../paths.js';
import type { Database, Logger } from '../ports.js';

/** How often the folder's own times are looked at (the events themselves are journalled at once). */
const POLL_MS = 500;

export interface FolderWatch {
  close(): Promise<void>;
}

/**
 * The Node service's journal of the submissions folder (lib/repo/folder-journal.ts), so that a
 * reload in which nothing changed does not list a million files. `fs.watch` names the image files
 * changed in place; since Linux drops the events of an overflowing inotify queue without a word,
 * the images folder's and the registry's own times are also read twice a second, and any change of
 * them is journalled as "the folder's entries changed" (a full pass). A watcher that fails stops
 * the journal: reloads are full passes again.
 */
export async function watchSubmissionsFolder(db: Database, paths: DataPaths, log: Logger): Promise<FolderWatch> {
  const epoch = newId('fw');
  await startFolderJournal(db, epoch);
  const pending = new Set<string>();
  const watchers: FSWatcher[] = [];
  let stopped = false;
  let seen = await folderTimes(paths);

  let flushQueued = false;
  const failed = (error: unknown) => void stop(error instanceof Error ? error.message : String(error));
  // Changes seen in one turn of the event loop are written together, as soon as the turn ends.
  const note = (name: string) => {
    pending.add(name);
    if (flushQueued) return;
    flushQueued = true;
    setImmediate(() => {
      const names = [...pending];
      pending.clear();
      flushQueued = false;
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

  const images = watch(paths.imagesDir, (event, name) => {
    // A file written in place is 'change'; 'rename' is an entry added, removed or renamed.
    note(event === 'change' && name ? name.toString() : FOLDER_ENTRIES_CHANGED);
  });
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

/** The images folder's and the registry's modification and change times, to the nanosecond. */
async function folderTimes(paths: DataPaths): Promise<{ images: string; registry: string }> {
  const times = async (path: string) => {
    const info = await stat(path, { bigint: true }).catch(() => null);
    return info ? `${info.mtimeNs}:${info.ctimeNs}:${info.size}:${info.ino}` : 'none';
  };
  return { images: await times(paths.imagesDir), registry: await times(paths.registryFile) };
}
