// BlazeFace (MediaPipe's "back camera" model, trained at 256 px) on onnxruntime-node, one thread, with
// the anchor decoding and non-maximum suppression done here in plain arithmetic. The weights are the
// ones the @vladmandic/human npm package ships in its models/ folder for tfjs, rewritten in memory as
// an ONNX graph at load (onnx-graph.mjs): nothing is downloaded or stored.
// Used by detection-worker.mjs and by bench/faces.ts. Plain .mjs for the same reason as the worker.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { checkRgbRaster, iou, suppress } from './boxes.mjs';
import { loadGraphModel, runGraphModel } from './onnx-graph.mjs';

const require = createRequire(import.meta.url);

// The model is all convolutions, so it runs at any height and width that are multiples of 32 once
// the graph's fixed 256 px input and its reshapes are bypassed. Its cost is nearly all multiply-adds
// over the feature maps, which grow with the input's area (189 million at 256x256). The sides the
// product uses are chosen in faces.ts (WHOLE_PICTURE, HEAD_REGION).
/** The largest side a raster may have unless the caller allows more (the warm-up run's side). */
export const INPUT_SIZE = 192;
// BlazeFace's box spans brows to mouth; grown by this factor around its centre it covers the whole
// face (forehead and chin) as the labelled boxes of test/fixtures/faces mark it. On the tuning faces
// the median box is then as wide as its label and 5 % taller (IoU 0.80); grown 1.5 times, as it was,
// a sixth to a fifth larger each way (IoU 0.69), which cost held-out faces at IoU 0.4 (decisions/0073).
const BOX_SCALE = 1.3;
// Neighbouring anchors fire on the same face; of boxes overlapping more than this the best survives.
const NMS_IOU = 0.3;

// The four convolutions whose outputs, reshaped, the graph returns: score logits and box
// regressors for the stride-16 grid (two anchors per cell), then for the stride-32 grid (six).
const HEADS = [
  { stride: 16, perCell: 2, logits: 'conv2d_33', regressors: 'conv2d_35' },
  { stride: 32, perCell: 6, logits: 'conv2d_34', regressors: 'conv2d_36' },
];
const nodeName = (conv) => `StatefulPartitionedCall/functional_1/${conv}/BiasAdd`;
const OUTPUT_NODES = HEADS.flatMap((head) => [nodeName(head.logits), nodeName(head.regressors)]);

/** Anchor centres in input pixels per head, in the order of its outputs (row, column, anchor). */
function anchorsFor(inputHeight, inputWidth) {
  return HEADS.map(({ stride, perCell }) => {
    const centres = [];
    for (let row = 0; row < inputHeight / stride; row++) {
      for (let column = 0; column < inputWidth / stride; column++) {
        for (let i = 0; i < perCell; i++) centres.push([(column + 0.5) * stride, (row + 0.5) * stride]);
      }
    }
    return centres;
  });
}

let model = null;
const anchorCache = new Map();

/** Loads the model once into an onnxruntime session on one thread. */
export async function loadBlazeFace() {
  if (model) return;
  const session = await loadGraphModel(join(dirname(require.resolve('@vladmandic/human')), '..', 'models'), 'blazeface', OUTPUT_NODES);
  // The first run allocates; later ones take the steady time.
  await runGraphModel(session, new Float32Array(3 * INPUT_SIZE * INPUT_SIZE), [1, 3, INPUT_SIZE, INPUT_SIZE]);
  model = session;
}

const paddedSide = (side) => Math.ceil(side / 32) * 32;

function checkRaster(raster, maxSide) {
  checkRgbRaster(raster, maxSide);
  const { minScore } = raster;
  if (!(minScore >= 0 && minScore <= 1)) throw new Error(`minScore must be between 0 and 1, got ${minScore}`);
}

/**
 * Faces in each RGB raster (row-major, at most maxSide on each side), as boxes in the raster's
 * pixels with a score from 0 to 1, best first, one list per raster in the order given. Each raster
 * sits in the top-left corner of an input whose sides are its own rounded up to multiples of 32,
 * the rest black, so no coordinate moves and a 3:2 photo costs two thirds of a square. Rasters
 * whose inputs have the same size run through the model as one batch: every model operation costs
 * a fixed time on top of its arithmetic, which a batch pays once. A raster's faces do not depend on
 * what it is batched with. Throws, before running anything, if any raster is malformed.
 */
export async function detectBlazeFaces(rasters, maxSide = INPUT_SIZE) {
  if (!model) throw new Error('the face model is not loaded');
  if (!(Number.isInteger(maxSide) && maxSide >= 32)) throw new Error(`invalid largest side ${maxSide}`);
  for (const raster of rasters) checkRaster(raster, maxSide);
  const batches = new Map();
  rasters.forEach((raster, index) => {
    const key = `${paddedSide(raster.height)}x${paddedSide(raster.width)}`;
    if (!batches.has(key)) batches.set(key, []);
    batches.get(key).push(index);
  });
  const found = new Array(rasters.length);
  for (const indices of batches.values()) {
    const batch = indices.map((index) => rasters[index]);
    const faces = await detectBatch(batch, paddedSide(batch[0].height), paddedSide(batch[0].width));
    indices.forEach((index, i) => (found[index] = faces[i]));
  }
  return found;
}

// A face seen in a raster and in its mirror image is the same face when the two boxes, the second
// mirrored back, overlap by at least this much.
const SAME_FACE_IOU = 0.5;

/**
 * Faces in each raster (as detectBlazeFaces) from `minScore`, and those from `confirmScore` up to
 * it that the raster's mirror image shows too, from `confirmScore`: a face is a face either way
 * round, where a pattern that scores near the line by chance seldom does so mirrored. Only rasters
 * with such a face are run again, mirrored.
 */
export async function detectConfirmedFaces(rasters, { minScore, confirmScore }, maxSide = INPUT_SIZE) {
  if (!(confirmScore >= 0 && confirmScore <= minScore && minScore <= 1))
    throw new Error(`confirmScore must be from 0 to minScore, and minScore at most 1: got ${confirmScore} and ${minScore}`);
  const found = await detectBlazeFaces(
    rasters.map((raster) => ({ ...raster, minScore: confirmScore })),
    maxSide,
  );
  const doubtful = found.flatMap((faces, index) => (faces.some(({ score }) => score < minScore) ? [index] : []));
  const mirrored = await detectBlazeFaces(
    doubtful.map((index) => ({ ...mirror(rasters[index]), minScore: confirmScore })),
    maxSide,
  );
  const seenMirrored = new Map(doubtful.map((index, at) => [index, mirrored[at].map((face) => ({ ...face, x: rasters[index].width - face.x - face.width }))]));
  return found.map((faces, index) =>
    faces.filter((face) => face.score >= minScore || (seenMirrored.get(index) ?? []).some((other) => iou(other, face) >= SAME_FACE_IOU)),
  );
}

/** The RGB raster mirrored left to right (raster.ts's orientPixels is TypeScript, which this process does not load). */
function mirror({ pixels, width, height }) {
  const out = new Uint8Array(pixels.length);
  for (let row = 0; row < height; row++) {
    for (let column = 0; column < width; column++) {
      const from = (row * width + column) * 3;
      const to = (row * width + width - 1 - column) * 3;
      out[to] = pixels[from];
      out[to + 1] = pixels[from + 1];
      out[to + 2] = pixels[from + 2];
    }
  }
  return { pixels: out, width, height };
}

/** One model run over rasters that share the input size inputHeight x inputWidth. */
async function detectBatch(rasters, inputHeight, inputWidth) {
  // The model takes values in [-1, 1], one plane per colour (NCHW); black padding is -1.
  const plane = inputHeight * inputWidth;
  const input = new Float32Array(rasters.length * 3 * plane).fill(-1);
  rasters.forEach(({ pixels, width, height }, image) => {
    for (let row = 0; row < height; row++) {
      for (let column = 0; column < width; column++) {
        const from = (row * width + column) * 3;
        const to = image * 3 * plane + row * inputWidth + column;
        input[to] = pixels[from] / 127.5 - 1;
        input[to + plane] = pixels[from + 1] / 127.5 - 1;
        input[to + 2 * plane] = pixels[from + 2] / 127.5 - 1;
      }
    }
  });
  const values = (await runGraphModel(model, input, [rasters.length, 3, inputHeight, inputWidth])).map((output) => output.data);
  const key = `${inputHeight}x${inputWidth}`;
  if (!anchorCache.has(key)) anchorCache.set(key, anchorsFor(inputHeight, inputWidth));
  const anchors = anchorCache.get(key);
  return rasters.map(({ minScore }, image) => {
    const candidates = [];
    HEADS.forEach((_, head) => {
      const count = anchors[head].length;
      const logits = values[head * 2].subarray(image * count, (image + 1) * count);
      const regressors = values[head * 2 + 1].subarray(image * count * 16, (image + 1) * count * 16);
      anchors[head].forEach(([anchorX, anchorY], i) => {
        const score = 1 / (1 + Math.exp(-logits[i]));
        if (score < minScore) return;
        // Sixteen regressors per anchor: centre offset from the anchor, then width and height, in
        // input pixels (six landmarks follow, not used here).
        const centreX = anchorX + regressors[i * 16];
        const centreY = anchorY + regressors[i * 16 + 1];
        const boxWidth = regressors[i * 16 + 2] * BOX_SCALE;
        const boxHeight = regressors[i * 16 + 3] * BOX_SCALE;
        if (!(boxWidth > 0 && boxHeight > 0)) return;
        candidates.push({ x: centreX - boxWidth / 2, y: centreY - boxHeight / 2, width: boxWidth, height: boxHeight, score });
      });
    });
    return suppress(candidates, NMS_IOU);
  });
}
