/**
 * Small turns and flips found internally (issue 29 item 3), beside an earlier build in the same run.
 *
 * Each photograph is stored, and each copy (turned 2-10° on black, white or blurred corners; mirrored;
 * flipped upside down) is matched against the stored photographs as a comparison does
 * (lib/matching/analysis.ts judgePair): the similarity index's lookups bring the candidates, the
 * fingerprints judge the pair both ways, a match the region hashes alone made gets the geometric
 * check (refused when the two are disjoint), and a pair whose plain pHash lies within 0.1 below the
 * threshold is matched when the geometric check confirms it. False matches: every copy against
 * every other photograph of its group, by the same rules.
 *
 * Each build fingerprints with its own lib/images (`SMALL_TURNS_BASELINE=<revision>`, the build
 * before the turned-canvas lookup by default, exported from git into outputs/); both use this
 * build's geometric check. The turn detector's thresholds were chosen on the robust-recall set's
 * photographs, and the mirror-exact sample of small pictures (lib/images/luma.ts) on rendered pages
 * of text (test/helpers/text-page.ts, under 256 px high, as skimage's page and text are); the
 * opencv-doc and skimage groups are the held-out figure.
 * `SMALL_TURNS_PHOTOS=<n>` takes the first n photographs of each group while trying a change.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { localImageService } from '../lib/images/local-service.js';
import type { Fingerprints } from '../lib/images/robust.js';
import { sourceOf } from '../lib/images/source.js';
import { hashMatchStands } from '../lib/matching/analysis.js';
import { CORNERS, type Corners, turnedOn } from '../test/helpers/small-turns.js';
import { textPage } from '../test/helpers/text-page.js';
import { EVAL_SET_DIR, FRESH_PHOTOS, FRESH_SET_DIR, SKIMAGE_PHOTOS, SKIMAGE_SET_DIR, buildEvalSet } from './eval-set.js';
import type { BenchTable } from './run.js';
import sharp from 'sharp';

export const name = 'small-turns';

const ROOT = path.resolve(import.meta.dirname, '..');
const THRESHOLD = 0.9;
const NEAR_THRESHOLD = 0.1;
/** The build before the turned-canvas lookup and the frame rule's edge test. */
const PREVIOUS_BUILD = 'b5ef70b';
const DEGREES = [2, 4, 6, 8, 10];
const PHOTOS = process.env.SMALL_TURNS_PHOTOS ? Number(process.env.SMALL_TURNS_PHOTOS) : Number.POSITIVE_INFINITY;

interface Build {
  label: string;
  computeFingerprints(bytes: Buffer): Promise<Fingerprints>;
  robust: typeof import('../lib/images/robust.js');
}

/** A revision's lib/ exported from git beside the working tree; its imports stay within it. */
async function buildAt(revision: string): Promise<Build> {
  const dir = path.join(ROOT, 'outputs', 'small-turns-baseline', revision.replace(/[^\w.-]/g, '_'));
  if (!existsSync(path.join(dir, 'lib'))) {
    mkdirSync(dir, { recursive: true });
    execFileSync('sh', ['-c', `git archive ${revision} lib | tar -x -C ${dir}`], { cwd: ROOT });
  }
  const fingerprint = await import(pathToFileURL(path.join(dir, 'lib/images/fingerprint.ts')).href);
  const robust = await import(pathToFileURL(path.join(dir, 'lib/images/robust.ts')).href);
  return { label: `baseline ${revision}`, computeFingerprints: (bytes) => fingerprint.computeFingerprints(bytes), robust };
}

async function thisBuild(): Promise<Build> {
  const { computeFingerprints } = await import('../lib/images/fingerprint.js');
  return { label: 'this build', computeFingerprints: (bytes) => computeFingerprints(bytes), robust: await import('../lib/images/robust.js') };
}

interface Picture {
  photo: string;
  group: string;
  edit: string;
  bytes: Buffer;
}

const EDITS: { name: string; corners: Corners | null; make: (photo: Buffer, index: number) => Promise<Buffer> }[] = [
  ...CORNERS.flatMap((corners) =>
    DEGREES.map((degrees) => ({
      name: `turn ${degrees}° ${corners}`,
      corners,
      // Every other photograph turns the other way.
      make: (photo: Buffer, index: number) => turnedOn(photo, index % 2 === 0 ? degrees : -degrees, corners),
    })),
  ),
  { name: 'horizontal flip', corners: null, make: (photo) => sharp(photo).flop().jpeg({ quality: 90 }).toBuffer() },
  { name: 'vertical flip', corners: null, make: (photo) => sharp(photo).flip().jpeg({ quality: 90 }).toBuffer() },
];

/** The text-like pictures of the tuning side: rendered pages of text under 256 px high (test/helpers/text-page.ts). */
const TEXT_PAGES = 'text pages (tuned on)';
const PAGE_SIZES = [
  [384, 191],
  [448, 172],
  [360, 180],
  [400, 200],
  [300, 150],
  [420, 240],
  [250, 180],
  [512, 200],
];

const GROUPS = [
  { group: 'robust-recall set (tuned on)', dir: EVAL_SET_DIR, photos: null },
  { group: TEXT_PAGES, dir: null, photos: null },
  { group: 'opencv-doc (held out)', dir: FRESH_SET_DIR, photos: FRESH_PHOTOS },
  { group: 'skimage (held out)', dir: SKIMAGE_SET_DIR, photos: SKIMAGE_PHOTOS },
];

async function originals(): Promise<Picture[]> {
  const pictures: Picture[] = [];
  for (const [seed, [width, height]] of PAGE_SIZES.slice(0, PHOTOS).entries()) {
    pictures.push({ photo: `page-${width}x${height}`, group: TEXT_PAGES, edit: 'original', bytes: await textPage(width, height, seed + 1) });
  }
  for (const { group, dir, photos } of GROUPS) {
    if (!dir) continue;
    if (!existsSync(path.join(dir, 'manifest.json'))) await (photos ? buildEvalSet(dir, photos) : buildEvalSet());
    const manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as { photos: { id: string }[] };
    for (const { id } of manifest.photos.slice(0, PHOTOS)) {
      pictures.push({ photo: id, group, edit: 'original', bytes: readFileSync(path.join(dir, 'originals', `${id}.png`)) });
    }
  }
  return pictures;
}

export async function run(): Promise<BenchTable[]> {
  const images = localImageService(40_000_000);
  const builds = [await buildAt(process.env.SMALL_TURNS_BASELINE ?? PREVIOUS_BUILD), await thisBuild()];
  const photos = await originals();
  const copies: Picture[] = [];
  for (const [index, original] of photos.entries()) {
    for (const edit of EDITS) copies.push({ ...original, edit: edit.name, bytes: await edit.make(original.bytes, index) });
  }
  /** The geometric check of a pair, one way (the smaller SHA-256 the query, as checkPair does), kept per pair. */
  const checks = new Map<string, Awaited<ReturnType<typeof images.matchGeometry>>>();
  const geometry = async (x: Picture, y: Picture) => {
    const [sx, sy] = [sourceOf(x.bytes), sourceOf(y.bytes)];
    const [query, reference] = sx.sha256 <= sy.sha256 ? [sx, sy] : [sy, sx];
    const key = `${query.sha256}|${reference.sha256}`;
    if (!checks.has(key)) checks.set(key, await images.matchGeometry(query, reference));
    return checks.get(key)!;
  };

  const found = new Map<string, number[]>();
  const falseMatches: number[] = [];
  let falsePairs = 0;
  const seconds: number[] = [];
  for (const [b, build] of builds.entries()) {
    const started = performance.now();
    const fingerprints = new Map<Picture, Fingerprints>();
    for (const picture of [...photos, ...copies]) fingerprints.set(picture, await build.computeFingerprints(picture.bytes));
    const index = new build.robust.RobustIndex<number>();
    photos.forEach((photo, i) => index.add(i, fingerprints.get(photo)!));
    /** Whether a comparison of the copy with the stored photograph links them (judgePair's rules). */
    const linked = async (copy: Picture, photo: Picture, byLookup: boolean) => {
      const pair = build.robust.matchPair(fingerprints.get(copy)!, fingerprints.get(photo)!, THRESHOLD);
      const seen = byLookup ? pair.seen : null;
      const near = !seen && pair.plainSimilarity >= THRESHOLD - NEAR_THRESHOLD - 1e-9;
      if (!seen && !near) return false;
      const checked = near || pair.plainSimilarity < THRESHOLD ? await geometry(copy, photo) : null;
      return seen ? hashMatchStands(seen[0], THRESHOLD, checked) : checked!.confirmed;
    };
    let [wrong, pairs] = [0, 0];
    for (const copy of copies) {
      const hits = new Set(index.query(fingerprints.get(copy)!, THRESHOLD).map((hit) => hit.key));
      for (const [i, photo] of photos.entries()) {
        if (photo.group !== copy.group) continue;
        const link = await linked(copy, photo, hits.has(i));
        if (photo.photo === copy.photo) {
          const key = `${copy.edit}|${copy.group}`;
          if (!found.has(key))
            found.set(
              key,
              builds.map(() => 0),
            );
          if (link) found.get(key)![b]++;
        } else {
          pairs++;
          if (link) wrong++;
        }
      }
    }
    falseMatches.push(wrong);
    falsePairs = pairs;
    seconds.push((performance.now() - started) / 1000);
  }
  await images.close();

  const each = (figure: (b: number) => string | number) => builds.map((_, b) => figure(b)).join(' → ');
  const count = (group: string) => photos.filter((photo) => photo.group === group).length;
  const percent = (n: number, of: number) => `${((100 * n) / of).toFixed(1)} %`;
  const rows = EDITS.map((edit) => [edit.name, ...GROUPS.map(({ group }) => each((b) => percent(found.get(`${edit.name}|${group}`)![b], count(group))))]);
  const byCorners = (corners: Corners | null, group: string) => {
    const edits = EDITS.filter((edit) => edit.corners === corners);
    return each((b) =>
      percent(
        edits.reduce((sum, edit) => sum + found.get(`${edit.name}|${group}`)![b], 0),
        edits.length * count(group),
      ),
    );
  };
  for (const corners of CORNERS) rows.push([`**all turns, ${corners} corners**`, ...GROUPS.map(({ group }) => byCorners(corners, group))]);
  rows.push(['**both flips**', ...GROUPS.map(({ group }) => byCorners(null, group))]);
  const load = os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
  return [
    {
      title: `Small turns and flips found internally, ${builds.map((build) => build.label).join(' → ')}`,
      columns: ['edit', ...GROUPS.map(({ group }) => `${group} (${count(group)})`)],
      rows,
      notes: [
        `False matches (a copy linked to another photograph of its group, ${falsePairs} pairs): ${each((b) => falseMatches[b])}.`,
        `Threshold ${THRESHOLD}; fingerprints and matching ${each((b) => `${seconds[b].toFixed(0)} s`)}; load average at the end ${load}.`,
      ],
    },
  ];
}
