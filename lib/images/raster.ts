/**
 * Rasters of luma and their resampling: the pure half of the fingerprint pipeline, shared by the
 * Node service (which decodes, lib/images/luma.ts) and the Worker (which only compares).
 */

/** Side of the square sample libvips makes; a 5 % border is 13 samples wide. */
export const SAMPLE_SIDE = 256;

/** A window of a raster in its own cell units: [left, right) x [top, bottom). */
export interface Window {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

export interface Raster {
  width: number;
  height: number;
  data: ArrayLike<number>;
  /** The part of the raster that is image: all of it, except a JPEG grid's partly-filled last blocks. */
  window: Window;
}

/** Area-average weights along one axis: output cell o mixes source cells first[o] + k with weights[o][k]. */
function areaWeights(from: number, to: number, size: number, outputs: number): { first: Int32Array; weights: Float64Array[] } {
  const first = new Int32Array(outputs);
  const weights: Float64Array[] = [];
  const step = (to - from) / outputs;
  for (let o = 0; o < outputs; o++) {
    const start = from + o * step;
    const end = start + step;
    first[o] = Math.max(0, Math.floor(start));
    const list: number[] = [];
    for (let i = first[o]; i < Math.ceil(end) && i < size; i++) list.push((Math.min(end, i + 1) - Math.max(start, i)) / step);
    weights.push(Float64Array.from(list));
  }
  return { first, weights };
}

/** The window of the raster resampled to side x side by area averaging (separable: columns, then rows). */
export function resample(raster: Raster, window: Window, side: number): Float64Array {
  const { width, height, data } = raster;
  const x = areaWeights(window.left, window.right, width, side);
  const y = areaWeights(window.top, window.bottom, height, side);
  const rowFrom = y.first[0];
  const rowTo = Math.min(height, y.first[side - 1] + y.weights[side - 1].length);
  const columns = new Float64Array(height * side);
  for (let row = rowFrom; row < rowTo; row++) {
    for (let o = 0; o < side; o++) {
      const weights = x.weights[o];
      const from = row * width + x.first[o];
      let sum = 0;
      for (let k = 0; k < weights.length; k++) sum += weights[k] * data[from + k];
      columns[row * side + o] = sum;
    }
  }
  const out = new Float64Array(side * side);
  for (let o = 0; o < side; o++) {
    const weights = y.weights[o];
    for (let k = 0; k < weights.length; k++) {
      const from = (y.first[o] + k) * side;
      for (let col = 0; col < side; col++) out[o * side + col] += weights[k] * columns[from + col];
    }
  }
  return out;
}
