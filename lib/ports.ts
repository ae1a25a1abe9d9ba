import type { Actor } from './auth/actor.js';
import type { Config } from './config.js';
import type { ImageProbe } from './images/decode.js';
import type { DerivedImage } from './images/derived.js';
import type { FaceCrop } from './images/face-crops.js';
import type { Detections, Face } from './images/faces.js';
import type { GeometryResult } from './images/geometry.js';
import type { Fingerprints } from './images/robust.js';

/**
 * The ports: `Env`, what every handler, job and domain function is given, and the interface of
 * each port it holds. Types only: the adapters live beside their port's helpers (lib/db/sqlite.ts,
 * lib/blobs/r2.ts, lib/net/http-client.ts...) and are chosen by the entries alone: lib/env.ts for
 * the Node service (server.ts), worker.ts for the Worker, image-service.ts for the image service.
 */

/** Everything a handler may use; built once at start-up (or by a test) from the validated config. */
export interface Env {
  config: Config;
  db: Database;
  /** Submitted images, downloads, captures, derived copies and thumbnails. */
  blobs: BlobStore;
  /** Every outbound HTTP request. */
  egress: Egress;
  /** The console's static files. */
  assets: ConsoleAssets;
  clock: Clock;
  log: Logger;
  version: string;
  startedAt: Date;
  /** Everything that decodes pixels. */
  images: ImageService;
  jobs: JobNotice;
  /** Who the current work is for: the caller of a request (set by the router), else the service itself. */
  actor: Actor;
  /** What this invocation may still send to storage and other services (lib/net/subrequests.ts). */
  subrequests: Subrequests;
  /** The largest submitted file this runtime reads whole; a reload refuses larger ones unread. */
  maxFileBytes: number;
  /** Whether start-up is done for a kind of route (server.ts, worker.ts); absent (tests) is ready. */
  startup?: Startup;
  /** Online backups into the backup folder; absent on Workers, which back up with D1 Time Travel (docs/operations.md). */
  backups?: Backups;
  /** The submissions folder as its watcher journals it (the Node service's data folder); absent on Workers, which have no watcher. */
  watchedFolder?: WatchedFolder;
}

/** What a reload asks of the folder watcher before it trusts the folder journal (lib/ingest/folder-watch.ts). */
export interface WatchedFolder {
  /**
   * True once the watcher has journalled every change made to the folder before the call, and
   * files still being copied in have gone quiet (within a bound); false when it cannot tell (no
   * watcher answers), and the reload lists the folder.
   */
  caughtUp(): Promise<boolean>;
}

/**
 * The database port: the D1-shaped interface every repository function takes. It is the subset of
 * Cloudflare D1's API the service uses, so the same repository code runs on better-sqlite3 locally
 * (lib/db/sqlite.ts) and on D1 (the repository tests run on both).
 */
export interface Database {
  prepare(sql: string): Statement;
  /** The only atomic unit: every statement commits, or none does. */
  batch(statements: Statement[]): Promise<unknown[]>;
  /**
   * A mark that differs from the last one read whenever anything was committed since, by this
   * connection or any other: what lets an answer be kept while nothing changed. D1 has none.
   */
  writeMark?(): Promise<string>;
}

export type SqlValue = string | number | null;

export interface RunResult {
  success: boolean;
  meta: { changes: number; last_row_id: number };
}

export interface AllResult<T> {
  results: T[];
  success: boolean;
}

export interface Statement {
  bind(...values: SqlValue[]): Statement;
  first<T = Record<string, unknown>>(): Promise<T | null>;
  all<T = Record<string, unknown>>(): Promise<AllResult<T>>;
  run(): Promise<RunResult>;
}

/**
 * The blob storage port: submitted images, the registry file, downloaded evidence, page captures,
 * derived copies and thumbnails, each under a key relative to the data root
 * (`submissions/images/a.jpg`, `evidence/<submission>/<hash>.jpg`, `thumbs/<id>.jpg`).
 * Two adapters: the data folder (lib/blobs/folder.ts) and an R2 bucket (lib/blobs/r2.ts). The
 * domain only ever names keys; a key that could leave its area never reaches an adapter
 * (`checkedKey`, lib/blobs/types.ts).
 */
export interface BlobStore {
  /** The bytes under a key, or null when there are none (or they cannot be read: see `problem`). */
  get(key: string): Promise<Buffer | null>;
  head(key: string): Promise<BlobInfo | null>;
  /** Stores the bytes whole: a reader sees the old object or the new one, never a part. */
  put(key: string, bytes: Uint8Array): Promise<void>;
  /** Deleting what is not there is not an error. */
  delete(key: string): Promise<void>;
  /**
   * Every object whose key starts with the prefix, once, at most `limit` (default 1000) a page: in
   * key order from R2, in directory order from the data folder. A cursor is good while its listing
   * is kept (R2: always; the folder: its last 8 listings).
   */
  list(prefix: string, options?: { cursor?: string | null; limit?: number }): Promise<BlobPage>;
  /**
   * The object's size, SHA-256 and first `headBytes` bytes, read off the event loop (the data
   * folder: worker threads, lib/blobs/digest-pool.ts); null when there is none. A store without it
   * (R2) is read with `get` and hashed by the caller.
   */
  digest?(key: string, headBytes: number): Promise<BlobDigest | null>;
}

export interface BlobDigest {
  size: number;
  sha256: string;
  /** The first bytes, at least `headBytes` of them when the object has that many. */
  head: Uint8Array;
}

export interface BlobInfo {
  key: string;
  size: number;
  /** Last write time in ms since the epoch. */
  modified: number;
  /** Changes whenever the object is replaced: a file's inode (a put writes a new file), an R2 etag. */
  version: string;
  /** Set when something is under the key but cannot be read as an object (a link that leaves its area). */
  problem?: string;
}

export interface BlobPage {
  objects: BlobInfo[];
  /** Pass back to read the next page; null on the last one. */
  cursor: string | null;
}

/**
 * The outbound HTTP port: every request the service makes (providers, downloads, page captures,
 * alert webhooks) goes through an `Egress`. Two adapters: node:http with a checking DNS lookup
 * (lib/net/http-client.ts) and the Workers fetch (lib/net/fetch-egress.ts). Both answer with values,
 * never by throwing, and both stop reading a body at `maxBytes`.
 */
export type Egress = (request: EgressRequest) => Promise<EgressOutcome>;

export interface EgressRequest {
  url: URL;
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: Buffer;
  /** Deadline for the whole exchange: connect, headers and body. */
  timeoutMs: number;
  /** A shorter deadline for establishing the connection only (where the adapter can tell). */
  connectTimeoutMs?: number;
  /** Reading stops, and the request fails, once the body passes this many bytes. */
  maxBytes: number;
  /** The URL came from the open web: refuse a host whose addresses are not public. */
  publicOnly?: boolean;
}

export type EgressFailureCode = 'timeout' | 'connect_timeout' | 'unreachable' | 'too_large' | 'connection_closed' | 'blocked_address';

export interface EgressResponse {
  ok: true;
  status: number;
  /** Lower-case names. */
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export interface EgressFailure {
  ok: false;
  error: { code: EgressFailureCode; message: string };
}

export type EgressOutcome = EgressResponse | EgressFailure;

/**
 * The console's static files (static/), by plain file name. The Node service reads them from the
 * folder (lib/assets/folder.ts); the Worker carries them inside its bundle (`mapAssets`, lib/assets/memory.ts).
 */
export interface ConsoleAssets {
  get(name: string): Promise<Uint8Array | null>;
}

/** The clock port: the system's (`systemClock`, lib/time.ts), or a test's that moves only when told. */
export interface Clock {
  now(): Date;
}

/** The log port: JSON lines with secrets scrubbed (`createLogger`, lib/log.ts). */
export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/**
 * The images port: everything that decodes pixels. The Node service runs it in-process
 * (lib/images/local-service.ts: sharp, the JPEG reader and the face model in worker threads); the
 * Worker, which cannot, reaches the same code behind the image service's HTTP API through a
 * service binding (lib/images/http-service.ts, served by image-service.ts). Every method rejects
 * with `ImageRejected` when the bytes are not an image it accepts; the port stays usable.
 */
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
   * `reference`. A service keeps the keypoints and grey copies of the images it saw last, by their
   * content, so checking many candidates against one submission computes the submission's once,
   * and reads an image's bytes only when it has nothing kept of it. `edit`, the region
   * hashes' name for how `query` relates to `reference` (`hflip`, `crop`, ...), lets the pixel rules
   * confirm a mirror, crop or change of brightness or size without keypoints
   * (lib/images/edit-check.ts: such a match has 0 inliers); what they do not confirm is checked.
   */
  matchGeometry(query: ImageSource, reference: ImageSource, edit?: string): Promise<GeometryResult>;
  close(): Promise<void>;
}

/**
 * An image named by its content (lib/images/source.ts): the SHA-256 of its bytes, and how to read
 * them. A failure to read rejects what needed the bytes with that same error.
 */
export interface ImageSource {
  sha256: string;
  bytes(): Promise<Buffer>;
}

export type Settled<T> = { ok: true; value: T } | { ok: false; error: string };

/** What analysis keeps of a submitted image. Detection and the thumbnail may fail on their own. */
export interface ImageAnalysis {
  fingerprints: Fingerprints;
  /** Faces and people, overlapping boxes already merged. */
  detections: Settled<Detections>;
  /** A JPEG of at most 320 px on its longer side. */
  thumbnail: Settled<Buffer>;
}

/**
 * The jobs port: how workers learn that rows of the job table were queued. In Node, the in-process
 * runner (lib/jobs/loops.ts); in the Worker, Cloudflare Queues (lib/jobs/queue.ts).
 */
export interface JobNotice {
  /** Tells the workers that `count` jobs were queued (after the statement that queued them committed). */
  notify(count: number): Promise<void>;
}

/**
 * The subrequest budget: unlimited in Node, 1,000 per invocation in the Worker (lib/net/subrequests.ts).
 */
export interface Subrequests {
  /** How many more this invocation may make. */
  left(): number;
}

/**
 * The backup port: one consistent archive of the database and the files it names, written while
 * the service runs (lib/backup/, the Node service only).
 */
export interface Backups {
  /** Writes the archive `name` into the backup folder, then keeps only the newest SVC_BACKUP_KEEP there. */
  write(name: string, progress: (progress: BackupProgress) => Promise<void>): Promise<BackupSummary>;
  /** Whether the backup folder holds an archive of that name. */
  has(name: string): Promise<boolean>;
}

export interface BackupProgress {
  files_done: number;
  files_total: number;
  bytes_written: number;
}

export interface BackupSummary {
  /** The archive's file name in the backup folder. */
  archive: string;
  bytes: number;
  /** Files in the archive, the database among them. */
  files: number;
  /** Files the snapshot names that were gone when copied. */
  missing: number;
  /** The highest migration of the database copied. */
  schema: string;
  created_at: string;
}

/**
 * Start-up as the router sees it: until the service is ready for a route, the route answers 503
 * with the reason and `/health` says it is starting (docs/api.md, "Start-up").
 */
export interface Startup {
  /** Null when ready for routes that need `what`; otherwise why not ("copying images into the bucket (12 of 400)"). */
  waiting(what: StartupNeed): Promise<string | null>;
}

/** `database`: every route (each reads it); `work`: the routes that read the submissions folder or run jobs (reload, rerun). */
export type StartupNeed = 'database' | 'work';
