import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { iou, type FaceBox } from '../../lib/images/faces.js';

// The face labels the face benchmark (bench/faces.ts) measures against: a box that is off the
// image, a duplicate, or an image whose source and licence are not stated would make its
// precision and recall wrong or its set unaccountable.
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const read = (name: string) => JSON.parse(readFileSync(path.join(ROOT, 'test/fixtures/faces', name), 'utf8'));
/** A labelled set under test/fixtures, by its path there. */
const readSet = (file: string) => JSON.parse(readFileSync(path.join(ROOT, 'test/fixtures', file), 'utf8'));

/** The smallest face width labelled; narrower faces go in 'ignored'. */
const MIN_FACE_WIDTH = 20;

interface DebianImage {
  file: string;
  package: string;
  version: string;
  licence: string;
  credit: string;
  width: number;
  height: number;
  faces?: FaceBox[];
  /** The bench resizes the picture by this factor first; width, height and boxes are in its pixels. */
  scale?: number;
  /** Person boxes: the people set has these instead of faces. */
  people?: FaceBox[];
  ignored?: FaceBox[];
}

const isBox = (box: FaceBox) => [box.x, box.y, box.width, box.height].every(Number.isFinite) && box.width > 0 && box.height > 0;

/** What is wrong with one image's boxes, given its size; empty when nothing is. Person boxes have no smallest width. */
function boxProblems(faces: FaceBox[], ignored: FaceBox[], width: number, height: number, minWidth = MIN_FACE_WIDTH): string[] {
  const problems: string[] = [];
  for (const box of [...faces, ...ignored]) {
    if (!isBox(box)) problems.push(`malformed box ${JSON.stringify(box)}`);
    else if (box.x < 0 || box.y < 0 || box.x + box.width > width || box.y + box.height > height)
      problems.push(`box ${JSON.stringify(box)} leaves the ${width}x${height} image`);
  }
  for (const box of faces) if (box.width < minWidth) problems.push(`face ${JSON.stringify(box)} is narrower than ${minWidth} px: it belongs in ignored`);
  const all = [...faces, ...ignored];
  all.forEach((a, i) =>
    all.slice(i + 1).forEach((b) => iou(a, b) >= 0.5 && problems.push(`boxes ${JSON.stringify(a)} and ${JSON.stringify(b)} label one face twice`)),
  );
  return problems;
}

function debianProblems(set: { install: string; images: DebianImage[] }): string[] {
  const problems: string[] = [];
  const installed = new Set(set.install.replace(/^apt-get install\s+/, '').split(/\s+/));
  const files = new Set<string>();
  for (const image of set.images) {
    const where = image.file ?? '(no file)';
    if (!path.isAbsolute(where)) problems.push(`${where}: not an absolute path where the package installs it`);
    // The same picture may come again at another scale (its boxes in the scaled pixels).
    const key = `${where} ${image.scale ?? 1}`;
    if (files.has(key)) problems.push(`${where}: listed twice`);
    files.add(key);
    for (const key of ['package', 'version', 'licence', 'credit'] as const)
      if (!(typeof image[key] === 'string' && image[key].trim())) problems.push(`${where}: no ${key}`);
    if (!installed.has(image.package)) problems.push(`${where}: ${image.package} is not in the install line`);
    if (!(Number.isInteger(image.width) && image.width > 0 && Number.isInteger(image.height) && image.height > 0)) problems.push(`${where}: no size`);
    else if (image.people)
      problems.push(...boxProblems(image.people, image.ignored ?? [], image.width, image.height, 0).map((problem) => `${where}: ${problem}`));
    else problems.push(...boxProblems(image.faces ?? [], image.ignored ?? [], image.width, image.height).map((problem) => `${where}: ${problem}`));
  }
  return problems;
}

describe('face labels', () => {
  it('states the package, version, licence and credit of every Debian photograph, and labels only inside it', () => {
    const set = read('debian-set.json');
    expect(set.install).toMatch(/^apt-get install /);
    expect(set.images.length).toBeGreaterThan(0);
    expect(debianProblems(set)).toEqual([]);
  });

  it.each([
    ['faces/group-set.json', 'faces'],
    ['people/people-set.json', 'people'],
    ['people/tuning-set.json', 'people'],
  ] as const)('states the package, version, licence and credit of every picture in %s, and labels only inside it', (file, kind) => {
    const set = readSet(file);
    expect(set.install).toMatch(/^apt-get install /);
    expect(set.images.every((image: DebianImage) => Array.isArray(image[kind]))).toBe(true);
    expect(debianProblems(set)).toEqual([]);
  });

  it('keeps the tuning person set apart from the held-out sets: no picture of theirs is in it', () => {
    const heldOut = new Set(['faces/group-set.json', 'people/people-set.json'].flatMap((file) => readSet(file).images.map((image: DebianImage) => image.file)));
    const tuning = readSet('people/tuning-set.json').images.map((image: DebianImage) => image.file);
    expect(tuning.length).toBeGreaterThan(0);
    expect(tuning.filter((file: string) => heldOut.has(file))).toEqual([]);
  });

  it('finds a missing licence, a box off the image, a face too small and a face labelled twice', () => {
    const good: DebianImage = {
      file: '/usr/share/example/photo.jpg',
      package: 'example-data',
      version: '1.0-1',
      licence: 'CC0',
      credit: 'someone',
      width: 100,
      height: 80,
      faces: [{ x: 10, y: 10, width: 30, height: 30 }],
    };
    const set = (image: Partial<DebianImage>) => ({ install: 'apt-get install example-data', images: [{ ...good, ...image }] });
    expect(debianProblems(set({}))).toEqual([]);
    expect(debianProblems(set({ licence: ' ' }))).toEqual(['/usr/share/example/photo.jpg: no licence']);
    expect(debianProblems(set({ package: 'other-data' }))).toEqual(['/usr/share/example/photo.jpg: other-data is not in the install line']);
    expect(debianProblems(set({ faces: [{ x: 80, y: 10, width: 30, height: 30 }] }))[0]).toMatch(/leaves the 100x80 image/);
    expect(debianProblems(set({ faces: [{ x: 10, y: 10, width: 12, height: 14 }] }))[0]).toMatch(/narrower than 20 px/);
    expect(debianProblems(set({ ignored: [{ x: 12, y: 10, width: 30, height: 30 }] }))[0]).toMatch(/label one face twice/);
    expect(debianProblems(set({ file: 'photo.jpg' }))[0]).toMatch(/not an absolute path/);
  });

  it('states the source of every image in labels.json, whose images (committed, or in the face-api dev dependency) are present with every box inside', async () => {
    const sharp = (await import('sharp')).default;
    const labels: { file: string; source: string; faces: FaceBox[] }[] = read('labels.json');
    expect(labels.length).toBeGreaterThan(0);
    for (const image of labels) {
      expect(image.source.trim(), image.file).not.toBe('');
      const file = path.join(ROOT, image.file);
      expect(existsSync(file), image.file).toBe(true);
      const { width, height } = await sharp(file).metadata();
      expect(boxProblems(image.faces, [], width!, height!), image.file).toEqual([]);
    }
  });
});
