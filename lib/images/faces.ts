import os from 'node:os';
import { Worker } from 'node:worker_threads';
import sharp, { type Metadata } from 'sharp';
import { decodeForAnalysis, fromRaster, type AnalysisRaster } from './analysis-raster.js';
import { decodeFailure, decodeOptions } from './decode.js';

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

export interface FaceDetector {
  /**
   * Faces in image bytes, or in the analysis raster an analysis already decoded for its other
   * uses. Rejects with `ImageRejected` when the bytes cannot be decoded; the detector stays usable.
   */
  detect(image: Buffer | AnalysisRaster): Promise<Face[]>;
  close(): Promise<void>;
}

export type FaceCrop = { face: Face; ok: true; bytes: Buffer } | { face: Face; ok: false; error: string };

export interface FaceDetectorOptions {
  /** Faces scoring below this are not reported (default 0.65). */
  minScore?: number;
  /** Detection worker threads, each with its own copy of the model (default: one per core). */
  workers?: number;
  /** Decompression-bomb guard passed to every decode, as in `decodeOptions`. */
  maxPixels?: number;
}

// The detector sees at most this many pixels on the longest side (INPUT_SIZE in blazeface.mjs, which
// runs the model on the raster's own shape rounded up to multiples of 32), resampled by sharp from
// the analysis raster. It also bounds the memory a huge upload can take in a worker.
const DETECTION_MAX_SIDE = 192;
// At 192 px (bench/faces.ts, test/fixtures/faces/labels.json) the weakest labelled face BlazeFace
// finds above this scores 0.73 and the next one down 0.50; the best boxes on no labelled face score
// 0.68 and 0.65 (both in a demo photo), the cup in coffee.png 0.60, the cat in chelsea.png 0.59.
// A thin margin on the side of false faces: the bench shows precision per setting.
const DEFAULT_MIN_SCORE = 0.65;
const DEFAULT_IOU_THRESHOLD = 0.5;
// Share of the box size added on each side of a crop, so the crop shows the whole head.
const CROP_MARGIN = 0.2;

export function iou(a: FaceBox, b: FaceBox): number {
  const overlapWidth = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  const overlapHeight = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  if (!(overlapWidth > 0 && overlapHeight > 0)) return 0;
  const intersection = overlapWidth * overlapHeight;
  return intersection / (a.width * a.height + b.width * b.height - intersection);
}

/** Greedy non-maximum suppression: the highest-scoring face of each overlapping group survives. */
export function dedupeFaces(faces: Face[], iouThreshold = DEFAULT_IOU_THRESHOLD): Face[] {
  const kept: Face[] = [];
  for (const face of [...faces].sort((a, b) => b.score - a.score)) {
    if (kept.every((other) => iou(other.box, face.box) <= iouThreshold)) kept.push(face);
  }
  return kept;
}

interface Raster {
  pixels: Buffer;
  width: number;
  height: number;
  originalWidth: number;
  originalHeight: number;
}

type WorkerFace = FaceBox & { score: number };
type WorkerMessage =
  | { id: number; ok: true; faces: WorkerFace[] }
  | { id: number; ok: false; error: string }
  | { fatal: string };

interface PendingDetection {
  resolve(faces: WorkerFace[]): void;
  reject(error: Error): void;
}

function orientedSize(metadata: Metadata): { width: number; height: number } {
  return {
    width: metadata.autoOrient?.width ?? metadata.width,
    height: metadata.autoOrient?.height ?? metadata.height,
  };
}

/** The detector's input: the analysis raster shrunk to DETECTION_MAX_SIDE (no decode). */
async function detectionRaster(image: AnalysisRaster): Promise<Raster> {
  const { data, info } = await fromRaster(image)
    .resize({ width: DETECTION_MAX_SIDE, height: DETECTION_MAX_SIDE, fit: 'inside', withoutEnlargement: true })
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { pixels: data, width: info.width, height: info.height, originalWidth: image.originalWidth, originalHeight: image.originalHeight };
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

/** Scales a box from the detection raster to the original image, as whole pixels inside it. */
function toOriginalFace(face: WorkerFace, raster: Raster): Face | null {
  const scaleX = raster.originalWidth / raster.width;
  const scaleY = raster.originalHeight / raster.height;
  const left = clamp(Math.floor(face.x * scaleX), 0, raster.originalWidth);
  const top = clamp(Math.floor(face.y * scaleY), 0, raster.originalHeight);
  const right = clamp(Math.ceil((face.x + face.width) * scaleX), 0, raster.originalWidth);
  const bottom = clamp(Math.ceil((face.y + face.height) * scaleY), 0, raster.originalHeight);
  if (right - left < 1 || bottom - top < 1) return null;
  return {
    box: { x: left, y: top, width: right - left, height: bottom - top },
    score: Math.round(clamp(face.score, 0, 1) * 10_000) / 10_000,
  };
}

interface Slot {
  worker: Worker | null;
  pending: Map<number, PendingDetection>;
}

/**
 * Detection runs in worker threads, one per core by default, each started on first use and reused,
 * so the event loop stays free and every core can run the model. A detection goes to the worker
 * with the fewest pending. If a worker dies, the detections it held are rejected and its slot
 * starts a fresh one for the next detection sent there; the other workers carry on.
 */
export function createFaceDetector(options: FaceDetectorOptions = {}): FaceDetector {
  const minScore = options.minScore ?? DEFAULT_MIN_SCORE;
  if (!(minScore >= 0 && minScore <= 1)) throw new RangeError(`minScore must be between 0 and 1, got ${minScore}`);
  const workerCount = options.workers ?? os.availableParallelism();
  if (!(Number.isInteger(workerCount) && workerCount >= 1)) throw new RangeError(`workers must be a whole number from 1, got ${workerCount}`);
  const slots: Slot[] = Array.from({ length: workerCount }, () => ({ worker: null, pending: new Map() }));
  let nextId = 1;
  let closed = false;

  function discard(slot: Slot, stopped: Worker, error: Error): void {
    if (slot.worker !== stopped) return;
    slot.worker = null;
    void stopped.terminate();
    for (const detection of slot.pending.values()) detection.reject(error);
    slot.pending.clear();
  }

  function startWorker(slot: Slot): Worker {
    const started = new Worker(new URL('./face-worker.mjs', import.meta.url));
    started.on('message', (message: WorkerMessage) => {
      if ('fatal' in message) {
        discard(slot, started, new Error(message.fatal));
        return;
      }
      const detection = slot.pending.get(message.id);
      if (!detection) return;
      slot.pending.delete(message.id);
      // An idle worker must not keep the process alive.
      if (slot.pending.size === 0) started.unref();
      if (message.ok) detection.resolve(message.faces);
      else detection.reject(new Error(`face detection failed: ${message.error}`));
    });
    started.on('error', (error) => discard(slot, started, new Error(`the face detection worker crashed: ${error.message}`)));
    started.on('exit', (code) => discard(slot, started, new Error(`the face detection worker stopped (exit code ${code})`)));
    slot.worker = started;
    return started;
  }

  function runInWorker(raster: Raster): Promise<WorkerFace[]> {
    const slot = slots.reduce((least, candidate) => (candidate.pending.size < least.pending.size ? candidate : least));
    const target = slot.worker ?? startWorker(slot);
    const id = nextId++;
    return new Promise<WorkerFace[]>((resolve, reject) => {
      slot.pending.set(id, { resolve, reject });
      target.ref();
      target.postMessage({ id, width: raster.width, height: raster.height, pixels: raster.pixels, minScore });
    });
  }

  return {
    async detect(image) {
      if (closed) throw new Error('the face detector is closed');
      const raster = await detectionRaster(Buffer.isBuffer(image) ? await decodeForAnalysis(image, options.maxPixels) : image);
      if (closed) throw new Error('the face detector is closed');
      const found = await runInWorker(raster);
      const faces = found.map((face) => toOriginalFace(face, raster)).filter((face): face is Face => face !== null);
      return dedupeFaces(faces);
    },
    async close() {
      closed = true;
      await Promise.all(
        slots.map(async (slot) => {
          const current = slot.worker;
          if (!current) return;
          discard(slot, current, new Error('the face detector was closed'));
          await current.terminate();
        }),
      );
    },
  };
}

/** The crop rectangle: the box plus margin, clamped to the image; refuses boxes that leave nothing. */
function cropRegion(box: FaceBox, image: { width: number; height: number }) {
  const values = [box.x, box.y, box.width, box.height];
  if (!values.every(Number.isFinite) || box.width <= 0 || box.height <= 0) {
    throw new Error(`face box ${JSON.stringify(box)} is degenerate`);
  }
  const marginX = box.width * CROP_MARGIN;
  const marginY = box.height * CROP_MARGIN;
  const left = clamp(Math.floor(box.x - marginX), 0, image.width);
  const top = clamp(Math.floor(box.y - marginY), 0, image.height);
  const right = clamp(Math.ceil(box.x + box.width + marginX), 0, image.width);
  const bottom = clamp(Math.ceil(box.y + box.height + marginY), 0, image.height);
  if (right - left < 1 || bottom - top < 1) {
    throw new Error(`face box ${JSON.stringify(box)} lies outside the ${image.width}x${image.height} image`);
  }
  return { left, top, width: right - left, height: bottom - top };
}

async function cropFace(image: Buffer, face: Face, size: { width: number; height: number }, maxPixels?: number): Promise<Buffer> {
  const region = cropRegion(face.box, size);
  try {
    // JPEG output without keepMetadata/withMetadata: sharp writes no EXIF, GPS or XMP.
    return await sharp(image, decodeOptions(maxPixels))
      .extract(region)
      .flatten({ background: '#ffffff' })
      .jpeg({ quality: 90 })
      .toBuffer();
  } catch (error) {
    throw decodeFailure(error);
  }
}

/**
 * One metadata-free JPEG per face (box plus margin). Every crop stands alone: a box that cannot be
 * cropped gets its own error and the others still get their bytes.
 */
export async function cropFaces(image: Buffer, faces: Face[], maxPixels?: number): Promise<FaceCrop[]> {
  let size: { width: number; height: number };
  try {
    size = orientedSize(await sharp(image, decodeOptions(maxPixels)).metadata());
  } catch (error) {
    const { reason } = decodeFailure(error);
    return faces.map((face) => ({ face, ok: false, error: reason }));
  }
  return Promise.all(
    faces.map((face) =>
      cropFace(image, face, size, maxPixels).then(
        (bytes): FaceCrop => ({ face, ok: true, bytes }),
        (error: unknown): FaceCrop => ({ face, ok: false, error: error instanceof Error ? error.message : String(error) }),
      ),
    ),
  );
}
