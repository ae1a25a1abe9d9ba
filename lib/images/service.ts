import type { ImageProbe } from './decode.js';
import type { DerivedImage } from './derived.js';
import type { Detections, Face, FaceCrop } from './faces.js';
import type { GeometryResult } from './geometry.js';
import type { Fingerprints } from './robust.js';

/**
 * The images port: everything that decodes pixels. The Node service runs it in-process
 * (lib/images/local-service.ts: sharp, the JPEG reader and the face model in worker threads); the
 * Worker, which cannot, reaches the same code behind the image service's HTTP API through a
 * service binding (lib/images/http-service.ts, served by image-service.ts). Every method rejects
 * with `ImageRejected` when the bytes are not an image it accepts; the port stays usable.
 */
export type Settled<T> = { ok: true; value: T } | { ok: false; error: string };

/** What analysis keeps of a submitted image. Detection and the thumbnail may fail on their own. */
export interface ImageAnalysis {
  fingerprints: Fingerprints;
  /** Faces and people, overlapping boxes already merged. */
  detections: Settled<Detections>;
  /** A JPEG of at most 320 px on its longer side. */
  thumbnail: Settled<Buffer>;
}

export interface ImageService {
  analyse(bytes: Buffer): Promise<ImageAnalysis>;
  fingerprints(bytes: Buffer): Promise<Fingerprints>;
  /** The real format and size from the header; an image over the pixel limit is refused here. */
  probe(bytes: Buffer): Promise<ImageProbe>;
  /** The metadata-free copy (lib/images/derived.ts): the only form in which an image may leave. */
  derive(bytes: Buffer): Promise<DerivedImage>;
  cropFaces(bytes: Buffer, faces: Face[]): Promise<FaceCrop[]>;
  /**
   * The geometric check (lib/images/geometry.ts): whether `query` shows `reference`, or part of
   * it, or is part of it, turned, mirrored or in perspective; regionA is in `query`, regionB in
   * `reference`. A service keeps the keypoints of the images it saw last, so checking many
   * candidates against one submission computes the submission's once.
   */
  matchGeometry(query: Buffer, reference: Buffer): Promise<GeometryResult>;
  close(): Promise<void>;
}

export const settle = <T>(promise: Promise<T>): Promise<Settled<T>> =>
  promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error: error instanceof Error ? error.message : String(error) }),
  );
