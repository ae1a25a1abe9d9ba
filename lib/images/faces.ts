import os from 'node:os';
import { decodeDetail, decodeForAnalysis, fromRaster, type AnalysisRaster, type Area, type DetailRaster } from './analysis-raster.js';
import { clamp, iou, overlap, suppress } from './boxes.mjs';
import { createDetectionProcesses } from './detection-processes.js';
import { regionRaster, type Raster } from './region-raster.js';

export { iou };

/** Integer pixels in the EXIF-oriented original image (SVG: as sharp rasterises it). */
export interface FaceBox {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** `score` is the detector's confidence, 0-1. */
export interface Face {
  box: FaceBox;
  score: number;
}

/** A person, whole or partial body, with the face found inside its box (an index into `faces`). */
export interface Person {
  box: FaceBox;
  score: number;
  face: number | null;
}

/** Faces and people in one picture; `notes` says which cap was reached, if any. */
export interface Detections {
  faces: Face[];
  people: Person[];
  notes: string[];
}

export interface Detector {
  /**
   * Faces and people in image bytes. `raster` is the analysis raster an analysis already decoded
   * for its other uses (decoded here when not given). Rejects with `ImageRejected` when the bytes
   * cannot be decoded; the detector stays usable.
   */
  detect(image: Buffer, raster?: AnalysisRaster): Promise<Detections>;
  close(): Promise<void>;
}

export interface DetectorOptions {
  /** Detection processes, each with its own copy of the models (default: one per core). */
  workers?: number;
  /** Decompression-bomb guard passed to every decode, as in `decodeOptions`. */
  maxPixels?: number;
  /** How long one request may wait for its worker before the worker is dropped (default 10 s). */
  deadlineMs?: number;
  /** Caps on the work one picture may take (defaults DEFAULT_LIMITS). */
  limits?: Partial<Limits>;
}

/** Caps that bound the work on a crowd or a noise picture: a picture with more finds that many and says so in its notes. */
interface Limits {
  /** People reported. */
  people: number;
  /** Regions searched again for a face (people's heads, then the faces the first pass was unsure of). */
  regions: number;
  /** Faces reported. */
  faces: number;
}

const DEFAULT_LIMITS: Limits = { people: 100, regions: 48, faces: 300 };

/** The first pass, on the whole picture (one request: faces and person candidates). */
const WHOLE_PICTURE = {
  // BlazeFace sees the picture at 288 px on its longer side, or 192 on its shorter where that is
  // more, at most 384 on the longer: it finds faces from about a fifteenth of the picture's longer
  // side up, and boxes as unsure (UNSURE_FACE) the ones a little smaller. On the tuning sets
  // (bench/faces.ts, BENCH_FACES_TUNING=1; 185 faces) 192 / 256 / 288 / 320 / 384 px on the longer
  // side (128 / 171 / 192 / 213 / 256 on the shorter) found 115 / 120 / 126 / 128 / 130 faces at
  // precision 0.99 / 0.98 / 0.99 / 0.97 / 0.97; 256 lost a fixture face, 320 and 384 gave false
  // ones on the fixtures; the people moved by one at most. 288 costs about 2 CPU ms more a 1-2 MP
  // picture than 192 (decisions/0066). At 192 px the weakest labelled face of
  // test/fixtures/faces/labels.json BlazeFace found above 0.65 scored 0.73 and the next one down
  // 0.50; the best boxes on no labelled face 0.68 and 0.65, the cup in coffee.png 0.60, the cat in
  // chelsea.png 0.59. A wide picture is seen larger (decisions/0064 gives the sides tried then).
  faceSize: { side: 288, shortSide: 192, maxSide: 384 },
  minScore: 0.65,
  // MoveNet MultiPose's person detector on the picture at this longer side (never enlarged: the
  // analysis raster is 384x256 for a 3:2 photograph). At 224 px a person under about an eighth of
  // the picture's height was below what the model sees. On the tuning person set
  // (test/fixtures/people/tuning-set.json, with the rules below) 224 / 320 / 352 / 384 px found 43 /
  // 57 / 63 / 63 of 82 people (precision 0.93 / 0.90 / 0.90 / 0.91) and, through the head regions,
  // 99 / 102 / 108 / 106 of 185 tuning faces; at 352 the head region of a 240 px astronaut
  // (faces.test.ts) came out too loose for its face and a re-encoded rocket.jpg had a face in its
  // exhaust. The model's cost grows with its input's pixels: 384x256 is 2.7 times 224x160. Tiles
  // of 224 px over the 384 px raster, with the whole picture at 224, found 63 from 0.4 at
  // precision 0.80 (a person cut by a tile's edge is a box of its own) for more cost.
  //
  // A picture wider than 2:1 is seen larger, with 192 px on its shorter side, at most 1024 on the
  // longer: at 384 px a 4:1 panorama is 96 px tall, its people less. On wide bands of the tuning
  // photographs (bench/faces.ts; 2.5, 3.5 and 4.5:1, 135 people) it found 99 people where 384 px on
  // the longer side found 91 and 256 px on the shorter 97; the tuning person set found 64 of 82
  // (63 before). The run's cost grows with the input's pixels: 768x192 for a 4:1 panorama is 1.5
  // times a 3:2 picture's 384x256, 1024x192 twice (decisions/0064 gives the sides tried).
  peopleSize: { side: 384, shortSide: 192, maxSide: 1024 },
} as const;

/** Which person candidates are reported as people. */
const PERSON = {
  // Candidates scoring below this are not reported on their own: at 384 px, on the 17 tuning
  // pictures of no one (animals, objects, the coffee cup of coffee.png at 0.60) 0.3 gave 12 person
  // boxes and 0.4 gives 4 (as 0.5 did at 224, the cat of chelsea.png at 0.71 among them); on the
  // tuning person set 0.4 found 63 of 82 people at precision 0.91, 0.5 found 56 at 0.86.
  score: 0.4,
  // A weaker candidate is reported as a person when a face was found where its head would be, at
  // least this share of its box's width (decisions/0037): with the people pass at 224 px, on the
  // tuning sets 61 of the 76 labelled faces of 24 px or more then had a person box of their own (52
  // from 0.5 alone) and 35 of 95
  // pasted head and shoulders (3), with 4 person boxes on the pictures of no one (3: a false face
  // on an object brings its candidate along). A face vouches for one candidate only: the weaker
  // peaks around a person already found gave 2 more boxes on the tuning photographs, none a person
  // of its own. At 384 px it adds 2 of the tuning person set's 63 people found and costs precision
  // (0.90 against 0.95 without it).
  faceShare: 0.2,
  // Weaker candidates are not reported, but their head regions are still searched for a face: a
  // small person in a group photograph often scores low while its face is plain to see up close
  // (tuning sets, people pass at 224 px: 91 faces of 185 with candidates from 0.1, 76 from 0.2, 68
  // from 0.3). 0.11 since the backbone runs in 8 bits (decisions/0070): a new candidate of 0.101 in
  // rocket.jpg re-encoded at quality 80 had a face in its exhaust (0.65); 123 tuning faces against
  // 124 from 0.1.
  candidateScore: 0.11,
  maxCandidates: 200,
  // A face at least this share of the picture's shorter side is a close-up. At 384 px the model
  // puts a flat box across the eyes of a face that fills the picture, where at 224 px it had seen
  // the body (head-and-shoulders portraits: 7 of the tuning person set's 82 people): a candidate
  // holding a close-up's centre is a person only when it is at least `faceHeights` of that face's
  // heights tall, and a close-up that no person box holds has the head and shoulders around it as
  // its person (closeUpPerson). On the tuning person set the two found 6 of the 7. A small face in
  // a large picture is left to the candidates: a person cut at the shoulders is about as tall as
  // its face.
  closeUpShare: 0.25,
  faceHeights: 1.5,
  // ...unless the candidate reaches within this share of the picture's height of its bottom: the
  // frame cuts that person, so the box's height says nothing of whether it is a body (a woman cut
  // at the chest in a 506x174 screenshot, and one at the foot of another, were dropped as eyes). On
  // the tuning person set within 0.02 / 0.05 / 0.1 / 0.15 / 0.25 found 64 / 65 / 66 / 66 / 66 of
  // 82 people (64 at precision 0.91 without it; 0.93 from 0.05), the wide bands 39 / 40 / 40 / 40 /
  // 40 of 49 (39); no face changed (bench/faces.ts, BENCH_FACES_TUNING=1).
  cutShare: 0.1,
} as const;

/** The second pass, on the head region of each person candidate the first pass saw too small. */
const HEAD_REGION = {
  // Each region is searched again at this many pixels on its longer side, where a head (about 40 %
  // of a standing person's box width) is 40-50 px: BlazeFace finds faces from about 24 px at its
  // input (faces pasted at known sizes: 24 px 11 of 12, 16 px 5 of 12). On the tuning sets 128 px
  // found 101 faces of 185, 96 px 90, 160 px 102 with more false ones. With the people pass at
  // 384 px, candidates from 0.05 find 113 against 106 (all 7 in the pasted set, none among the
  // Debian photographs) for 10-13 % more detection cost (the bench's medians per size band). A
  // group photograph's seated or close people have boxes wide for their heads, so some faces come
  // out under 24 px at 128 (aug18.jpg's 70 px faces at 16-17): at 160 px the tuning sets gave 106
  // faces at precision 0.92 (0.99 at 128), at 192 px 113 at 0.96 and 62 of 82 people (64), about
  // 10 CPU ms more a 1-2 MP picture; at 192 px from 0.7, 106 at 0.97.
  side: 128,
  // A region's faces count from this score, a little below the whole picture's (a person detector
  // already said someone may be there): at 0.5 a re-encoded rocket.jpg had a face at 0.54 in the
  // exhaust; 0.55 and 0.6 each find 99 tuning faces of 185 against 100 at 0.5.
  faceScore: 0.6,
  // ...and from this score when the region mirrored shows the face too (detectConfirmedFaces). On
  // the tuning sets (BENCH_FACES_TUNING=1, 185 faces) 0.45 / 0.5 / 0.55 found 127 / 127 / 122 in
  // 130 / 128 / 123 boxes, against 122 in 123 without it; the 5 are pasted heads and shoulders
  // (4 under 32 px). Without the mirror, 0.5 had found 5 more for 4 more false boxes (docs/faces.md).
  confirmScore: 0.5,
  // Only a candidate from this score gets a larger decode of the file for its head region: on the
  // tuning sets 0.2 found 100 faces of 185 against 101 for every candidate, and on 24 evaluation
  // photographs without people (1600x1000) detection cost 29.7 CPU ms a picture against 35.4.
  detailScore: 0.2,
} as const;

/** The third source of regions: faces the whole-picture pass saw but was unsure of. */
const UNSURE_FACE = {
  // A face a few pixels wide at the whole-picture pass scores low there, and a head region
  // finds it only when the people pass saw its person (not so for heads and shoulders without a
  // body, or people behind others or a table). A face that pass scores from this up to
  // WHOLE_PICTURE.minScore is searched again up close, as a head region is, when its region shows it
  // larger than that pass did. On the tuning sets (bench/faces.ts, BENCH_FACES_TUNING=1; 185 faces,
  // 106 found without it, the pass then at 192 px) from 0.4 / 0.3 / 0.25 / 0.2 / 0.15 it found
  // 109 / 113 / 117 / 117 / 124 at precision 0.99 (0.98 at 0.15), no person found or lost; below
  // 0.25 every picture has more regions (at 0.15 the bench's cost medians rose 14 % for 1-2 MP
  // pictures and doubled over 2 MP). At 288 px 0.3 / 0.35 / 0.4 found 123 / 119 / 118 against 126;
  // with the 7-bit people model and boxes grown 1.5 times (before decisions/0073) 0.2 / 0.15 found
  // 127 / 128 against 122 at 1-2 MP cost 6 % higher, and no more held-out faces (docs/faces.md).
  score: 0.25,
  // An unsure box narrower than this many pixels at the whole-picture pass is not searched: it is
  // below any face BlazeFace sees (faces pasted 16 px wide at its input: 5 of 12 found). Such a box
  // on a 6 MP robotics team photograph made the region's decode the whole file at full size, 85 ->
  // 311 CPU ms; the 2 tuning faces of 117 that decode's pixels found through head regions are lost.
  // With the pass at 288 px, 10 and 12 px found 126 and 124 tuning faces (8: 126) for no less cost.
  minWidth: 8,
  // The region is a square this many times the unsure box across, around it: at HEAD_REGION.side
  // the face is then about 40 px wide. 2.5 found the same 117 tuning faces, 4 found 115 at 0.97.
  widths: 3,
} as const;

const DEFAULT_DEADLINE_MS = 10_000;
const DEFAULT_IOU_THRESHOLD = 0.5;

/** Greedy non-maximum suppression: the highest-scoring box of each overlapping group survives. */
export function dedupeFaces<T extends { box: FaceBox; score: number }>(faces: T[], iouThreshold = DEFAULT_IOU_THRESHOLD): T[] {
  return suppress(
    faces.map((face) => ({ ...face.box, score: face.score, face })),
    iouThreshold,
  ).map(({ face }) => face);
}

// A less certain face lying at least this share inside a more certain one is the same face: a
// head region and the whole picture can box one face at two scales, one box inside the other, under
// IoU 0.5 (the astronaut's head alone, 120-140 px wide in a 1600x1000 picture). Two faces cannot
// be nested so: the one behind is hidden. No labelled set changes (bench/faces.ts).
const NESTED_SHARE = 0.7;

/** The faces (most certain first, as dedupeFaces leaves them) without any lying mostly inside a more certain one. */
export function withoutNested<T extends { box: FaceBox }>(faces: T[]): T[] {
  return faces.filter(({ box }, i) => !faces.slice(0, i).some((other) => overlap(box, other.box) >= NESTED_SHARE * box.width * box.height));
}

/**
 * The whole-picture pass's boxes (seen at `faceScale` of the picture) split into faces, from
 * WHOLE_PICTURE.minScore, and the unsure ones to search again (UNSURE_FACE: those under that score,
 * at least UNSURE_FACE.minWidth px wide at the pass).
 */
export function bySureness(seen: Face[], faceScale: number): { faces: Face[]; unsure: Face[] } {
  return {
    faces: seen.filter(({ score }) => score >= WHOLE_PICTURE.minScore),
    unsure: seen.filter(({ score, box }) => score < WHOLE_PICTURE.minScore && box.width * faceScale >= UNSURE_FACE.minWidth),
  };
}

type WorkerBox = FaceBox & { score: number };
type CoarseAnswer = { faces: WorkerBox[]; people: WorkerBox[] };
type FineAnswer = { faces: WorkerBox[][] };
/** A region of the picture, in whole pixels of the upright original. */
type Region = Area;

/** The smallest region holding all of these (at least one). */
function union(regions: Region[]): Region {
  const left = Math.min(...regions.map((r) => r.left));
  const top = Math.min(...regions.map((r) => r.top));
  const right = Math.max(...regions.map((r) => r.left + r.width));
  const bottom = Math.max(...regions.map((r) => r.top + r.height));
  return { left, top, width: right - left, height: bottom - top };
}

/** How large a pass sees a picture: `side` px on its longer side, or `shortSide` on its shorter where that is more, at most `maxSide`. */
interface PassSize {
  side: number;
  shortSide: number;
  maxSide: number;
}

const passSide = (longer: number, shorter: number, { side, shortSide, maxSide }: PassSize) =>
  Math.max(side, Math.min(maxSide, Math.round((longer * shortSide) / shorter)));

/** The longer sides at which the whole-picture passes see a raster of this size (WHOLE_PICTURE). */
export function wholePictureSides({ width, height }: { width: number; height: number }): { faces: number; people: number } {
  const [longer, shorter] = [Math.max(width, height), Math.min(width, height)];
  return { faces: passSide(longer, shorter, WHOLE_PICTURE.faceSize), people: passSide(longer, shorter, WHOLE_PICTURE.peopleSize) };
}

/**
 * The analysis raster shrunk to `side` on its longer side (no decode, never enlarged). A raster that
 * fits is passed as it is: a sharp pipeline would copy it twice to give the same pixels (the people
 * pass's 384 px holds the analysis raster of every picture up to 3:2).
 */
async function shrunk(image: AnalysisRaster, side: number): Promise<Raster> {
  if (image.width <= side && image.height <= side) return { pixels: image.pixels, width: image.width, height: image.height };
  const { data, info } = await fromRaster(image)
    .resize({ width: side, height: side, fit: 'inside', withoutEnlargement: true })
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { pixels: data, width: info.width, height: info.height };
}

/**
 * A box found in a raster that shows `region` of the picture, in whole pixels of the picture,
 * clamped to it; null when nothing of it is left inside.
 */
function toPicture(found: WorkerBox, raster: { width: number; height: number }, region: Region, picture: { width: number; height: number }) {
  const scaleX = region.width / raster.width;
  const scaleY = region.height / raster.height;
  const left = clamp(Math.floor(region.left + found.x * scaleX), 0, picture.width);
  const top = clamp(Math.floor(region.top + found.y * scaleY), 0, picture.height);
  const right = clamp(Math.ceil(region.left + (found.x + found.width) * scaleX), 0, picture.width);
  const bottom = clamp(Math.ceil(region.top + (found.y + found.height) * scaleY), 0, picture.height);
  if (right - left < 1 || bottom - top < 1) return null;
  return { box: { x: left, y: top, width: right - left, height: bottom - top }, score: Math.round(clamp(found.score, 0, 1) * 10_000) / 10_000 };
}

/** The whole pixels from `left`, `top` to `right`, `bottom` that lie in the picture, at least one. */
function regionIn(left: number, top: number, right: number, bottom: number, picture: { width: number; height: number }): Region {
  const x = clamp(Math.floor(left), 0, picture.width - 1);
  const y = clamp(Math.floor(top), 0, picture.height - 1);
  const width = clamp(Math.ceil(right), x + 1, picture.width) - x;
  return { left: x, top: y, width, height: clamp(Math.ceil(bottom), y + 1, picture.height) - y };
}

/** Where an unsure face is searched again: a square UNSURE_FACE.widths times its box, around its centre. */
function aroundFace(face: FaceBox, picture: { width: number; height: number }): Region {
  const half = (Math.max(face.width, face.height) * UNSURE_FACE.widths) / 2;
  const [x, y] = [face.x + face.width / 2, face.y + face.height / 2];
  return regionIn(x - half, y - half, x + half, y + half, picture);
}

/**
 * Where a person's face would be: the top of the box, as wide as the box and about as tall, with a
 * margin (a raised hand or a tilted head reaches past the box).
 */
export function headRegion(person: FaceBox, picture: { width: number; height: number }): Region {
  const margin = person.width * 0.1;
  const bottom = person.y + Math.min(person.height, person.width * 1.2) + margin;
  return regionIn(person.x - margin, person.y - margin, person.x + person.width + margin, bottom, picture);
}

/**
 * The first face not yet taken that lies where this person's would be: its centre in the head
 * region, and its width a plausible share of the box's (a head is about 40 % of a standing
 * person's width; a face much smaller belongs to someone behind). -1 when there is none.
 */
function faceAtHead(person: FaceBox, faces: Face[], taken: Set<number>, picture: { width: number; height: number }): number {
  const head = headRegion(person, picture);
  const area = { x: head.left, y: head.top, width: head.width, height: head.height };
  return faces.findIndex(
    ({ box }, index) => !taken.has(index) && holdsCentre(area, box) && box.width >= person.width * PERSON.faceShare && box.width <= person.width,
  );
}

/** Whether `outer` holds the centre of `inner`. */
function holdsCentre(outer: FaceBox, inner: FaceBox): boolean {
  const x = inner.x + inner.width / 2;
  const y = inner.y + inner.height / 2;
  return x >= outer.x && x <= outer.x + outer.width && y >= outer.y && y <= outer.y + outer.height;
}

/** A face filling much of the picture: see PERSON.closeUpShare. */
function isCloseUp(face: FaceBox, picture: { width: number; height: number }): boolean {
  return face.width >= PERSON.closeUpShare * Math.min(picture.width, picture.height);
}

/** A box too short for the close-up it holds is the people model seeing a face, not a body, unless the frame cuts it (PERSON.cutShare). */
function tooShortForItsFace(person: FaceBox, faces: Face[], picture: { width: number; height: number }): boolean {
  if (person.y + person.height >= picture.height * (1 - PERSON.cutShare)) return false;
  return faces.some(({ box }) => isCloseUp(box, picture) && holdsCentre(person, box) && person.height < box.height * PERSON.faceHeights);
}

/**
 * The person candidates reported, most certain first: every one from PERSON.score, and a weaker
 * one only with a face at its head that no more certain candidate has taken (a face vouches for
 * one person: the weaker peaks around someone already found do not become people of their own);
 * none that is too short for a close-up face it holds (PERSON.closeUpShare).
 */
export function reportedPeople<T extends { box: FaceBox; score: number }>(candidates: T[], faces: Face[], picture: { width: number; height: number }): T[] {
  const taken = new Set<number>();
  return [...candidates]
    .sort((a, b) => b.score - a.score)
    .filter((candidate) => {
      if (tooShortForItsFace(candidate.box, faces, picture)) return false;
      const face = faceAtHead(candidate.box, faces, taken, picture);
      if (face >= 0) taken.add(face);
      return candidate.score >= PERSON.score || face >= 0;
    });
}

/**
 * The people reported, then one for each close-up face no person box holds: a face of at least
 * PERSON.closeUpShare of the picture's shorter side, whose person is the head and shoulders around
 * it, as wide as about two faces and down to four face heights below its top (clamped), with the
 * face's score.
 */
export function withCloseUps<T extends { box: FaceBox; score: number }>(people: T[], faces: Face[], picture: { width: number; height: number }) {
  const closeUps = faces
    .filter(({ box }) => isCloseUp(box, picture))
    .filter(({ box }) => !people.some((person) => holdsCentre(person.box, box)))
    .map(({ box, score }) => ({ box: closeUpPerson(box, picture), score }));
  return [...people, ...closeUps];
}

function closeUpPerson(face: FaceBox, picture: { width: number; height: number }): FaceBox {
  const left = clamp(Math.floor(face.x - face.width * 0.6), 0, picture.width);
  const top = clamp(Math.floor(face.y - face.height * 0.3), 0, picture.height);
  const right = clamp(Math.ceil(face.x + face.width * 1.6), 0, picture.width);
  const bottom = clamp(Math.ceil(face.y + face.height * 4), 0, picture.height);
  return { x: left, y: top, width: right - left, height: bottom - top };
}

/**
 * Each face is given to the most certain person whose box holds its centre and who has none yet,
 * and that box grows to hold the whole face: a person's visible extent has its face in it (at
 * 384 px the people model's box on a person filling the picture can start below the brow). A
 * candidate under PERSON.score was reported only for the face at its head (reportedPeople); when
 * that face goes to a more certain person whose box holds it, nothing speaks for the weaker one,
 * and it is left out (on the tuning person set one false box fewer, no person lost; the held-out
 * set's boxes are the same).
 */
export function linkFaces(faces: Face[], people: { box: FaceBox; score: number }[]): Person[] {
  const linked: Person[] = people.map((person) => ({ ...person, face: null }));
  const byScore = [...linked].sort((a, b) => b.score - a.score);
  faces.forEach((face, index) => {
    const holder = byScore.find(({ box, face: taken }) => taken === null && holdsCentre(box, face.box));
    if (!holder) return;
    holder.face = index;
    holder.box = enclosing(holder.box, face.box);
  });
  return linked.filter((person) => person.face !== null || person.score >= PERSON.score);
}

/** The smallest box holding both. */
function enclosing(a: FaceBox, b: FaceBox): FaceBox {
  const x = Math.min(a.x, b.x);
  const y = Math.min(a.y, b.y);
  return { x, y, width: Math.max(a.x + a.width, b.x + b.width) - x, height: Math.max(a.y + a.height, b.y + b.height) - y };
}

/**
 * Detection runs in child processes, one per core by default (detection-processes.ts), so the
 * event loop stays free, every core can run the models and a crash in their native code ends only
 * its own process.
 *
 * A picture takes three steps: BlazeFace on the whole picture at WHOLE_PICTURE.faceSize and the
 * people model at WHOLE_PICTURE.peopleSize (one request), then BlazeFace again on the head region of
 * every person the first pass could not have seen a face in at that size and around every face it
 * was unsure of (UNSURE_FACE; a second request), read from the analysis raster or, when that is too
 * coarse for a small face, from a larger decode of the file.
 */
export function createDetector(options: DetectorOptions = {}): Detector {
  const workerCount = options.workers ?? os.availableParallelism();
  if (!(Number.isInteger(workerCount) && workerCount >= 1)) throw new RangeError(`workers must be a whole number from 1, got ${workerCount}`);
  const deadline = options.deadlineMs ?? DEFAULT_DEADLINE_MS;
  const limits: Limits = { ...DEFAULT_LIMITS, ...options.limits };
  const processes = createDetectionProcesses(workerCount, deadline);

  /**
   * The regions to search again, with their rasters: the head regions of the people the
   * whole-picture face pass (at `faceScale` of the picture) saw too small, most certain first, then
   * the faces it was unsure of, each with the score of the person or face it comes from.
   */
  async function regionRasters(bytes: Buffer, raster: AnalysisRaster, people: Face[], unsure: Face[], faceScale: number, notes: string[]) {
    const picture = { width: raster.originalWidth, height: raster.originalHeight };
    const analysisScale = raster.width / picture.width;
    const wanted = [
      ...people.map(({ box, score }) => ({ score, region: headRegion(box, picture) })),
      ...unsure.map(({ box, score }) => ({ score, region: aroundFace(box, picture) })),
    ].filter(({ region }) => Math.max(region.width, region.height) * faceScale < HEAD_REGION.side);
    if (wanted.length > limits.regions)
      notes.push(`faces were looked for in ${limits.regions} of ${wanted.length} regions only (people's heads first, most certain first)`);
    const chosen = wanted.slice(0, limits.regions);
    // A region has enough pixels in the analysis raster with half HEAD_REGION.side there. Otherwise the
    // file is decoded again, large enough for the smallest region, but only for a region whose
    // candidate or unsure face scores from HEAD_REGION.detailScore (every unsure face does): weak
    // candidates are mostly noise in pictures of no one, and the decode is the larger part of their
    // cost; a weak one too coarse for the analysis raster waits for a decode made for a stronger
    // one, or is not searched. Only the part of the file that holds the regions
    // is decoded (on the tuning sets 233 CPU ms for the 16 decodes against 336 for whole ones), and
    // every region is read from it, as from the better pixels.
    const coarse = (region: Region) => Math.max(region.width, region.height) * analysisScale < HEAD_REGION.side / 2;
    const detailed = chosen.filter(({ score, region }) => coarse(region) && score >= HEAD_REGION.detailScore).map(({ region }) => region);
    const smallest = Math.min(...detailed.map((region) => Math.max(region.width, region.height)));
    const part = union(chosen.map(({ region }) => region));
    const detail = detailed.length ? await decodeDetail(bytes, Math.min(1, HEAD_REGION.side / smallest), part, options.maxPixels) : null;
    const source: DetailRaster = detail ?? { ...raster, area: { left: 0, top: 0, ...picture } };
    const regions = chosen.map(({ region }) => region).filter((region) => detail || !coarse(region));
    return { regions, rasters: regions.map((region) => regionRaster(source, region, HEAD_REGION.side)) };
  }

  return {
    async detect(image, given) {
      // Refused before the picture is decoded; the processes refuse a request after close too.
      if (processes.closed) throw new Error('the detector is closed');
      const raster = given ?? (await decodeForAnalysis(image, options.maxPixels));
      const picture = { width: raster.originalWidth, height: raster.originalHeight };
      const whole = { left: 0, top: 0, ...picture };
      const sides = wholePictureSides(raster);
      const [faceRaster, peopleRaster] = await Promise.all([shrunk(raster, sides.faces), shrunk(raster, sides.people)]);
      const coarse = await processes.run<CoarseAnswer>({
        stage: 'coarse',
        faceRaster,
        peopleRaster,
        faceScore: UNSURE_FACE.score,
        personScore: PERSON.candidateScore,
        personLimit: PERSON.maxCandidates,
      });
      const candidates = dedupeFaces(coarse.people.map((found) => toPicture(found, peopleRaster, whole, picture)).filter((found) => found !== null));
      const notes: string[] = [];
      const seen = coarse.faces.map((found) => toPicture(found, faceRaster, whole, picture)).filter((found) => found !== null);
      const faceScale = faceRaster.width / picture.width;
      const { faces: sure, unsure } = bySureness(seen, faceScale);
      const { regions, rasters } = await regionRasters(image, raster, candidates, unsure, faceScale, notes);
      const { faceScore, confirmScore } = HEAD_REGION;
      const fine = rasters.length
        ? (await processes.run<FineAnswer>({ stage: 'fine', regions: rasters, faceScore, confirmScore })).faces.flatMap((found, i) =>
            found.map((face) => toPicture(face, rasters[i]!, regions[i]!, picture)),
          )
        : [];
      const kept = withoutNested(dedupeFaces([...sure, ...fine.filter((face) => face !== null)]));
      if (kept.length > limits.faces) notes.push(`only the ${limits.faces} most certain of ${kept.length} faces were kept`);
      const found = kept.slice(0, limits.faces);
      const people = withCloseUps(reportedPeople(candidates, found, picture), found, picture);
      if (people.length > limits.people) notes.unshift(`only the ${limits.people} most certain of ${people.length} people were kept`);
      return { faces: found, people: linkFaces(found, people.slice(0, limits.people)), notes };
    },
    close: () => processes.close(),
  };
}
