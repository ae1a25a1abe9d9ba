import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { detectBlazeFaces, detectConfirmedFaces, INPUT_SIZE, loadBlazeFace, type BlazeFaceRaster } from '../../lib/images/blazeface.mjs';
import { regionRaster } from '../../lib/images/region-raster.js';
import { ImageRejected } from '../../lib/images/rejected.js';
import { cropFaces } from '../../lib/images/face-crops.js';
import { demoPeople, labelledFixtures } from '../helpers/demo-people.js';
import {
  bySureness,
  createDetector,
  dedupeFaces,
  headRegion,
  iou,
  linkFaces,
  reportedPeople,
  wholePictureSides,
  withCloseUps,
  withoutNested,
  type Detector,
  type Face,
  type FaceBox,
} from '../../lib/images/faces.js';

// Records every real detection process the detector starts and how many requests each was sent,
// so tests can see where detection runs and can kill a process the way a crash would.
const spawned = vi.hoisted(() => [] as ChildProcess[]);
const requests = vi.hoisted(() => new Map<ChildProcess, number>());
vi.mock('node:child_process', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:child_process')>();
  const recordedFork = ((...args: Parameters<typeof real.fork>) => {
    const child = real.fork(...args);
    spawned.push(child);
    const send = child.send.bind(child) as (message: unknown) => boolean;
    child.send = ((message: unknown) => {
      requests.set(child, (requests.get(child) ?? 0) + 1);
      return send(message);
    }) as typeof child.send;
    return child;
  }) as typeof real.fork;
  return { ...real, fork: recordedFork };
});

const fixture = (name: string) => readFileSync(new URL(`../fixtures/images/${name}`, import.meta.url));
const astronaut = fixture('astronaut.png');
const camera = fixture('camera.png');

// Face regions read off the 512x512 fixtures by eye: the detected box centre must fall inside.
const ASTRONAUT_FACE = { left: 185, right: 260, top: 90, bottom: 165 };
const CAMERA_FACE = { left: 185, right: 260, top: 110, bottom: 200 };

const facesOf = (detector: Detector, image: Buffer) => detector.detect(image).then((found) => found.faces);
const centre = (box: FaceBox) => ({ x: box.x + box.width / 2, y: box.y + box.height / 2 });
const face = (x: number, y: number, width: number, height: number, score: number): Face => ({ box: { x, y, width, height }, score });

function expectSingleFaceIn(faces: Face[], region: { left: number; right: number; top: number; bottom: number }) {
  expect(faces).toHaveLength(1);
  const [{ box, score }] = faces;
  const { x, y } = centre(box);
  expect(x).toBeGreaterThan(region.left);
  expect(x).toBeLessThan(region.right);
  expect(y).toBeGreaterThan(region.top);
  expect(y).toBeLessThan(region.bottom);
  expect(score).toBeGreaterThanOrEqual(0.5);
  expect(score).toBeLessThanOrEqual(1);
  for (const value of Object.values(box)) expect(Number.isInteger(value)).toBe(true);
}

const shifted = (region: typeof ASTRONAUT_FACE, dx: number, dy: number, scale = 1) => ({
  left: region.left * scale + dx,
  right: region.right * scale + dx,
  top: region.top * scale + dy,
  bottom: region.bottom * scale + dy,
});

describe('iou', () => {
  it('is 1 for the same box, 0 for disjoint or merely touching boxes', () => {
    const box = { x: 10, y: 10, width: 20, height: 20 };
    expect(iou(box, box)).toBe(1);
    expect(iou(box, { x: 100, y: 100, width: 5, height: 5 })).toBe(0);
    expect(iou(box, { x: 30, y: 10, width: 20, height: 20 })).toBe(0);
  });

  it('divides the overlap by the union', () => {
    expect(iou({ x: 0, y: 0, width: 10, height: 10 }, { x: 5, y: 0, width: 10, height: 10 })).toBeCloseTo(50 / 150);
    expect(iou({ x: 0, y: 0, width: 10, height: 10 }, { x: 2, y: 2, width: 5, height: 5 })).toBeCloseTo(25 / 100);
  });

  it('is 0 for a box without area', () => {
    expect(iou({ x: 0, y: 0, width: 0, height: 10 }, { x: 0, y: 0, width: 10, height: 10 })).toBe(0);
  });
});

describe('dedupeFaces', () => {
  it('keeps the highest-scoring face of an overlapping group and every separate face', () => {
    const weak = face(100, 100, 50, 50, 0.6);
    const strong = face(104, 102, 50, 50, 0.9);
    const elsewhere = face(300, 40, 40, 40, 0.7);
    expect(dedupeFaces([weak, elsewhere, strong])).toEqual([strong, elsewhere]);
  });

  it('keeps overlapping faces whose IoU is at or under the threshold', () => {
    const left = face(0, 0, 10, 10, 0.9);
    const right = face(5, 0, 10, 10, 0.8);
    expect(dedupeFaces([left, right], 0.5)).toEqual([left, right]);
    expect(dedupeFaces([left, right], 0.3)).toEqual([left]);
  });

  it('leaves its input untouched', () => {
    const input = [face(0, 0, 10, 10, 0.1), face(1, 1, 10, 10, 0.9)];
    const copy = structuredClone(input);
    dedupeFaces(input);
    expect(input).toEqual(copy);
  });
});

describe('withoutNested', () => {
  it('drops a less certain face lying mostly inside a more certain one, and keeps faces side by side', () => {
    const big = face(100, 100, 140, 140, 0.94);
    const inner = face(124, 122, 94, 94, 0.77);
    const beside = face(230, 110, 60, 60, 0.7);
    expect(withoutNested([big, inner, beside])).toEqual([big, beside]);
    // A more certain small face inside a larger, less certain box stays: only the less certain goes.
    expect(
      withoutNested([
        { ...inner, score: 0.9 },
        { ...big, score: 0.8 },
      ]),
    ).toHaveLength(2);
  });
});

describe('bySureness', () => {
  it('keeps faces from 0.65, and searches again those under it that are at least 8 px wide at the whole-picture pass', () => {
    const sure = face(0, 0, 100, 100, 0.65);
    const unsure = face(200, 0, 80, 80, 0.3);
    // At a tenth of the picture: 8 px and 7 px wide at the pass.
    const atFloor = face(400, 0, 80, 80, 0.5);
    const tooSmall = face(600, 0, 70, 70, 0.5);
    expect(bySureness([sure, unsure, atFloor, tooSmall], 0.1)).toEqual({ faces: [sure], unsure: [unsure, atFloor] });
  });
});

describe('face detector on the fixture photos', () => {
  let detector: Detector;
  beforeAll(() => {
    detector = createDetector();
  });
  afterAll(() => detector.close());

  it('finds the face in astronaut.png', async () => {
    expectSingleFaceIn(await facesOf(detector, astronaut), ASTRONAUT_FACE);
  });

  it('finds the face in camera.png (a grayscale PNG)', async () => {
    expectSingleFaceIn(await facesOf(detector, camera), CAMERA_FACE);
  });

  it('finds every labelled face of the fixture and demo photos, boxed the size its label is', async () => {
    // test/fixtures/faces/labels.json: 24 faces, ear to ear and forehead to chin. Boxes grown 1.5
    // times BlazeFace's own, as before decisions/0073, overlapped them by 0.71 at the median and
    // were a fifth taller; 1.3 gives 0.80 and about their size.
    const root = new URL('../../', import.meta.url);
    const overlaps: number[] = [];
    const heights: number[] = [];
    for (const { file, faces: labels } of labelledFixtures()) {
      const found = await facesOf(detector, readFileSync(new URL(file, root)));
      expect(found, file).toHaveLength(labels.length);
      for (const label of labels) {
        const best = found.reduce((a, b) => (iou(a.box, label) >= iou(b.box, label) ? a : b));
        overlaps.push(iou(best.box, label));
        heights.push(best.box.height / label.height);
      }
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
    expect(overlaps).toHaveLength(24);
    expect(Math.min(...overlaps)).toBeGreaterThanOrEqual(0.4);
    expect(median(overlaps)).toBeGreaterThanOrEqual(0.75);
    expect(median(heights)).toBeLessThan(1.12);
    expect(median(heights)).toBeGreaterThan(0.9);
  });

  it.each(['coffee.png', 'chelsea.png', 'rocket.jpg'])('finds no face in %s', async (name) => {
    expect(await facesOf(detector, fixture(name))).toEqual([]);
  });

  it('reports boxes in the coordinates of an image larger than the detection raster', async () => {
    const large = await sharp(astronaut).resize(2048, 2048).png().toBuffer();
    const faces = await facesOf(detector, large);
    expectSingleFaceIn(faces, shifted(ASTRONAUT_FACE, 0, 0, 4));
    expect(faces[0].box.width).toBeGreaterThan(200);
  });

  it('reports boxes in the displayed orientation of an EXIF-rotated JPEG', async () => {
    // Widened so that a missed rotation also swaps the reported width and height.
    const wide = await sharp(astronaut).extend({ right: 200, background: '#ffffff' }).toBuffer();
    // Orientation 6 means "turn 90 degrees clockwise to display": store it turned the other way.
    const stored = await sharp(wide).rotate(270).jpeg({ quality: 92 }).withMetadata({ orientation: 6 }).toBuffer();
    const metadata = await sharp(stored).metadata();
    expect([metadata.orientation, metadata.width, metadata.height]).toEqual([6, 512, 712]);
    const faces = await facesOf(detector, stored);
    expectSingleFaceIn(faces, ASTRONAUT_FACE);
    expect(faces[0].box.x + faces[0].box.width).toBeLessThanOrEqual(712);
  });

  it('sees through a transparent border of a PNG with alpha', async () => {
    const transparent = { r: 0, g: 0, b: 0, alpha: 0 };
    const framed = await sharp(astronaut).ensureAlpha().extend({ top: 100, left: 60, background: transparent }).png().toBuffer();
    expect((await sharp(framed).metadata()).hasAlpha).toBe(true);
    expectSingleFaceIn(await facesOf(detector, framed), shifted(ASTRONAUT_FACE, 60, 100));
  });

  it('rasterises an SVG before detection', async () => {
    const svg = Buffer.from(
      `<svg xmlns="http://www.w3.org/2000/svg" width="612" height="512">` +
        `<rect width="612" height="512" fill="#ffffff"/>` +
        `<image x="100" y="0" width="512" height="512" href="data:image/png;base64,${astronaut.toString('base64')}"/>` +
        `</svg>`,
    );
    expectSingleFaceIn(await facesOf(detector, svg), shifted(ASTRONAUT_FACE, 100, 0));
  });

  it('rejects a corrupt image with a clear error and keeps detecting afterwards, in the same worker', async () => {
    const workersBefore = spawned.length;
    await expect(facesOf(detector, Buffer.from('definitely not an image'))).rejects.toThrow(new ImageRejected('not an image'));
    const truncated = astronaut.subarray(0, astronaut.length / 2);
    await expect(facesOf(detector, truncated)).rejects.toBeInstanceOf(ImageRejected);
    await expect(facesOf(detector, truncated)).rejects.toThrow(/image could not be decoded/);
    expectSingleFaceIn(await facesOf(detector, astronaut), ASTRONAUT_FACE);
    expect(spawned.length).toBe(workersBefore);
  });
});

/** `input` set at (`left`, `top`) into a plain picture, 1600x1000 unless said, as PNG. */
function onPlain(input: Buffer, left: number, top: number, { width = 1600, height = 1000 } = {}): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: '#d8d0c0' } })
    .composite([{ input, left, top }])
    .png()
    .toBuffer();
}

/** A face-api demo person (demoPeople) shrunk so that its face is `width` px wide, with that face's box in the shrunk copy. */
async function demoPersonAt(photo: string, face: number, width: number): Promise<{ bytes: Buffer; face: FaceBox }> {
  const person = (await demoPeople()).find((p) => p.photo === photo && p.face === face)!;
  const label = person.faces[0]!;
  const k = width / label.width;
  const bytes = await sharp(person.bytes)
    .resize(Math.round(person.width * k), Math.round(person.height * k))
    .toBuffer();
  return { bytes, face: { x: label.x * k, y: label.y * k, width, height: label.height * k } };
}

/** astronaut.png shrunk to `side` and set into a plain 1600x1000 picture at (900, 500). */
async function smallAstronaut(side: number): Promise<Buffer> {
  return onPlain(await sharp(astronaut).resize(side, side).toBuffer(), 900, 500);
}

/** Twelve copies of astronaut.png, 300 px each, in a 4x3 grid. */
async function astronautGrid(): Promise<Buffer> {
  const tile = await sharp(astronaut).resize(300, 300).toBuffer();
  const tiles = Array.from({ length: 12 }, (_, i) => ({ input: tile, left: (i % 4) * 300, top: Math.floor(i / 4) * 300 }));
  return sharp({ create: { width: 1200, height: 900, channels: 3, background: '#ffffff' } })
    .composite(tiles)
    .png()
    .toBuffer();
}

describe('people and the faces inside them', () => {
  let detector: Detector;
  beforeAll(() => {
    detector = createDetector({ workers: 1 });
  });
  afterAll(() => detector.close());

  it('finds the astronaut as a person and links the face inside the box', async () => {
    const { faces, people, notes } = await detector.detect(astronaut);
    expect(notes).toEqual([]);
    expect(people).toHaveLength(1);
    const [person] = people;
    expect(person.score).toBeGreaterThanOrEqual(0.3);
    // The astronaut fills most of the picture from the helmet down.
    expect(person.box.width).toBeGreaterThan(250);
    expect(person.box.height).toBeGreaterThan(300);
    expect(person.face).toBe(0);
    const { x, y } = centre(faces[0].box);
    expect(x).toBeGreaterThan(person.box.x);
    expect(y).toBeGreaterThan(person.box.y);
    expect(x).toBeLessThan(person.box.x + person.box.width);
  });

  // coffee.png is not here: the people pass at 384 px takes its cup for a person (0.60), as at 224
  // it took the cat of chelsea.png for one (0.71); docs/faces.md says so.
  it.each(['chelsea.png', 'rocket.jpg'])('finds nobody in %s', async (name) => {
    expect(await detector.detect(fixture(name))).toEqual({ faces: [], people: [], notes: [] });
  });

  it('finds no face in the exhaust of a re-encoded rocket.jpg, where a head region once scored 0.54', async () => {
    expect(await detector.detect(await sharp(fixture('rocket.jpg')).jpeg().toBuffer())).toMatchObject({ faces: [] });
  });

  it("finds a face too small for the whole-picture pass in the person's head region", async () => {
    const picture = await smallAstronaut(240);
    // At the whole-picture pass's 192 px the face is under 10 px: BlazeFace alone sees nothing.
    await loadBlazeFace();
    expect(await detectBlazeFaces([await detectionRaster(picture)])).toEqual([[]]);
    const { faces, people } = await detector.detect(picture);
    expect(people).toHaveLength(1);
    // The face of the 240 px astronaut: x 87-122, y 42-77 of the copy, at (900, 500).
    expectSingleFaceIn(faces, { left: 987, right: 1022, top: 542, bottom: 577 });
    expect(people[0].face).toBe(0);
  });

  it("gives the astronaut's head one face box, where the head region and the whole picture boxed it at two scales", async () => {
    const head = await sharp(astronaut).extract({ left: 160, top: 60, width: 130, height: 150 }).resize(120, 138).toBuffer();
    const picture = await onPlain(head, 700, 400);
    const { faces } = await detector.detect(picture);
    // The face: x 25-100, y 30-105 of the 130x150 cut, at 120/130 of it, at (700, 400).
    expectSingleFaceIn(faces, { left: 723, right: 792, top: 428, bottom: 497 });
  });

  it('searches up close a face the whole-picture pass was unsure of, where no person was seen', async () => {
    // sample2.jpg's second person, head and shoulders, the face 80 px wide in a plain 1500x1000
    // picture: the whole-picture pass scores the face 0.46, and no person's head region finds it
    // (with unsure faces left alone, as before decisions/0065, it is found nowhere); in a region
    // three faces wide around the unsure box it is a face.
    const { bytes, face } = await demoPersonAt('sample2.jpg', 1, 80);
    const picture = await onPlain(bytes, 600, 300, { width: 1500 });
    const label = { ...face, x: 600 + face.x, y: 300 + face.y };
    await loadBlazeFace();
    const side = wholePictureSides({ width: 1500, height: 1000 }).faces;
    const [unsure] = await detectBlazeFaces([await detectionRaster(picture, 0.25, side)], side);
    const atLabel = (box: FaceBox) => iou(box, label) >= 0.4;
    const whole = unsure.map((found) => ({ ...found, box: roundOut(scaled(found, 1500 / side)) })).filter(({ box }) => atLabel(box));
    expect(whole.map(({ score }) => score < 0.65)).toEqual([true]);
    const { faces } = await detector.detect(picture);
    expect(faces.filter(({ box, score }) => atLabel(box) && score >= 0.6)).toHaveLength(1);
  });

  it('finds a face 24 px wide that its region scores under 0.6 and its mirror image confirms', async () => {
    // sample2.jpg's second person in a plain 1500x1000 picture, the face 24 px wide: its region scores
    // it 0.55, its mirror image from 0.5 (detectConfirmedFaces); before that it was not found.
    const { bytes, face } = await demoPersonAt('sample2.jpg', 1, 24);
    const label = { ...face, x: 600 + face.x, y: 300 + face.y };
    const { faces } = await detector.detect(await onPlain(bytes, 600, 300, { width: 1500 }));
    expect(faces.filter(({ box }) => iou(box, label) >= 0.4).map(({ score }) => score >= 0.5 && score < 0.6)).toEqual([true]);
  });

  it('finds a head and shoulders small in a large picture as a person, its face linked', async () => {
    // The astronaut's head and shoulders, 120 px wide: at 224 px the people pass scored it under 0.5
    // and only its face made it a person; at 384 px it scores 0.53.
    const head = await sharp(astronaut).extract({ left: 100, top: 0, width: 312, height: 240 }).resize({ width: 120 }).toBuffer();
    const picture = await onPlain(head, 900, 500);
    const { faces, people } = await detector.detect(picture);
    expectSingleFaceIn(faces, { left: 905, right: 990, top: 505, bottom: 590 });
    expect(people).toHaveLength(1);
    expect(people[0].face).toBe(0);
  });

  it('finds a person a tenth of the picture tall whose face does not show', async () => {
    // The astronaut with the face painted over, 120 px tall in a 1600x1000 picture: only the
    // people pass can find it, and at 224 px it was under what the model sees.
    const covered = await sharp(astronaut)
      .composite([{ input: { create: { width: 120, height: 110, channels: 3, background: '#806040' } }, left: 165, top: 70 }])
      .png()
      .toBuffer();
    const picture = await onPlain(await sharp(covered).resize(120, 120).toBuffer(), 300, 200);
    const { faces, people } = await detector.detect(picture);
    expect(faces).toEqual([]);
    expect(people).toHaveLength(1);
    expect(people[0].face).toBeNull();
    const { x, y } = centre(people[0].box);
    expect(Math.abs(x - 360)).toBeLessThan(20);
    expect(Math.abs(y - 260)).toBeLessThan(20);
  });

  it('finds each of twelve people in a row across a 4:1 panorama, with their faces', async () => {
    // Astronauts 120 px tall in a 3200x800 picture: at 384 px on the longer side the people pass
    // saw them 14 px tall (candidates of 0.11-0.23) and 10 were found through their faces; a wide
    // picture is now seen with 192 px on its shorter side (0.38-0.55, all 12).
    const person = await sharp(astronaut).resize(120, 120).toBuffer();
    const lefts = Array.from({ length: 12 }, (_, i) => 20 + i * 270);
    const picture = await sharp({ create: { width: 3200, height: 800, channels: 3, background: '#d8d0c0' } })
      .composite(lefts.map((left, i) => ({ input: person, left, top: 310 + ((i * 37) % 60) })))
      .jpeg({ quality: 90 })
      .toBuffer();
    const { faces, people } = await detector.detect(picture);
    expect(faces).toHaveLength(12);
    expect(people.map((p) => Math.floor(centre(p.box).x / 270)).sort((a, b) => a - b)).toEqual(lefts.map((_, i) => i));
    expect(people.every((p) => p.face !== null)).toBe(true);
  });

  it('caps the head regions searched and the faces and people kept, and says so', async () => {
    const grid = await astronautGrid();
    const free = await detector.detect(grid);
    expect(free.notes).toEqual([]);
    expect(free.faces.length).toBeGreaterThanOrEqual(4);
    const capped = createDetector({ workers: 1, limits: { people: 1, regions: 3, faces: 2 } });
    try {
      const { faces, people, notes } = await capped.detect(grid);
      expect(faces).toHaveLength(2);
      expect(people).toHaveLength(1);
      expect(notes).toEqual([
        expect.stringMatching(/^only the 1 most certain of \d+ people were kept$/),
        expect.stringMatching(/^faces were looked for in 3 of \d+ regions only \(people's heads first, most certain first\)$/),
        expect.stringMatching(/^only the 2 most certain of \d+ faces were kept$/),
      ]);
      expect(faces[0].score).toBeGreaterThanOrEqual(faces[1].score);
    } finally {
      await capped.close();
    }
  });

  it('finishes on a 1x10000 strip and on noise, with boxes inside the picture', async () => {
    const strip = await sharp({ create: { width: 1, height: 10_000, channels: 3, background: '#808080' } })
      .png()
      .toBuffer();
    expect(await detector.detect(strip)).toEqual({ faces: [], people: [], notes: [] });
    const noise = Buffer.alloc(1200 * 800 * 3);
    for (let i = 0; i < noise.length; i++) noise[i] = (i * 2654435761) >>> 24;
    const found = await detector.detect(
      await sharp(noise, { raw: { width: 1200, height: 800, channels: 3 } })
        .png()
        .toBuffer(),
    );
    for (const { box } of [...found.faces, ...found.people]) {
      expect(box.x).toBeGreaterThanOrEqual(0);
      expect(box.y).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width).toBeLessThanOrEqual(1200);
      expect(box.y + box.height).toBeLessThanOrEqual(800);
    }
  });

  it('stops a worker that owes an answer past the deadline, and detects with a fresh one afterwards', async () => {
    const hasty = createDetector({ workers: 1, deadlineMs: 1 });
    try {
      const workersBefore = spawned.length;
      await expect(hasty.detect(astronaut)).rejects.toThrow(/detection took longer than 1 ms; its process was stopped/);
      expect(spawned.length).toBe(workersBefore + 1);
    } finally {
      await hasty.close();
    }
    const patient = createDetector({ workers: 1 });
    try {
      expectSingleFaceIn(await facesOf(patient, astronaut), ASTRONAUT_FACE);
    } finally {
      await patient.close();
    }
  });
  it("counts a request's deadline from when its process starts it, not while a fresh process loads its models", async () => {
    const deadlineMs = 250;
    const fresh = createDetector({ workers: 1, deadlineMs });
    try {
      const started = performance.now();
      expectSingleFaceIn(await facesOf(fresh, astronaut), ASTRONAUT_FACE);
      // Loading the models took longer than the deadline, which the answer outlived.
      expect(performance.now() - started).toBeGreaterThan(deadlineMs);
    } finally {
      await fresh.close();
    }
  });
});

describe('how large the whole-picture passes see a picture', () => {
  it('faces at 288 px on the longer side up to 3:2, then 192 on the shorter (384 at most); people at 384 up to 2:1, then 192 on the shorter (1024 at most)', () => {
    expect(wholePictureSides({ width: 384, height: 256 })).toEqual({ faces: 288, people: 384 });
    expect(wholePictureSides({ width: 256, height: 512 })).toEqual({ faces: 384, people: 384 });
    expect(wholePictureSides({ width: 455, height: 256 })).toEqual({ faces: 341, people: 384 });
    expect(wholePictureSides({ width: 1024, height: 256 })).toEqual({ faces: 384, people: 768 });
    expect(wholePictureSides({ width: 256, height: 1024 })).toEqual({ faces: 384, people: 768 });
    expect(wholePictureSides({ width: 2560, height: 256 })).toEqual({ faces: 384, people: 1024 });
    expect(wholePictureSides({ width: 10_000, height: 1 })).toEqual({ faces: 384, people: 1024 });
  });
});

describe('head regions and links', () => {
  const picture = { width: 1000, height: 800 };

  it('takes the top of a standing person, as wide as the box plus a margin, clamped to the picture', () => {
    expect(headRegion({ x: 100, y: 200, width: 50, height: 150 }, picture)).toEqual({ left: 95, top: 195, width: 60, height: 70 });
    expect(headRegion({ x: 0, y: 0, width: 400, height: 300 }, picture)).toEqual({ left: 0, top: 0, width: 440, height: 340 });
    expect(headRegion({ x: 980, y: 790, width: 40, height: 40 }, picture)).toEqual({ left: 976, top: 786, width: 24, height: 14 });
  });

  it('resamples a head region from the source raster to 128 px on its longer side: averaged when it shrinks, interpolated when it grows', () => {
    // A 400x200 raster of a 1600x800 picture: the left half black, the right half white.
    const pixels = Buffer.alloc(400 * 200 * 3);
    for (let row = 0; row < 200; row++) pixels.fill(255, (row * 400 + 200) * 3, (row + 1) * 400 * 3);
    const source = { pixels, width: 400, height: 200, area: { left: 0, top: 0, width: 1600, height: 800 } };
    const shrunk = regionRaster(source, { left: 0, top: 0, width: 1600, height: 800 }, 128);
    expect([shrunk.width, shrunk.height]).toEqual([128, 64]);
    expect([shrunk.pixels[0], shrunk.pixels[(63 * 128 + 127) * 3]]).toEqual([0, 255]);
    // A 40x40 region astride the edge (picture x 780-820, raster x 195-205) grows 3.2x: a ramp.
    const grown = regionRaster(source, { left: 780, top: 400, width: 40, height: 40 }, 128);
    expect([grown.width, grown.height]).toEqual([128, 128]);
    const row = Array.from({ length: 128 }, (_, x) => grown.pixels[(64 * 128 + x) * 3]);
    expect(row[0]).toBe(0);
    expect(row[127]).toBe(255);
    expect(row.some((value) => value > 0 && value < 255)).toBe(true);
    expect(row.every((value, x) => x === 0 || value >= row[x - 1])).toBe(true);
    // The same region from a decode of only a part of the picture (x 700-900, y 300-500, at full
    // scale, black left of x 800) gives the same picture, sharper.
    const part = Buffer.alloc(200 * 200 * 3);
    for (let y = 0; y < 200; y++) part.fill(255, (y * 200 + 100) * 3, (y + 1) * 200 * 3);
    const fromPart = regionRaster(
      { pixels: part, width: 200, height: 200, area: { left: 700, top: 300, width: 200, height: 200 } },
      { left: 780, top: 400, width: 40, height: 40 },
      128,
    );
    const partRow = Array.from({ length: 128 }, (_, x) => fromPart.pixels[(64 * 128 + x) * 3]);
    expect(partRow.slice(0, 60).every((value) => value === 0)).toBe(true);
    expect(partRow.slice(68).every((value) => value === 255)).toBe(true);
  });

  it('reports every candidate from 0.4, and a weaker one only with a face of its own where its head would be', () => {
    const person = (x: number, y: number, score: number) => ({ box: { x, y, width: 100, height: 250 }, score });
    const sure = person(100, 100, 0.8);
    // Weaker peaks: around the sure person, sharing its face; another with a face of its own;
    // one whose face is low in the box, too small for it, or wider than it; one with no face.
    const twin = person(110, 105, 0.3);
    const own = person(500, 100, 0.2);
    const low = person(300, 100, 0.2);
    const small = person(700, 100, 0.2);
    const wide = person(300, 500, 0.2);
    const bare = person(800, 500, 0.3);
    const faces = [
      face(130, 110, 40, 40, 0.9),
      face(530, 110, 40, 40, 0.9),
      face(330, 300, 40, 40, 0.9),
      face(740, 120, 10, 10, 0.9),
      face(290, 500, 120, 120, 0.9),
    ];
    expect(reportedPeople([bare, twin, low, small, wide, own, sure], faces, picture)).toEqual([sure, own]);
    expect(reportedPeople([twin], faces, picture)).toEqual([twin]);
    expect(reportedPeople([twin, own], [], picture)).toEqual([]);
  });

  it("drops a candidate under one and a half times as tall as the close-up face it holds: the people model's box on its eyes", () => {
    // A face filling a 300x400 portrait, and the flat box the people model puts across its eyes.
    const portrait = { width: 300, height: 400 };
    const closeUp = face(40, 60, 220, 240, 0.9);
    const eyes = { box: { x: 30, y: 150, width: 240, height: 80 }, score: 0.8 };
    expect(reportedPeople([eyes], [closeUp], portrait)).toEqual([]);
    // Its body: tall enough for the face, reported.
    const body = { box: { x: 10, y: 40, width: 280, height: 360 }, score: 0.8 };
    expect(reportedPeople([eyes, body], [closeUp], portrait)).toEqual([body]);
    // A head and shoulders small in a large picture is about as tall as its face, and still a person.
    const shoulders = { box: { x: 900, y: 500, width: 120, height: 92 }, score: 0.3 };
    expect(reportedPeople([shoulders], [face(905, 505, 85, 85, 0.9)], { width: 1600, height: 1000 })).toEqual([shoulders]);
  });

  it('keeps a candidate the bottom of the picture cuts, however short for its close-up face', () => {
    // A 500x170 strip: a face of 110 px fills two thirds of its height, and the person below it is
    // cut at the chest by the frame. The same box ending higher up is the eyes again.
    const strip = { width: 500, height: 170 };
    const closeUp = face(200, 20, 100, 110, 0.9);
    const cutAtTheChest = { box: { x: 170, y: 40, width: 160, height: 125 }, score: 0.8 };
    expect(reportedPeople([cutAtTheChest], [closeUp], strip)).toEqual([cutAtTheChest]);
    const eyes = { box: { x: 170, y: 40, width: 160, height: 100 }, score: 0.8 };
    expect(reportedPeople([eyes], [closeUp], strip)).toEqual([]);
  });

  it('gives a close-up face that no person box holds a head-and-shoulders person of its own, clamped to the picture', () => {
    const portrait = { width: 300, height: 400 };
    const closeUp = face(40, 60, 220, 240, 0.9);
    // Too small a share of the picture (under a quarter of its shorter side) to be a close-up.
    const distant = face(200, 20, 40, 40, 0.8);
    expect(withCloseUps([], [closeUp, distant], portrait)).toEqual([{ box: { x: 0, y: 0, width: 300, height: 400 }, score: 0.9 }]);
    // In a larger picture the box is about two faces wide and four face heights tall from above the brow.
    expect(withCloseUps([], [face(400, 200, 200, 220, 0.9)], { width: 800, height: 1400 })).toEqual([
      { box: { x: 280, y: 134, width: 440, height: 946 }, score: 0.9 },
    ]);
    // A face a person box already holds brings no one more.
    const held = { box: { x: 0, y: 0, width: 300, height: 400 }, score: 0.7 };
    expect(withCloseUps([held], [closeUp], portrait)).toEqual([held]);
  });

  it('gives each face to the most certain person whose box holds its centre, one face a person, and makes the box hold the face', () => {
    const person = (x: number, score: number) => ({ box: { x, y: 0, width: 100, height: 300 }, score });
    const faceAt = (x: number, score: number) => face(x, 20, 30, 30, score);
    const linked = linkFaces([faceAt(40, 0.9), faceAt(50, 0.8), faceAt(500, 0.7)], [person(0, 0.5), person(20, 0.6), person(700, 0.9)]);
    expect(linked.map((p) => p.face)).toEqual([1, 0, null]);
    // A person box grows to hold the whole of its face, and only then.
    const [low] = linkFaces([face(20, 10, 60, 60, 0.9)], [{ box: { x: 0, y: 30, width: 100, height: 300 }, score: 0.5 }]);
    expect(low).toEqual({ box: { x: 0, y: 10, width: 100, height: 320 }, score: 0.5, face: 0 });
    expect(linked[2].box).toEqual(person(700, 0.9).box);
  });

  it('leaves out a weak candidate reported for a face that the linking gives to a more certain person', () => {
    const picture = { width: 1000, height: 1000 };
    // The face lies at the weak candidate's head; the certain person's box holds it too, but it is too
    // small for that person's head (under a fifth of its width), so only the weak one is reported for it.
    const behind = face(100, 300, 40, 40, 0.9);
    const certain = { box: { x: 0, y: 0, width: 300, height: 600 }, score: 0.9 };
    const weak = { box: { x: 80, y: 280, width: 80, height: 200 }, score: 0.2 };
    expect(reportedPeople([certain, weak], [behind], picture)).toEqual([certain, weak]);
    expect(linkFaces([behind], [certain, weak])).toEqual([{ box: certain.box, score: 0.9, face: 0 }]);
    // With no one more certain holding it, the face stays with the weak candidate.
    expect(linkFaces([behind], [weak])).toEqual([{ box: weak.box, score: 0.2, face: 0 }]);
  });
});

describe('face detection worker', () => {
  it('runs in a process of its own while the event loop keeps ticking', async () => {
    const detector = createDetector();
    let ticks = 0;
    let counting = false;
    const timer = setInterval(() => {
      if (counting) ticks++;
    }, 1);
    try {
      const workersBefore = spawned.length;
      const detection = facesOf(detector, astronaut);
      // The worker is started right before the request is posted to it.
      await vi.waitFor(() => expect(spawned.length).toBe(workersBefore + 1), { interval: 1 });
      counting = true;
      expectSingleFaceIn(await detection, ASTRONAUT_FACE);
      counting = false;
      expect(ticks).toBeGreaterThan(0);
    } finally {
      clearInterval(timer);
      await detector.close();
    }
  });

  it('rejects pending detections when the worker dies and starts a fresh worker for the next one', async () => {
    const detector = createDetector({ workers: 1 });
    try {
      const workersBefore = spawned.length;
      const first = facesOf(detector, astronaut);
      const second = facesOf(detector, camera);
      await vi.waitFor(() => expect(spawned.length).toBe(workersBefore + 1), { interval: 1 });
      // Both images decode before they reach the worker; kill it once it holds both.
      await vi.waitFor(() => expect(requests.get(spawned[workersBefore])).toBe(2), { interval: 1 });
      spawned[workersBefore].kill('SIGKILL');
      await expect(first).rejects.toThrow(/detection process stopped \(SIGKILL\)/);
      await expect(second).rejects.toThrow(/detection process stopped \(SIGKILL\)/);
      expectSingleFaceIn(await facesOf(detector, camera), CAMERA_FACE);
      expect(spawned.length).toBe(workersBefore + 2);
    } finally {
      await detector.close();
    }
  });

  it('spreads detections over its workers; a crash fails only the image it held, and close ends every worker', async () => {
    const detector = createDetector({ workers: 2 });
    try {
      const workersBefore = spawned.length;
      const first = facesOf(detector, astronaut);
      const second = facesOf(detector, camera);
      await vi.waitFor(() => expect(spawned.length).toBe(workersBefore + 2), { interval: 1 });
      const [crashing, surviving] = spawned.slice(workersBefore);
      await vi.waitFor(() => expect([requests.get(crashing), requests.get(surviving)]).toEqual([1, 1]), { interval: 1 });
      crashing.kill('SIGKILL');
      // Whichever image decoded first went to the first worker: that one fails, the other is found.
      const outcomes = await Promise.allSettled([first, second]);
      const failed = outcomes.filter((outcome) => outcome.status === 'rejected');
      expect(failed).toHaveLength(1);
      expect(String(failed[0].reason)).toMatch(/detection process stopped/);
      const [astronautOutcome, cameraOutcome] = outcomes;
      if (astronautOutcome.status === 'fulfilled') expectSingleFaceIn(astronautOutcome.value, ASTRONAUT_FACE);
      if (cameraOutcome.status === 'fulfilled') expectSingleFaceIn(cameraOutcome.value, CAMERA_FACE);
      // The next two go to the idle survivor and to a replacement for the crashed worker.
      const [again, more] = await Promise.all([facesOf(detector, astronaut), facesOf(detector, camera)]);
      expectSingleFaceIn(again, ASTRONAUT_FACE);
      expectSingleFaceIn(more, CAMERA_FACE);
      expect(spawned.length).toBe(workersBefore + 3);
      const running = spawned.slice(workersBefore + 1);
      const exited = running.map((worker) => new Promise((resolve) => worker.once('exit', resolve)));
      await detector.close();
      await Promise.all(exited);
    } finally {
      await detector.close();
    }
  });

  it('a detection process killed mid-run (close, a deadline) takes only itself down, never this process', async () => {
    // Worker threads running onnxruntime aborted the whole process when stopped mid-run.
    const detector = createDetector({ workers: 1 });
    await facesOf(detector, astronaut);
    const runs = Array.from({ length: 6 }, () =>
      facesOf(detector, camera).then(
        () => 'found',
        () => 'stopped',
      ),
    );
    await vi.waitFor(() => expect(requests.get(spawned.at(-1)!)).toBeGreaterThanOrEqual(3), { interval: 1 });
    await detector.close();
    expect(await Promise.all(runs)).toContain('stopped');
    const next = createDetector({ workers: 1 });
    try {
      expectSingleFaceIn(await facesOf(next, camera), CAMERA_FACE);
    } finally {
      await next.close();
    }
  });

  it('refuses to detect after close', async () => {
    const detector = createDetector();
    await detector.close();
    await expect(facesOf(detector, astronaut)).rejects.toThrow(/closed/);
  });
});

/** An image as the detection worker receives it: RGB shrunk to `side` on its longest side. */
async function detectionRaster(image: Buffer, minScore = 0.65, side = INPUT_SIZE): Promise<BlazeFaceRaster> {
  const { data, info } = await sharp(image)
    .flatten({ background: '#ffffff' })
    .toColourspace('srgb')
    .resize({ width: side, height: side, fit: 'inside' })
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { pixels: new Uint8Array(data), width: info.width, height: info.height, minScore };
}

describe('BlazeFace on several rasters at once', () => {
  // Same-shaped rasters run through the model as one batch: a mix-up of the batch's outputs would
  // give an image another image's faces. The mirrored astronaut has its face elsewhere, the coffee
  // cup none, the wide astronaut runs at another input shape.
  let rasters: BlazeFaceRaster[];
  beforeAll(async () => {
    await loadBlazeFace();
    rasters = await Promise.all([
      detectionRaster(astronaut),
      detectionRaster(await sharp(astronaut).flop().toBuffer()),
      detectionRaster(camera),
      detectionRaster(await sharp(fixture('coffee.png')).resize(512, 512, { fit: 'fill' }).toBuffer()),
      detectionRaster(await sharp(astronaut).extend({ right: 256, background: '#ffffff' }).toBuffer()),
    ]);
  });

  it('gives every raster its own faces, exactly as one at a time', async () => {
    const together = await detectBlazeFaces(rasters);
    const alone = [];
    for (const raster of rasters) alone.push((await detectBlazeFaces([raster]))[0]);
    expect(together).toEqual(alone);
    const [upright, mirrored, cameraman, cup, wide] = together;
    expect([upright.length, mirrored.length, cameraman.length, cup.length, wide.length]).toEqual([1, 1, 1, 0, 1]);
    // 512 px images at 192 px: 0.375 raster pixels per image pixel.
    const inRaster = (region: typeof ASTRONAUT_FACE) => shifted(region, 0, 0, INPUT_SIZE / 512);
    expectSingleFaceIn([{ box: roundOut(upright[0]), score: upright[0].score }], inRaster(ASTRONAUT_FACE));
    const mirroredFace = { ...ASTRONAUT_FACE, left: 512 - ASTRONAUT_FACE.right, right: 512 - ASTRONAUT_FACE.left };
    expectSingleFaceIn([{ box: roundOut(mirrored[0]), score: mirrored[0].score }], inRaster(mirroredFace));
    expectSingleFaceIn([{ box: roundOut(cameraman[0]), score: cameraman[0].score }], inRaster(CAMERA_FACE));
    expectSingleFaceIn([{ box: roundOut(wide[0]), score: wide[0].score }], shifted(ASTRONAUT_FACE, 0, 0, INPUT_SIZE / 768));
  });

  it('refuses a malformed raster before running any', async () => {
    const short = { ...rasters[0], pixels: rasters[0].pixels.subarray(1) };
    await expect(detectBlazeFaces([rasters[1], short])).rejects.toThrow(/expected 110592 RGB bytes, got 110591/);
    await expect(detectBlazeFaces([{ ...rasters[0], width: INPUT_SIZE + 1 }])).rejects.toThrow(/invalid raster size 193x192/);
  });
});

const scaled = (box: FaceBox, k: number): FaceBox => ({ x: box.x * k, y: box.y * k, width: box.width * k, height: box.height * k });

/** Whole pixels around a box, as faces.ts reports them. */
function roundOut(box: FaceBox): FaceBox {
  const x = Math.floor(box.x);
  const y = Math.floor(box.y);
  return { x, y, width: Math.ceil(box.x + box.width) - x, height: Math.ceil(box.y + box.height) - y };
}

describe("a region's doubtful faces, kept when the region mirrored shows them too", () => {
  // A 128 px region as a head region shows a small person: plain ground, sample2.jpg's second
  // person pasted with the face `width` px wide, its centre `offset` px from the region's.
  async function region(width: number, offset: number): Promise<BlazeFaceRaster & { face: FaceBox }> {
    const { bytes, face } = await demoPersonAt('sample2.jpg', 1, width);
    const [left, top] = [Math.round(64 + offset - face.x - face.width / 2), Math.round(64 + offset / 2 - face.y - face.height / 2)];
    const picture = await sharp({ create: { width: 128, height: 128, channels: 3, background: '#d8d0c0' } })
      .composite([{ input: bytes, left, top }])
      .png()
      .toBuffer();
    return { ...(await detectionRaster(picture, 0.5, 128)), face: { ...face, x: left + face.x, y: top + face.y } };
  }

  it('keeps a face scored from 0.5 to 0.6 that the mirror image shows from 0.5, and no other', async () => {
    await loadBlazeFace();
    // The model scores the first face 0.53 and its mirror image 0.75; the second 0.58 and its
    // mirror image 0.37 (each a real face: small faces score near the line either way).
    const [seenTwice, seenOnce] = await Promise.all([region(28, 20), region(26, -20)]);
    const atFace = (found: (FaceBox & { score: number })[], raster: typeof seenTwice) => found.filter((box) => iou(box, raster.face) >= 0.4);
    const plain = await detectBlazeFaces([seenTwice, seenOnce], 128);
    expect(atFace(plain[0]!, seenTwice).map(({ score }) => score >= 0.5 && score < 0.6)).toEqual([true]);
    expect(atFace(plain[1]!, seenOnce).map(({ score }) => score >= 0.5 && score < 0.6)).toEqual([true]);
    const confirmed = await detectConfirmedFaces([seenTwice, seenOnce], { minScore: 0.6, confirmScore: 0.5 }, 128);
    expect(confirmed[0]).toEqual(plain[0]);
    expect(atFace(confirmed[1]!, seenOnce)).toEqual([]);
    // With the line at 0.5 for all, as without the mirror image, both are kept as the model gives them.
    expect(await detectConfirmedFaces([seenTwice, seenOnce], { minScore: 0.5, confirmScore: 0.5 }, 128)).toEqual(plain);
  });
});

describe('detection worker protocol', () => {
  it('answers each request in turn, and a malformed one fails alone', async () => {
    const worker = fork(fileURLToPath(new URL('../../lib/images/detection-worker.mjs', import.meta.url)), [], { execArgv: [], serialization: 'advanced' });
    try {
      const answers = new Map<number, { ok: boolean; faces?: unknown[]; people?: unknown[]; error?: string }>();
      const allAnswered = new Promise<void>((resolve, reject) => {
        worker.on('message', (message: { id?: number; fatal?: string; ok: boolean }) => {
          if (message.fatal) reject(new Error(message.fatal));
          // Only answers carry an id: the process also says when it is ready and when it starts a
          // request, and counting those ended the wait one answer early (on a loaded machine, before the last).
          if (message.id === undefined) return;
          answers.set(message.id, message);
          if (answers.size === 7) resolve();
        });
      });
      const [upright, cameraman] = await Promise.all([detectionRaster(astronaut), detectionRaster(camera)]);
      const coarse = (raster: BlazeFaceRaster) => ({
        stage: 'coarse',
        faceRaster: raster,
        peopleRaster: raster,
        faceScore: 0.65,
        personScore: 0.3,
        personLimit: 10,
      });
      worker.send({ id: 1, ...coarse(upright) });
      worker.send({ id: 2, ...coarse({ ...upright, pixels: upright.pixels.subarray(3) }) });
      worker.send({ id: 3, stage: 'fine', regions: [cameraman], faceScore: 0.65, confirmScore: 0.5 });
      worker.send({ id: 4, stage: 'sideways' });
      // The people pass takes at most 1024 px a side (faces.ts sends a wide picture at that size at most).
      worker.send({ id: 5, ...coarse(upright), peopleRaster: { width: 1025, height: 1, pixels: new Uint8Array(1025 * 3) } });
      // The whole-picture face pass at most 384 (a wide picture's), no longer 192.
      worker.send({ id: 6, ...coarse(upright), faceRaster: { width: 385, height: 1, pixels: new Uint8Array(385 * 3) } });
      worker.send({ id: 7, stage: 'fine', regions: [cameraman], faceScore: 0.65 });
      await allAnswered;
      await loadBlazeFace();
      const [alone] = await detectBlazeFaces([upright]);
      expect(answers.get(1)).toMatchObject({ id: 1, ok: true, faces: alone, people: [expect.objectContaining({ score: expect.any(Number) })] });
      expect(answers.get(2)).toEqual({ id: 2, ok: false, error: 'expected 110592 RGB bytes, got 110589' });
      expect(answers.get(3)).toEqual({ id: 3, ok: true, faces: await detectBlazeFaces([cameraman], 256) });
      expect(answers.get(4)).toEqual({ id: 4, ok: false, error: 'unknown stage sideways' });
      expect(answers.get(5)).toEqual({ id: 5, ok: false, error: 'invalid raster size 1025x1 (at most 1024 a side)' });
      expect(answers.get(6)).toEqual({ id: 6, ok: false, error: 'invalid raster size 385x1 (at most 384 a side)' });
      expect(answers.get(7)).toEqual({ id: 7, ok: false, error: 'confirmScore must be from 0 to minScore, and minScore at most 1: got undefined and 0.65' });
    } finally {
      worker.kill('SIGKILL');
    }
  });
});

describe('cropFaces', () => {
  it('crops each box independently: bad boxes fail alone, good boxes still get their JPEG', async () => {
    const good = face(163, 75, 117, 112, 0.97);
    const outside = face(5000, 5000, 50, 50, 0.9);
    const degenerate = face(100, 100, 0, 40, 0.8);
    const notANumber = face(Number.NaN, 10, 40, 40, 0.7);
    const results = await cropFaces(astronaut, [outside, good, degenerate, notANumber]);
    expect(results.map((result) => [result.face, result.ok])).toEqual([
      [outside, false],
      [good, true],
      [degenerate, false],
      [notANumber, false],
    ]);
    const [outsideResult, goodResult, degenerateResult] = results;
    if (outsideResult.ok || !goodResult.ok || degenerateResult.ok) throw new Error('unexpected crop outcome');
    expect(outsideResult.error).toMatch(/outside the 512x512 image/);
    expect(degenerateResult.error).toMatch(/degenerate/);
    const metadata = await sharp(goodResult.bytes).metadata();
    expect(metadata.format).toBe('jpeg');
    // The margin grows the crop beyond the box on every side that has room.
    expect(metadata.width).toBeGreaterThan(117);
    expect(metadata.height).toBeGreaterThan(112);
  });

  it('clamps a crop at the image edge', async () => {
    const [result] = await cropFaces(astronaut, [face(480, 490, 100, 100, 0.9)]);
    if (!result.ok) throw new Error(result.error);
    const { width, height } = await sharp(result.bytes).metadata();
    expect([width, height]).toEqual([512 - 460, 512 - 470]);
  });

  it('crops the face itself, from the displayed orientation, without the source metadata', async () => {
    const stored = await sharp(astronaut)
      .rotate(270)
      .jpeg()
      .withMetadata({ orientation: 6 })
      .withExifMerge({ IFD0: { Artist: 'someone', Copyright: 'someone' } })
      .toBuffer();
    expect((await sharp(stored).metadata()).exif).toBeDefined();
    const detector = createDetector();
    try {
      const faces = await facesOf(detector, stored);
      const [crop] = await cropFaces(stored, faces);
      if (!crop.ok) throw new Error(crop.error);
      const metadata = await sharp(crop.bytes).metadata();
      expect(metadata.exif).toBeUndefined();
      expect(metadata.xmp).toBeUndefined();
      expect(metadata.orientation).toBeUndefined();
      // Upright and centred on the face: the detector finds it again in the crop.
      const again = await facesOf(detector, crop.bytes);
      expect(again).toHaveLength(1);
      const { x, y } = centre(again[0].box);
      expect(Math.abs(x - metadata.width / 2)).toBeLessThan(metadata.width / 4);
      expect(Math.abs(y - metadata.height / 2)).toBeLessThan(metadata.height / 4);
    } finally {
      await detector.close();
    }
  });

  it('gives every box the decode error when the image itself is corrupt', async () => {
    const boxes = [face(0, 0, 10, 10, 0.9), face(20, 20, 10, 10, 0.8)];
    const results = await cropFaces(Buffer.from('garbage'), boxes);
    expect(results).toEqual(boxes.map((box) => ({ face: box, ok: false, error: 'not an image' })));
  });
});
