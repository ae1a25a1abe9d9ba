import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { GeometryFeatures } from './geometry.js';
import { decodeFeatures, encodeFeatures, FEATURES_VERSION } from './keypoint-file.js';

/**
 * Keypoints kept per picture where every process of a deployment finds them (decision 0047): the
 * geometric check's most expensive input, computed once per picture instead of once per process
 * and again after each restart. The local images port reads it behind its own recent ones
 * (local-service.ts); the entry that builds the port chooses it.
 */
export interface KeypointStore {
  /**
   * The picture's features: the kept ones when whole, of this code's version, and with the
   * mirror's keypoints if `mirror`; otherwise those `compute` gives, kept for the next time. A
   * failure to keep them (a full disk) is not the check's failure.
   */
  kept(key: string, mirror: boolean, compute: () => Promise<GeometryFeatures>): Promise<GeometryFeatures>;
}

/**
 * Rescans the folder after this many writes of its own, to count what other processes wrote: each
 * process bounds the folder by what it last saw plus its own writes.
 */
const RESCAN_WRITES = 256;
/** Down to this share of the bound when over it, so that the next few writes do not each rescan. */
const PRUNE_TO = 0.9;
/** A temporary or claim file this old was left by a process that stopped while writing it. */
const STALE_TEMPORARY_MS = 10 * 60_000;
/**
 * How long a process waits for the keypoints another process is computing (its claim file) before
 * computing them itself: they take 0.1-0.3 s on a quiet machine, a few seconds on a loaded one; a
 * claim older than this was left by a process that stopped.
 */
const CLAIM_WAIT_MS = 30_000;
/** How often a waiting process looks whether the claim is gone. */
const CLAIM_POLL_MS = 20;

/**
 * The store in a folder (the Node service: `keypoints/` in the data folder), content-addressed:
 * `<first two hex digits>/<SHA-256 of the picture>.kp`. A file is written under a temporary name
 * and renamed, so a reader sees the old file or the new one, never half of one; a file that is cut
 * short, altered or of another version reads as nothing (keypoint-file.ts) and is written again.
 * A process computing a picture's keypoints holds `<SHA-256>.kp.claim` until their file is
 * written, and another process that wants them meanwhile waits for that file instead of computing
 * them too (two comparison processes of one intake want the same pictures at about the same time).
 * A process computes `computing` pictures at once (one a core, as its geometry workers) and claims
 * a picture when its turn comes, so a claim always stands for a computation under way.
 * At most `maxBytes` in all: past it the files least recently read or written go first (a read
 * touches its file). The folder's own errors (unreadable, full) leave the check to compute.
 */
export function folderKeypointStore(dir: string, maxBytes: number, { computing = availableParallelism() } = {}): KeypointStore {
  const at = (key: string) => join(dir, key.slice(0, 2), `${key}.kp`);
  const turn = turns(computing);
  let counted: number | null = null;
  let writes = 0;
  let pruning: Promise<void> | null = null;

  const prune = async () => {
    const files = await keptFiles(dir);
    counted = files.reduce((sum, file) => sum + file.size, 0);
    writes = 0;
    if (counted <= maxBytes) return;
    files.sort((a, b) => a.touched - b.touched);
    for (const file of files) {
      if (counted <= PRUNE_TO * maxBytes) break;
      await rm(file.path, { force: true });
      counted -= file.size;
    }
  };

  const read = async (key: string, mirror: boolean, version: Buffer) => {
    const file = at(key);
    const bytes = await readFile(file).catch(() => null);
    const features = bytes && decodeFeatures(bytes, { mirror }, version);
    if (features) {
      const now = new Date();
      void utimes(file, now, now).catch(() => undefined);
    }
    return features;
  };

  const write = async (key: string, features: GeometryFeatures, mirror: boolean, version: Buffer) => {
    const file = at(key);
    const temporary = `${file}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
    let size: number;
    try {
      const bytes = encodeFeatures(features, mirror, version);
      await writeFile(temporary, bytes);
      await rename(temporary, file);
      size = bytes.length;
    } catch {
      await rm(temporary, { force: true }).catch(() => undefined);
      return;
    }
    if (counted !== null) counted += size;
    writes++;
    if (!pruning && (counted === null || counted > maxBytes || writes >= RESCAN_WRITES)) {
      pruning = prune()
        .catch(() => undefined)
        .finally(() => {
          pruning = null;
        });
    }
    await pruning;
  };

  /** Whether this process now holds the picture's claim; null when the folder cannot take one (then nothing is kept either). */
  const claim = async (key: string): Promise<boolean | null> => {
    try {
      await mkdir(join(dir, key.slice(0, 2)), { recursive: true });
      await (await open(`${at(key)}.claim`, 'wx')).close();
      return true;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'EEXIST' ? false : null;
    }
  };

  /** Waits while another process's claim stands (up to CLAIM_WAIT_MS of its age), then reads what it kept. */
  const waitForOther = async (key: string, mirror: boolean, version: Buffer) => {
    for (;;) {
      const held = await stat(`${at(key)}.claim`).catch(() => null);
      if (!held) return read(key, mirror, version);
      if (Date.now() - held.mtimeMs > CLAIM_WAIT_MS) return null;
      await new Promise((resolve) => setTimeout(resolve, CLAIM_POLL_MS));
    }
  };

  /** Computes the picture's keypoints and, unless the folder cannot take them (`mine` null), keeps them; a claim this process holds goes once they are written. */
  const computeAndKeep = async (key: string, mirror: boolean, version: Buffer, mine: boolean | null, compute: () => Promise<GeometryFeatures>) => {
    const release = () => (mine ? rm(`${at(key)}.claim`, { force: true }).catch(() => undefined) : undefined);
    let features: GeometryFeatures;
    try {
      features = await compute();
    } catch (error) {
      await release();
      throw error;
    }
    // Not awaited: the check goes on while the file is written; the claim goes once it is there.
    if (mine !== null) void write(key, features, mirror, version).finally(release);
    return features;
  };

  return {
    async kept(key, mirror, compute) {
      const version = FEATURES_VERSION;
      if (!version) return compute();
      const found = await read(key, mirror, version);
      if (found) return found;
      // Claimed only when this process's turn to compute comes (decision 0053): a claim stands for a
      // computation under way, never for one queued behind this process's others, which another
      // process would wait on while it could compute the picture itself.
      const mine = await turn(async () => {
        const keptMeanwhile = await read(key, mirror, version);
        if (keptMeanwhile) return { features: keptMeanwhile };
        const claimed = await claim(key);
        return claimed === false ? null : { features: await computeAndKeep(key, mirror, version, claimed, compute) };
      });
      if (mine) return mine.features;
      // Another process's claim: waited for outside this process's turns, which go to its other pictures meanwhile.
      const theirs = await waitForOther(key, mirror, version);
      return theirs ?? turn(() => computeAndKeep(key, mirror, version, false, compute));
    },
  };
}

/** Runs at most `size` of the works given at once, the others in the order they came. */
function turns(size: number): <T>(work: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (work) => {
    if (running < size) running++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await work();
    } finally {
      // The turn passes to the next waiting work, or is given back.
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}

/** Every kept file with its size and when it was last read or written; temporary and claim files left by a stopped process are removed. */
async function keptFiles(dir: string): Promise<{ path: string; size: number; touched: number }[]> {
  const files: { path: string; size: number; touched: number }[] = [];
  const shards = await readdir(dir).catch(() => [] as string[]);
  for (const shard of shards) {
    const names = await readdir(join(dir, shard)).catch(() => [] as string[]);
    for (const name of names) {
      const path = join(dir, shard, name);
      const found = await stat(path).catch(() => null);
      if (!found?.isFile()) continue;
      if (name.endsWith('.tmp') || name.endsWith('.claim')) {
        if (Date.now() - found.mtimeMs > STALE_TEMPORARY_MS) await rm(path, { force: true });
        continue;
      }
      files.push({ path, size: found.size, touched: found.mtimeMs });
    }
  }
  return files;
}
