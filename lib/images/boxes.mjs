// Boxes and rasters as the detection models see them, shared by blazeface.mjs and people-model.mjs
// (worker side) and faces.ts, region-raster.ts and face-crops.ts (main thread). Plain .mjs: loaded
// by the detection process.

/** `value` held within [min, max]. */
export function clamp(value, min, max) {
  return Math.min(max, Math.max(min, value));
}

/** The area two {x, y, width, height} boxes share; 0 when they only touch. */
export function overlap(a, b) {
  const width = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  const height = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  return width > 0 && height > 0 ? width * height : 0;
}

/** Intersection over union of two {x, y, width, height} boxes; 0 when they only touch. */
export function iou(a, b) {
  const shared = overlap(a, b);
  return shared && shared / (a.width * a.height + b.width * b.height - shared);
}

/** Greedy non-maximum suppression: the best-scoring box of each group overlapping more than `threshold` survives, best first. */
export function suppress(boxes, threshold) {
  const kept = [];
  for (const box of [...boxes].sort((a, b) => b.score - a.score)) if (kept.every((other) => iou(other, box) <= threshold)) kept.push(box);
  return kept;
}

/** Throws unless the raster is whole RGB pixels of at most maxSide a side. */
export function checkRgbRaster({ pixels, width, height }, maxSide) {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1 || width > maxSide || height > maxSide) {
    throw new Error(`invalid raster size ${width}x${height} (at most ${maxSide} a side)`);
  }
  if (!(pixels instanceof Uint8Array) || pixels.length !== width * height * 3) {
    throw new Error(`expected ${width * height * 3} RGB bytes, got ${pixels?.length}`);
  }
}
