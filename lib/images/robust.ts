import { hashToWords, popcount32 } from './phash.js';
import {
  INVERSE_ORIENTATION,
  REGION_WORDS,
  ORIENTATIONS,
  type Orientation,
  type Region,
  type RegionHash,
  orientRegion,
  everyOrientation,
  regionHashDistance,
  regionHashFromHex,
  regionKey,
  regionKeyDistance,
} from './robust-hash.js';
import { SimilarityIndex, chunkBall, hashChunks } from './similarity-index.js';

/**
 * Matching that survives mirroring, quarter turns, uniform borders/padding, centred crops of up
 * to about 13 % per side and cover crops to a common shape, on top of the SPEC pHash.
 *
 * The pHash stays the primary fingerprint and the number shown (`plainSimilarity`). Beside it an
 * image carries region hashes (see robust-hash.ts): the whole image, the image with its uniform
 * borders trimmed, nine crop windows and the shape windows that fit it. A query matches a
 * reference when, for one of the eight orientations, the 64-bit keys of two regions agree within the threshold AND all 255 bits of the
 * same two regions agree within VERIFY_MAX_DISTANCE. A crop window is compared with a whole or
 * trimmed image (a crop), or with the window that covers the same part of the other image (the
 * geometry is unchanged but only part of the image still agrees, e.g. where a brightened copy's
 * highlights clipped and changed the whole image's lowest frequencies: SELF_COMPARED windows
 * only); two different windows are never compared.
 */

/**
 * Cover crops to a common shape (width / height): a square or 4:5 post of a landscape photograph,
 * a 16:9 banner of a 3:2 one. The window is the image's centred part of that shape; an image gets
 * it only when the shape cuts between 3 % and 60 % of its width or height (closer to its own shape,
 * the whole image and the crop windows already agree with it).
 */
export const SHAPES = { s1x1: 1, s4x5: 4 / 5, s3x4: 3 / 4, s2x3: 2 / 3, s9x16: 9 / 16, s4x3: 4 / 3, s3x2: 3 / 2, s16x9: 16 / 9 } as const;
type ShapeName = keyof typeof SHAPES;
const SHAPE_KEEPS = { most: 0.97, least: 0.4 };

export const REGION_NAMES = [
  'whole',
  'trimmed',
  'c95',
  'c90',
  'c85',
  'c80',
  'c75',
  'tl90',
  'tr90',
  'bl90',
  'br90',
  ...(Object.keys(SHAPES) as ShapeName[]),
  'upright',
] as const;
export type RegionName = (typeof REGION_NAMES)[number];
type WindowName = Exclude<RegionName, 'whole' | 'trimmed' | 'upright' | ShapeName>;

export const WINDOWS: Record<WindowName, Region> = {
  // 2.5 % to 12.5 % off every side, in steps of 2.5 %: a region hash tolerates about 1.5 % of
  // difference per side between a crop and the window it is compared with.
  c95: { left: 0.025, top: 0.025, right: 0.975, bottom: 0.975 },
  c90: { left: 0.05, top: 0.05, right: 0.95, bottom: 0.95 },
  c85: { left: 0.075, top: 0.075, right: 0.925, bottom: 0.925 },
  c80: { left: 0.1, top: 0.1, right: 0.9, bottom: 0.9 },
  c75: { left: 0.125, top: 0.125, right: 0.875, bottom: 0.875 },
  // 10 % off two adjacent sides, keeping the named corner.
  tl90: { left: 0, top: 0, right: 0.9, bottom: 0.9 },
  tr90: { left: 0.1, top: 0, right: 1, bottom: 0.9 },
  bl90: { left: 0, top: 0.1, right: 0.9, bottom: 1 },
  br90: { left: 0.1, top: 0.1, right: 1, bottom: 1 },
};

const isWindow = (name: RegionName) => name !== 'whole' && name !== 'trimmed' && name !== 'upright';

/** The centred window of `shape` (width / height) of an image of that `aspect`, or null when the shape keeps too much or too little of it. */
export function shapeWindow(aspect: number, shape: number): Region | null {
  const keeps = shape < aspect ? shape / aspect : aspect / shape;
  if (keeps > SHAPE_KEEPS.most || keeps < SHAPE_KEEPS.least) return null;
  const cut = (1 - keeps) / 2;
  return shape < aspect ? { left: cut, top: 0, right: 1 - cut, bottom: 1 } : { left: 0, top: cut, right: 1, bottom: 1 - cut };
}

/**
 * The windows also compared with the same window of the other image. The ladder's in-between steps
 * (c95, c85, c75) serve crops only: as the same window of two images they would add chances for
 * shared content to agree (two photographs in the same phone chrome matched through c85), and a
 * shape window depends on the image's own shape.
 */
const SELF_COMPARED: readonly RegionName[] = ['c90', 'c80', 'tl90', 'tr90', 'bl90', 'br90'];

/**
 * [orientation T][window]: the reference window showing what the window of a T'd query shows,
 * e.g. a mirrored copy's top-left corner window is the original's top-right one (SELF_COMPARED
 * windows only).
 */
const SAME_WINDOW = Object.fromEntries(
  ORIENTATIONS.map((orientation) => {
    const names = SELF_COMPARED as WindowName[];
    const covers = (a: Region, b: Region) =>
      Math.abs(a.left - b.left) + Math.abs(a.top - b.top) + Math.abs(a.right - b.right) + Math.abs(a.bottom - b.bottom) < 1e-9;
    return [
      orientation,
      Object.fromEntries(
        names.map((name) => {
          const shown = orientRegion(WINDOWS[name], INVERSE_ORIENTATION[orientation]);
          return [name, names.find((other) => covers(WINDOWS[other], shown))!];
        }),
      ),
    ];
  }),
) as Record<Orientation, Record<string, RegionName>>;

export interface Fingerprints {
  /** The SPEC 64-bit pHash (16 hex digits). */
  phash: string;
  /**
   * Region hashes, 64 hex digits each: `whole`, `trimmed` (only when the image has a uniform
   * border), the crop windows `c95` to `c75` (2.5 % to 12.5 % off each side) and `tl90`, `tr90`,
   * `bl90`, `br90` (10 % off two sides, keeping that corner), and the shape windows (`s1x1`, ...:
   * SHAPES) that fit the image. A region too plain to hash is absent.
   * A framed image (a border on three or four sides) has no `whole`, and its windows lie inside
   * the frame. `upright`: a picture turned by 1-12° on a larger canvas (turned.ts), turned back
   * upright; it compares as a trimmed region does.
   */
  variants: Partial<Record<RegionName, string>>;
}

export interface FingerprintMatch {
  /** Similarity of the matching regions' 64-bit keys (or the pHash for `identity`), 0-1. */
  similarity: number;
  /** How the query relates to the reference, e.g. `identity`, `hflip`, `rot90+trimmed`, `crop`. */
  transform: string;
  /** The plain pHash similarity, the number shown to operators. */
  plainSimilarity: number;
}

/**
 * Region matches need at least this key similarity whatever the caller's threshold: a lower
 * pHash threshold widens plain matching, but must not turn 8 orientations x many region pairs into
 * false matches.
 */
const MIN_REGION_SIMILARITY = 0.9;
/**
 * The second check on all 255 bits of the two regions. Measured on the 42 photographs of
 * bench/robust-recall.ts: a copy's best region pair differs in at most 35 bits (43 for one
 * watermarked copy, which the pHash matches anyway); different photographs differ in 78 bits or
 * more under every orientation and region pair compared (same windows included), and never come
 * within 8 key bits at all.
 */
const VERIFY_MAX_DISTANCE = 48;
/**
 * Index lookups of region keys stay within the radius the similarity index serves from exact
 * 16-bit chunk buckets (floor(3 / 4) = 0 bits per chunk; radius 6 visits 17 times more entries).
 * In the evaluation, mirrored, turned, cropped or bordered copies differ from their original's
 * closest region key in at most 3 bits, and so does the one brightened copy the pHash misses (a
 * bright wood texture whose highlights clip: its whole image is 10 bits off, its top-right window
 * 3); the pairwise check still allows up to the threshold's radius.
 */
const REGION_LOOKUP_DISTANCE = 3;

/**
 * A border on three or four sides is a frame (or a pad) put around the picture. A photograph's own
 * plain bands (a sky, a dark foreground) trim one or two sides: in the evaluation set, at most two
 * sides, and the second by under 2.5 % (plasma's ColdRipple: 41 % sky, 2.3 % at the bottom).
 */
const FRAME_MIN_SIDE = 0.025;
/**
 * A frame meets the picture along every bordered side (edgeFill in robust-hash.ts): in the
 * evaluation set a framed or padded photograph's least filled side is 0.60 (a pale sky under a
 * white border, a dark ground on a black pad). A drawing, silhouette or cards on their own plain
 * ground leave at least one side touched only in places (0.39 at most: OpenCV's pic5), and are
 * hashed as they stand, so that their crops and pads still match them.
 */
const FRAME_EDGE_FILL = 0.5;

/** Whether the content region (contentRegion) is a picture inside a frame, given its edge fill (edgeFill). */
export function isFramed(content: Region, fill: number[]): boolean {
  const sides = [content.left, content.top, 1 - content.right, 1 - content.bottom];
  const bordered = sides.flatMap((side, i) => (side >= FRAME_MIN_SIDE ? [fill[i]] : []));
  return bordered.length >= 3 && bordered.every((share) => share >= FRAME_EDGE_FILL);
}

/** The window, given as fractions of the whole image, taken of the content region instead. */
export function within(content: Region, window: Region): Region {
  const [width, height] = [content.right - content.left, content.bottom - content.top];
  return {
    left: content.left + window.left * width,
    top: content.top + window.top * height,
    right: content.left + window.right * width,
    bottom: content.top + window.bottom * height,
  };
}

interface Parsed {
  phash: [number, number];
  regions: Partial<Record<RegionName, RegionHash>>;
}

function parse(fingerprints: Fingerprints): Parsed {
  const regions: Partial<Record<RegionName, RegionHash>> = {};
  for (const name of REGION_NAMES) {
    const hex = fingerprints.variants[name];
    if (hex !== undefined) regions[name] = regionHashFromHex(hex);
  }
  return { phash: hashToWords(fingerprints.phash), regions };
}

/** A query's regions in every orientation, mapped back so they compare with a reference's bits. */
interface PreparedQuery {
  phash: [number, number];
  /** [orientation T][region]: the query region as it would be if the query were un-T'd. */
  oriented: Record<Orientation, Partial<Record<RegionName, RegionHash>>>;
}

function prepare(query: Parsed): PreparedQuery {
  const oriented = Object.fromEntries(ORIENTATIONS.map((orientation) => [orientation, {}])) as PreparedQuery['oriented'];
  for (const name of REGION_NAMES) {
    const hash = query.regions[name];
    if (!hash) continue;
    const every = everyOrientation(hash);
    for (const orientation of ORIENTATIONS) oriented[orientation][name] = every[INVERSE_ORIENTATION[orientation]];
  }
  return { phash: query.phash, oriented };
}

const phashDistance = (a: [number, number], b: [number, number]) => popcount32(a[0] ^ b[0]) + popcount32(a[1] ^ b[1]);
// The epsilon keeps a threshold of exactly 1 - d/64 at radius d despite floating-point rounding.
const radius = (threshold: number) => Math.max(0, Math.floor((1 - threshold) * 64 + 1e-9));

/**
 * How much a region pair assumes: the whole images, a trimmed border or a small turn straightened,
 * a crop window, and last the same window of both (an unchanged geometry of which only part still
 * agrees).
 */
function tierOf(queryRegion: RegionName, referenceRegion: RegionName): number {
  if (isWindow(queryRegion) && isWindow(referenceRegion)) return 3;
  if (isWindow(queryRegion) || isWindow(referenceRegion)) return 2;
  return queryRegion === 'whole' && referenceRegion === 'whole' ? 0 : 1;
}

/** `tilt` when either side is a small turn straightened (its upright region), else `trimmed` for tier 1. */
function transformName(orientation: Orientation, tier: number, tilt: boolean): string {
  const parts: string[] = orientation === 'identity' ? [] : [orientation];
  if (tier === 1) parts.push(tilt ? 'tilt' : 'trimmed');
  if (tier === 2) parts.push('crop');
  return parts.length === 0 ? 'identity' : parts.join('+');
}

interface RegionMatch {
  orientation: Orientation;
  tier: number;
  tilt: boolean;
  keyDistance: number;
  hashDistance: number;
}

/**
 * The plainest explanation that passes both checks: whole images before a trimmed border before a
 * crop window (a crop window also fits a bordered copy, but "trimmed" says what happened) before
 * the same window of both, and within that the closest 255-bit hashes; ties keep the earlier
 * orientation.
 */
function bestRegionMatch(query: PreparedQuery, reference: Parsed, maxKeyDistance: number): RegionMatch | null {
  let best: RegionMatch | null = null;
  for (const orientation of ORIENTATIONS) {
    const queryRegions = query.oriented[orientation];
    for (const queryName of REGION_NAMES) {
      const queryHash = queryRegions[queryName];
      if (!queryHash) continue;
      for (const referenceName of REGION_NAMES) {
        if (isWindow(queryName) && isWindow(referenceName) && referenceName !== SAME_WINDOW[orientation][queryName]) continue;
        const referenceHash = reference.regions[referenceName];
        if (!referenceHash) continue;
        const tier = tierOf(queryName, referenceName);
        if (best && tier > best.tier) continue;
        const keyDistance = regionKeyDistance(queryHash, referenceHash);
        if (keyDistance > maxKeyDistance) continue;
        const hashDistance = regionHashDistance(queryHash, referenceHash);
        if (hashDistance > VERIFY_MAX_DISTANCE) continue;
        const tilt = queryName === 'upright' || referenceName === 'upright';
        if (!best || tier < best.tier || hashDistance < best.hashDistance) best = { orientation, tier, tilt, keyDistance, hashDistance };
      }
    }
  }
  return best;
}

/**
 * Two framed or letterboxed images whose pHashes agree but whose contents (the trimmed regions)
 * do not, in any orientation: the frame made the pHash agree, not the photograph.
 */
function sharedFrameOnly(query: PreparedQuery, reference: Parsed): boolean {
  const referenceContent = reference.regions.trimmed;
  if (!referenceContent || !query.oriented.identity.trimmed) return false;
  return ORIENTATIONS.every((orientation) => regionHashDistance(query.oriented[orientation].trimmed!, referenceContent) > VERIFY_MAX_DISTANCE);
}

function match(query: PreparedQuery, reference: Parsed, threshold: number): FingerprintMatch | null {
  const plainSimilarity = 1 - phashDistance(query.phash, reference.phash) / 64;
  const region = bestRegionMatch(query, reference, radius(Math.max(threshold, MIN_REGION_SIMILARITY)));
  const identity = { similarity: plainSimilarity, transform: 'identity', plainSimilarity };
  if (plainSimilarity >= threshold && !sharedFrameOnly(query, reference)) {
    // The pHash already matches; the regions only tell when that copy was cropped or bordered.
    if (!region || region.tier === 0 || region.tier === 3) return identity;
  } else if (!region) {
    return null;
  }
  return { similarity: 1 - region.keyDistance / 64, transform: transformName(region.orientation, region.tier, region.tilt), plainSimilarity };
}

/**
 * Whether the query image is a copy of the reference image, and how: `null` when no orientation
 * and region pair matches. A plain pHash match at the threshold is always `identity`.
 */
export function matchFingerprints(query: Fingerprints, reference: Fingerprints, threshold: number): FingerprintMatch | null {
  return match(prepare(parse(query)), parse(reference), threshold);
}

/** A pair's verdict seen from each side: each side's own match as the query, or else the other's turned back. */
export interface PairMatch {
  /** The plain pHash similarity of the two, matched or not. */
  plainSimilarity: number;
  /** [x as the query, y as the query]; null when neither way matches. */
  seen: [FingerprintMatch, FingerprintMatch] | null;
}

/**
 * Both ways of a pair at once: a match either way is a match of the pair (the checks are not
 * symmetric: a query's oriented regions and crop windows against the reference's stored ones), so
 * the same two images give the same verdict whichever is compared second.
 */
export function matchPair(x: Fingerprints, y: Fingerprints, threshold: number): PairMatch {
  return pairMatcher(x, threshold)(y);
}

/**
 * matchPair of `x` with each `y` it is given, `x`'s hashes parsed and turned once: a comparison
 * judges its submission against every candidate its lookups find.
 */
export function pairMatcher(x: Fingerprints, threshold: number): (y: Fingerprints) => PairMatch {
  const px = parse(x);
  const preparedX = prepare(px);
  return (y) => {
    const py = parse(y);
    const xy = match(preparedX, py, threshold);
    const yx = match(prepare(py), px, threshold);
    const plainSimilarity = 1 - phashDistance(px.phash, py.phash) / 64;
    return { plainSimilarity, seen: xy || yx ? [xy ?? turnedBack(yx!), yx ?? turnedBack(xy!)] : null };
  };
}

/** The match the other way round: the inverse orientation (a crop or a trimmed border keeps its name). */
function turnedBack(found: FingerprintMatch): FingerprintMatch {
  const parts = found.transform.split('+').map((part) => (part in INVERSE_ORIENTATION ? INVERSE_ORIENTATION[part as Orientation] : part));
  return { ...found, transform: parts.join('+') };
}

export interface RobustIndexMatch<K> {
  key: K;
  similarity: number;
  transform: string;
  plainSimilarity: number;
}

/**
 * Fingerprints of many images, searched for copies of a query. Four SimilarityIndex instances
 * find candidates (pHashes; whole/trimmed region keys; self-compared window keys; the other crop
 * and shape window keys), and every candidate is confirmed by the same check as
 * matchFingerprints, so the index and the pairwise check agree.
 */
export class RobustIndex<K> {
  private readonly ids = new Map<K, number>();
  private keys: K[] = [];
  private readonly freeIds: number[] = [];
  /**
   * Per id: the pHash (2 words) and every region hash (8 words, zero when absent), in one typed
   * array so a million images cost 648 MB rather than millions of small objects.
   */
  private store = new Uint32Array(0);
  private present = new Uint32Array(0);
  private readonly plain = new SimilarityIndex<number>();
  private readonly regions = new SimilarityIndex<number>();
  private readonly windows = new SimilarityIndex<number>();
  private readonly crops = new SimilarityIndex<number>();

  get size(): number {
    return this.ids.size;
  }

  has(key: K): boolean {
    return this.ids.has(key);
  }

  /** Stores the image's fingerprints under the key, replacing earlier ones. */
  add(key: K, fingerprints: Fingerprints): void {
    const reference = parse(fingerprints);
    this.remove(key);
    const id = this.freeIds.pop() ?? this.keys.length;
    if (id >= this.present.length) this.grow(id + 1);
    this.ids.set(key, id);
    this.keys[id] = key;
    const base = id * ID_WORDS;
    this.store.fill(0, base, base + ID_WORDS);
    this.store.set(reference.phash, base);
    let present = 0;
    REGION_NAMES.forEach((name, index) => {
      const hash = reference.regions[name];
      if (!hash) return;
      present |= 1 << index;
      this.store.set(hash, base + 2 + index * REGION_WORDS);
    });
    this.present[id] = present;
    for (const { store, key } of storedKeys(fingerprints, reference)) this[store].add(id, key);
  }

  remove(key: K): void {
    const id = this.ids.get(key);
    if (id === undefined) return;
    this.ids.delete(key);
    this.plain.remove(id);
    this.regions.remove(id);
    this.windows.remove(id);
    this.crops.remove(id);
    this.freeIds.push(id);
  }

  /**
   * Every stored image the query is a copy of, or that is a crop of the query, best first: the
   * candidates the lookups find, confirmed by the pairwise check.
   */
  query(fingerprints: Fingerprints, threshold: number): RobustIndexMatch<K>[] {
    const query = prepare(parse(fingerprints));
    const candidates = new Set<number>();
    for (const { store, key, distance } of lookups(fingerprints.phash, query, threshold)) {
      for (const found of this[store].query(key, distance)) candidates.add(found.key);
    }
    const matches: RobustIndexMatch<K>[] = [];
    for (const id of candidates) {
      const found = match(query, this.reference(id), threshold);
      if (found) matches.push({ key: this.keys[id], ...found });
    }
    return sortMatches(matches);
  }

  private reference(id: number): Parsed {
    const base = id * ID_WORDS;
    const regions: Partial<Record<RegionName, RegionHash>> = {};
    REGION_NAMES.forEach((name, index) => {
      if (this.present[id] & (1 << index)) regions[name] = this.store.subarray(base + 2 + index * REGION_WORDS, base + 2 + (index + 1) * REGION_WORDS);
    });
    return { phash: [this.store[base], this.store[base + 1]], regions };
  }

  private grow(needed: number): void {
    const capacity = Math.max(1024, needed, this.present.length * 2);
    const store = new Uint32Array(capacity * ID_WORDS);
    store.set(this.store);
    this.store = store;
    const present = new Uint32Array(capacity);
    present.set(this.present);
    this.present = present;
  }
}

/**
 * The kinds of stored key: the pHash, whole/trimmed/upright region keys, the self-compared windows'
 * keys (looked up by a query's whole regions and by its own such windows), and the other crop and
 * shape windows' keys (looked up by a query's whole regions only).
 */
type IndexStore = 'plain' | 'regions' | 'windows' | 'crops';

const storeOf = (name: RegionName): IndexStore => (!isWindow(name) ? 'regions' : SELF_COMPARED.includes(name) ? 'windows' : 'crops');

/** What an image stores under each kind: its pHash and every region key. */
function storedKeys(fingerprints: Fingerprints, parsed = parse(fingerprints)): { store: IndexStore; key: string }[] {
  const keys: { store: IndexStore; key: string }[] = [{ store: 'plain', key: fingerprints.phash }];
  for (const name of REGION_NAMES) {
    const hash = parsed.regions[name];
    if (hash) keys.push({ store: storeOf(name), key: regionKey(hash) });
  }
  return keys;
}

/**
 * Where the candidates of a query come from: the pHash within the threshold; the query's whole,
 * trimmed and upright regions in all eight orientations against stored whole, trimmed and upright
 * regions; its crop and shape windows, unturned and mirrored, against those; its unturned
 * self-compared windows against the stored ones; and its whole, trimmed and upright regions,
 * unturned and mirrored, against every stored window. Every candidate then gets the full pairwise
 * check. Lookups into the windows (6 self-compared and up to 10 others per image) cost many times
 * more than the others, which is why only the two commonest orientations of a cropped copy go
 * there, and a window only to the same window of the other (the other windows are never compared
 * with windows: looking up 16 windows among 16 per stored image took a query at a million stored
 * images to 10.2 ms, against 2.0 before the shape windows and 4.2 this way); matchFingerprints
 * checks all eight orientations.
 *
 * The lookups are symmetric: X finds Y exactly when Y finds X. An orientation moves the key bits
 * among themselves (flipping some), so a distance is the same with either side turned back; each
 * lookup of X's regions into Y's stored kind has its mirror image among Y's lookups into X's. So
 * whichever of two submissions is compared second finds the first (decision 0033).
 */
function lookups(phash: string, query: PreparedQuery, threshold: number): { store: IndexStore; key: string; distance: number }[] {
  const found: { store: IndexStore; key: string; distance: number }[] = [{ store: 'plain', key: phash, distance: radius(threshold) }];
  const distance = Math.min(REGION_LOOKUP_DISTANCE, radius(Math.max(threshold, MIN_REGION_SIMILARITY)));
  const add = (store: IndexStore, hash: RegionHash | undefined) => {
    if (hash) found.push({ store, key: regionKey(hash), distance });
  };
  for (const orientation of ORIENTATIONS) {
    const regions = query.oriented[orientation];
    add('regions', regions.whole);
    add('regions', regions.trimmed);
    add('regions', regions.upright);
    if (orientation !== 'identity' && orientation !== 'hflip') continue;
    for (const store of ['windows', 'crops'] as const) {
      add(store, regions.whole);
      add(store, regions.trimmed);
      add(store, regions.upright);
    }
    for (const name of REGION_NAMES) if (isWindow(name)) add('regions', regions[name]);
  }
  for (const name of SELF_COMPARED) add('windows', query.oriented.identity[name]);
  return found;
}

function sortMatches<M extends { similarity: number; plainSimilarity: number }>(matches: M[]): M[] {
  return matches.sort((a, b) => b.similarity - a.similarity || b.plainSimilarity - a.plainSimilarity);
}

/**
 * The same index kept in a database table: each stored key becomes four rows, one per 16-bit
 * chunk, numbered `slot = (kind * 4 + chunk) * 65536 + chunk value`, each row keeping the whole key.
 * A lookup within d bits reads every row that shares one chunk within floor(d / 4) bits
 * (pigeonhole), keeps the rows whose whole key is within d bits (as SimilarityIndex does), and the
 * images those name get the same pairwise check as RobustIndex.
 */
const STORE_NUMBER: Record<IndexStore, number> = { plain: 0, regions: 1, windows: 2, crops: 3 };
const STORE_SLOTS = 4 * 65536;

function slotsOf(store: IndexStore, key: string, distance: number): number[] | null {
  const slots: number[] = [];
  for (const [chunk, value] of hashChunks(key).entries()) {
    const ball = chunkBall(value, distance);
    if (!ball) return null;
    for (const near of ball) slots.push(STORE_NUMBER[store] * STORE_SLOTS + chunk * 65536 + near);
  }
  return slots;
}

/** The rows an image is stored as: [slot, whole key]. */
export function indexEntries(fingerprints: Fingerprints): [number, string][] {
  const entries = new Map<string, [number, string]>();
  for (const { store, key } of storedKeys(fingerprints)) {
    for (const slot of slotsOf(store, key, 0)!) entries.set(`${slot}:${key}`, [slot, key]);
  }
  return [...entries.values()];
}

/** The rows to read for a lookup, and which of the rows read are within its distance. */
export interface SlotProbe {
  slots: number[];
  accepts(slot: number, key: string): boolean;
}

function probeOf(wanted: { store: IndexStore; key: string; distance: number }[]): SlotProbe | null {
  const slots = new Set<number>();
  const byStore: [number, number, number][][] = [[], [], [], []];
  for (const { store, key, distance } of wanted) {
    const found = slotsOf(store, key, distance);
    if (!found) return null;
    for (const slot of found) slots.add(slot);
    byStore[STORE_NUMBER[store]].push([...hashToWords(key), distance]);
  }
  return {
    slots: [...slots],
    accepts(slot, key) {
      const [high, low] = hashToWords(key);
      return byStore[Math.floor(slot / STORE_SLOTS)].some(([h, l, distance]) => phashDistance([h, l], [high, low]) <= distance);
    },
  };
}

export class SlotQuery {
  private readonly prepared: PreparedQuery;

  constructor(
    private readonly fingerprints: Fingerprints,
    private readonly threshold: number,
  ) {
    this.prepared = prepare(parse(fingerprints));
  }

  /** The lookups of the images that may match; null when the pHash radius is too wide to probe (then every image is a candidate). */
  matchProbe(): SlotProbe | null {
    return probeOf(lookups(this.fingerprints.phash, this.prepared, this.threshold));
  }

  /** The lookup of the images whose pHash is at least `from` similar; null as for matchProbe(). */
  nearProbe(from: number): SlotProbe | null {
    return probeOf([{ store: 'plain', key: this.fingerprints.phash, distance: radius(from) }]);
  }

  /** The candidates that match, best first. */
  matches<K>(candidates: { key: K; fingerprints: Fingerprints }[]): RobustIndexMatch<K>[] {
    return sortMatches(
      candidates.flatMap(({ key, fingerprints }) => {
        const found = match(this.prepared, parse(fingerprints), this.threshold);
        return found ? [{ key, ...found }] : [];
      }),
    );
  }

  /** The candidates whose plain pHash is at least `from` similar but that do not match: the ones near the threshold. */
  near<K>(candidates: { key: K; fingerprints: Fingerprints }[], from: number): { key: K; plainSimilarity: number }[] {
    return candidates.flatMap(({ key, fingerprints }) => {
      const reference = parse(fingerprints);
      const plainSimilarity = 1 - phashDistance(this.prepared.phash, reference.phash) / 64;
      return plainSimilarity >= from - 1e-9 && match(this.prepared, reference, this.threshold) === null ? [{ key, plainSimilarity }] : [];
    });
  }
}

const ID_WORDS = 2 + REGION_NAMES.length * REGION_WORDS;
