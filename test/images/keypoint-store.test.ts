import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import sharp from 'sharp';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { computeGeometryFeatures, type GeometryFeatures } from '../../lib/images/geometry.js';
import { folderKeypointStore, type KeypointStore } from '../../lib/images/keypoint-store.js';
import { localImageService } from '../../lib/images/local-service.js';
import { sourceOf } from '../../lib/images/source.js';
import type { ImageService } from '../../lib/ports.js';
import { FIXTURE_NAMES, fixturePath } from '../helpers/fixtures.js';
import { gridCollage } from '../helpers/geometry-transforms.js';
import { until } from '../helpers/until.js';

/**
 * The keypoints kept per picture in a folder that every process on the data folder shares
 * (decision 0047): computed once, read by the next images port instead of computed again, and
 * never trusted when the file is cut short, altered or of another version.
 */

const MAX_PIXELS = 40_000_000;
const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const kept = (dir: string, bytes: Buffer) => join(dir, sha(bytes).slice(0, 2), `${sha(bytes)}.kp`);
/** Until `done` holds, read every 20 ms for at most 10 s (a loaded machine's file work takes a while, never that long). */
const whenFiles = (what: string, done: () => boolean) => until(what, done, (held) => held, { timeoutMs: 10_000, everyMs: 20 });
/** Files are written after the check is answered; a picture's claim goes once its file is there. */
const settled = () => whenFiles('every claim to go', () => !readdirSync(dir, { recursive: true, encoding: 'utf8' }).some((name) => name.endsWith('.claim')));
/** What the store keeps for the picture, or a rejection when it would have to compute it. */
const keptOnly = (store: KeypointStore, key: string, mirror: boolean) => store.kept(key, mirror, () => Promise.reject(new Error('not kept')));
/** Has the store keep these features for the picture. */
async function keep(store: KeypointStore, key: string, features: GeometryFeatures, mirror: boolean): Promise<void> {
  await store.kept(key, mirror, async () => features);
  await settled();
}

let photo: Buffer;
let turned: Buffer;
let dir = '';
const ports: ImageService[] = [];
const port = (maxBytes = 64 * 1024 * 1024) => {
  const images = localImageService(MAX_PIXELS, { keypoints: folderKeypointStore(dir, maxBytes) });
  ports.push(images);
  return images;
};

beforeAll(async () => {
  photo = await sharp(fixturePath('chelsea.png')).resize(900).jpeg({ quality: 90 }).toBuffer();
  // A turn the pixel rules cannot confirm: the check needs both pictures' keypoints.
  turned = await sharp(photo).rotate(12, { background: '#000' }).jpeg({ quality: 85 }).toBuffer();
}, 60_000);
afterEach(async () => {
  await Promise.all(ports.splice(0).map((images) => images.close()));
  rmSync(dir, { recursive: true, force: true });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('keypoints kept per picture in the data folder', () => {
  it('are computed by the first images port and read, not computed again, by the next one on the same folder', async () => {
    dir = mkdtempSync(join(tmpdir(), 'keypoints-'));
    const first = await port().matchGeometry(sourceOf(turned), sourceOf(photo));
    expect(first.confirmed).toBe(true);
    await settled();
    const files = [kept(dir, turned), kept(dir, photo)];
    // Made old, so that a read (which touches its file) shows; a new computation would write a new file.
    const before = files.map((file) => {
      utimesSync(file, new Date(2000, 0, 1), new Date(2000, 0, 1));
      return statSync(file);
    });

    const again = await port().matchGeometry(sourceOf(turned), sourceOf(photo));
    await settled();
    expect(again).toEqual(first);
    files.forEach((file, i) => {
      const after = statSync(file);
      expect(after.ino).toBe(before[i].ino);
      expect(after.mtimeMs).toBeGreaterThan(before[i].mtimeMs);
    });
  }, 60_000);

  it("hold what the computation gives, a collage's cells and the mirror's keypoints included", async () => {
    dir = mkdtempSync(join(tmpdir(), 'keypoints-'));
    const others = await Promise.all(FIXTURE_NAMES.filter((name) => name !== 'chelsea.png').map((name) => sharp(fixturePath(name)).jpeg().toBuffer()));
    const collage = await gridCollage(photo, others, () => 0.3, { layout: '2x2', fit: 'cover', gutter: 0 });
    const store = folderKeypointStore(dir, 64 * 1024 * 1024);
    const computed = await computeGeometryFeatures(collage, MAX_PIXELS);
    expect(computed.cells.length).toBeGreaterThan(1);
    await keep(store, sha(collage), computed, true);
    expect(await keptOnly(store, sha(collage), true)).toEqual(computed);

    const query = await computeGeometryFeatures(photo, MAX_PIXELS, { mirror: false });
    await keep(store, sha(photo), query, false);
    expect(await keptOnly(store, sha(photo), false)).toEqual(query);
    // Kept without the mirror's keypoints: not an answer for a reference, which needs them.
    await expect(keptOnly(store, sha(photo), true)).rejects.toThrow('not kept');
  }, 60_000);

  it.each([
    ['cut short', (bytes: Buffer) => bytes.subarray(0, bytes.length - 1000)],
    ['altered in the middle', (bytes: Buffer) => Buffer.from(bytes.map((byte, i) => (i === bytes.length >> 1 ? byte ^ 0xff : byte)))],
    ['of another version', (bytes: Buffer) => Buffer.from(bytes.map((byte, i) => (i === 10 ? byte ^ 0xff : byte)))],
    ['that is not a keypoints file', () => Buffer.from('{"points": [1, 2, 3]}')],
    ['that is empty', () => Buffer.alloc(0)],
  ])(
    'a kept file %s is ignored: the keypoints are computed again, written anew, and the check answers as before',
    async (_, spoil) => {
      dir = mkdtempSync(join(tmpdir(), 'keypoints-'));
      const first = await port().matchGeometry(sourceOf(turned), sourceOf(photo));
      await settled();
      const file = kept(dir, photo);
      const whole = readFileSync(file);
      writeFileSync(file, spoil(whole));

      const again = await port().matchGeometry(sourceOf(turned), sourceOf(photo));
      await settled();
      expect(again).toEqual(first);
      expect(readFileSync(file).equals(whole)).toBe(true);
    },
    60_000,
  );

  it('stay within their bound, the least recently used going first', async () => {
    dir = mkdtempSync(join(tmpdir(), 'keypoints-'));
    const pictures = await Promise.all(FIXTURE_NAMES.map((name) => sharp(fixturePath(name)).resize(600).jpeg().toBuffer()));
    const features = await Promise.all(pictures.map((bytes) => computeGeometryFeatures(bytes, MAX_PIXELS)));
    const unbounded = folderKeypointStore(join(dir, 'sizes'), 1024 * 1024 * 1024);
    for (const [i, bytes] of pictures.entries()) await keep(unbounded, sha(bytes), features[i], true);
    const sizes = pictures.map((bytes) => statSync(kept(join(dir, 'sizes'), bytes)).size);
    // Room for about three of the five.
    const bound = sizes.slice(0, 3).reduce((sum, size) => sum + size, 0) + 1000;
    const store = folderKeypointStore(join(dir, 'bounded'), bound);
    for (const [i, bytes] of pictures.entries()) {
      await keep(store, sha(bytes), features[i], true);
      // The first picture is read after each write, so it stays while others go.
      expect(await keptOnly(store, sha(pictures[0]), true)).toEqual(features[0]);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const left = readdirSync(join(dir, 'bounded'), { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile());
    expect(left.reduce((sum, entry) => sum + statSync(join(entry.parentPath, entry.name)).size, 0)).toBeLessThanOrEqual(bound);
    expect(await keptOnly(store, sha(pictures[0]), true)).toEqual(features[0]);
    expect(await keptOnly(store, sha(pictures[4]), true)).toEqual(features[4]);
    await expect(keptOnly(store, sha(pictures[1]), true)).rejects.toThrow('not kept');
  }, 60_000);

  it('a picture another process is computing is waited for, not computed twice; a claim left by a stopped process is not', async () => {
    dir = mkdtempSync(join(tmpdir(), 'keypoints-'));
    const features = await computeGeometryFeatures(photo, MAX_PIXELS);
    const [one, other] = [folderKeypointStore(dir, 64 * 1024 * 1024), folderKeypointStore(dir, 64 * 1024 * 1024)];
    const slow = one.kept(sha(photo), true, () => new Promise((resolve) => setTimeout(() => resolve(features), 500)));
    await whenFiles("the photograph's claim", () => existsSync(`${kept(dir, photo)}.claim`));
    const [first, second] = await Promise.all([slow, keptOnly(other, sha(photo), true)]);
    expect(second).toEqual(first);

    // A claim on another picture, from a process that stopped a minute ago while computing it.
    const claim = `${kept(dir, turned)}.claim`;
    mkdirSync(dirname(claim), { recursive: true });
    writeFileSync(claim, '');
    utimesSync(claim, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    const started = performance.now();
    await expect(keptOnly(other, sha(turned), true)).rejects.toThrow('not kept');
    expect(performance.now() - started).toBeLessThan(5_000);
  }, 60_000);

  it("a picture queued behind a process's other computations is not claimed: another process computes it meanwhile", async () => {
    dir = mkdtempSync(join(tmpdir(), 'keypoints-'));
    const features = await computeGeometryFeatures(photo, MAX_PIXELS);
    const turnedFeatures = await computeGeometryFeatures(turned, MAX_PIXELS);
    // A process computing one picture at a time (one core), the photograph first, until the test lets it finish.
    const one = folderKeypointStore(dir, 64 * 1024 * 1024, { computing: 1 });
    let finish: () => void = () => undefined;
    const photoDone = one.kept(sha(photo), true, () => new Promise((resolve) => (finish = () => resolve(features))));
    // The turned picture is asked for once the photograph holds the one turn: asked at once, its first read could end first and take it.
    await whenFiles("the photograph's claim", () => existsSync(`${kept(dir, photo)}.claim`));
    let oneComputedTurned = false;
    const turnedInOne = one.kept(sha(turned), true, async () => {
      oneComputedTurned = true;
      return turnedFeatures;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(existsSync(`${kept(dir, photo)}.claim`)).toBe(true);
    expect(existsSync(`${kept(dir, turned)}.claim`)).toBe(false);
    // Another process wants the turned picture meanwhile: it computes it, without waiting for the first.
    const other = folderKeypointStore(dir, 64 * 1024 * 1024);
    expect(await other.kept(sha(turned), true, async () => turnedFeatures)).toEqual(turnedFeatures);
    await whenFiles("the turned picture's claim to go", () => !existsSync(`${kept(dir, turned)}.claim`));
    finish();
    await photoDone;
    // Its turn come, the first process reads what the other kept.
    expect(await turnedInOne).toEqual(turnedFeatures);
    expect(oneComputedTurned).toBe(false);
  }, 60_000);

  it('a folder that cannot be written leaves the check to compute, and answer', async () => {
    dir = mkdtempSync(join(tmpdir(), 'keypoints-'));
    const blocked = join(dir, 'blocked');
    // A file where the folder should be: nothing can be kept under it.
    writeFileSync(blocked, 'not a folder');
    const images = localImageService(MAX_PIXELS, { keypoints: folderKeypointStore(blocked, 64 * 1024 * 1024) });
    ports.push(images);
    const result = await images.matchGeometry(sourceOf(turned), sourceOf(photo));
    await settled();
    expect(result.confirmed).toBe(true);
    expect(readFileSync(blocked, 'utf8')).toBe('not a folder');
  }, 60_000);
});
