// BlazeFace (MediaPipe's "back camera" model, 256 px input) on tfjs's wasm backend, with the anchor
// decoding and non-maximum suppression done here in plain arithmetic. The weights are the ones the
// @vladmandic/human npm package ships in its models/ folder, read from disk: nothing is downloaded.
// Used by face-worker.mjs and by bench/faces.ts. Plain .mjs for the same reason as the worker.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const tf = require('@tensorflow/tfjs');
const { setWasmPaths } = require('@tensorflow/tfjs-backend-wasm');

/** The model's fixed input side; rasters larger than this on either side are refused. */
export const INPUT_SIZE = 256;
// BlazeFace's box spans brows to mouth; grown by this factor around its centre it covers the whole
// face (forehead and chin), which is what a face crop shows and what the labelled boxes in
// test/fixtures/faces/labels.json mark (bench/faces.ts: recall 0.50 unscaled, 0.92 at 1.5).
const BOX_SCALE = 1.5;
// Neighbouring anchors fire on the same face; of boxes overlapping more than this the best survives.
const NMS_IOU = 0.3;

// The anchor centres in input pixels, in the order of the model's outputs: a 16x16 grid with two
// anchors per cell (stride 16), then an 8x8 grid with six per cell (stride 32); 896 in all.
const ANCHORS = [];
for (const [stride, perCell] of [[16, 2], [32, 6]]) {
  const cells = INPUT_SIZE / stride;
  for (let row = 0; row < cells; row++) {
    for (let column = 0; column < cells; column++) {
      for (let i = 0; i < perCell; i++) ANCHORS.push([(column + 0.5) * stride, (row + 0.5) * stride]);
    }
  }
}

let model = null;

/** Starts tfjs's wasm backend (single-threaded, SIMD where the runtime has it) and loads the model once. */
export async function loadBlazeFace() {
  if (model) return;
  setWasmPaths(join(dirname(require.resolve('@tensorflow/tfjs-backend-wasm')), '/'));
  // The threaded wasm build starts its pthreads from blob: URLs, which Node's Worker refuses;
  // throughput across cores comes from one detection worker per core instead (faces.ts).
  tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
  if (!(await tf.setBackend('wasm'))) throw new Error('the tfjs wasm backend could not start');
  await tf.ready();
  const modelDir = join(dirname(require.resolve('@vladmandic/human')), '..', 'models');
  const [topology, weights] = await Promise.all([readFile(join(modelDir, 'blazeface.json'), 'utf8'), readFile(join(modelDir, 'blazeface.bin'))]);
  const { modelTopology, weightsManifest } = JSON.parse(topology);
  const loaded = await tf.loadGraphModel(
    tf.io.fromMemory({
      modelTopology,
      weightSpecs: weightsManifest.flatMap((group) => group.weights),
      weightData: weights.buffer.slice(weights.byteOffset, weights.byteOffset + weights.byteLength),
    }),
  );
  // The first run compiles and allocates (about 300 ms); later ones take the steady time.
  const warmUp = tf.zeros([1, INPUT_SIZE, INPUT_SIZE, 3]);
  tf.dispose(loaded.execute(warmUp));
  warmUp.dispose();
  model = loaded;
}

function iou(a, b) {
  const width = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  const height = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  if (!(width > 0 && height > 0)) return 0;
  return (width * height) / (a.width * a.height + b.width * b.height - width * height);
}

/**
 * Faces in an RGB raster (row-major, at most INPUT_SIZE on each side), as boxes in the raster's
 * pixels with a score from 0 to 1, best first. The raster sits in the top-left corner of the
 * model's square input, the rest is black, so its proportions are kept and no coordinate moves.
 */
export async function detectBlazeFaces(pixels, width, height, minScore) {
  if (!model) throw new Error('the face model is not loaded');
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1 || width > INPUT_SIZE || height > INPUT_SIZE) {
    throw new Error(`invalid raster size ${width}x${height} (at most ${INPUT_SIZE} a side)`);
  }
  if (!(pixels instanceof Uint8Array) || pixels.length !== width * height * 3) {
    throw new Error(`expected ${width * height * 3} RGB bytes, got ${pixels?.length}`);
  }
  // The model takes values in [-1, 1]; black padding is -1.
  const input = new Float32Array(INPUT_SIZE * INPUT_SIZE * 3).fill(-1);
  for (let row = 0; row < height; row++) {
    const from = row * width * 3;
    const to = row * INPUT_SIZE * 3;
    for (let i = 0; i < width * 3; i++) input[to + i] = pixels[from + i] / 127.5 - 1;
  }
  const tensor = tf.tensor4d(input, [1, INPUT_SIZE, INPUT_SIZE, 3]);
  const outputs = model.execute(tensor);
  tensor.dispose();
  // Four outputs, told apart by shape: score logits [1, n, 1] and regressors [1, n, 16] for the
  // 512 stride-16 anchors and the 384 stride-32 anchors.
  const byShape = new Map();
  try {
    for (const output of outputs) byShape.set(output.shape.slice(1).join('x'), await output.data());
  } finally {
    tf.dispose(outputs);
  }
  const candidates = [];
  let anchor = 0;
  for (const count of [512, 384]) {
    const logits = byShape.get(`${count}x1`);
    const regressors = byShape.get(`${count}x16`);
    if (!logits || !regressors) throw new Error(`the face model gave no ${count}-anchor output`);
    for (let i = 0; i < count; i++, anchor++) {
      const score = 1 / (1 + Math.exp(-logits[i]));
      if (score < minScore) continue;
      // Regressors: centre offset from the anchor, then width and height, in input pixels
      // (the six landmarks after them are not used).
      const centreX = ANCHORS[anchor][0] + regressors[i * 16];
      const centreY = ANCHORS[anchor][1] + regressors[i * 16 + 1];
      const boxWidth = regressors[i * 16 + 2] * BOX_SCALE;
      const boxHeight = regressors[i * 16 + 3] * BOX_SCALE;
      if (!(boxWidth > 0 && boxHeight > 0)) continue;
      candidates.push({ x: centreX - boxWidth / 2, y: centreY - boxHeight / 2, width: boxWidth, height: boxHeight, score });
    }
  }
  candidates.sort((a, b) => b.score - a.score);
  const kept = [];
  for (const face of candidates) if (kept.every((other) => iou(other, face) <= NMS_IOU)) kept.push(face);
  return kept;
}
