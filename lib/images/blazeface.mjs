// BlazeFace (MediaPipe's "back camera" model, trained at 256 px) on onnxruntime-node, one thread, with
// the anchor decoding and non-maximum suppression done here in plain arithmetic. The weights are the
// ones the @vladmandic/human npm package ships in its models/ folder for tfjs, read from disk and
// rewritten in memory as an ONNX graph at load (toOnnx below): nothing is downloaded or stored.
// onnxruntime's native kernels run the model 3-4x faster than tfjs's wasm backend did (bench/faces.ts).
// Used by face-worker.mjs and by bench/faces.ts. Plain .mjs for the same reason as the worker.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const ort = require('onnxruntime-node');

// The model is all convolutions, so it runs at any height and width that are multiples of 32 once
// the graph's fixed 256 px input and its reshapes are bypassed. Its cost is nearly all multiply-adds
// over the feature maps, which grow with the input's area (189 million at 256x256): bench/faces.ts
// finds 192 px on the longest side about 1.7x faster than 256 with 21 of 24 labelled faces (256: 22),
// 160 px only 20.
/** The longest side of the product's rasters; rasters larger than the side in use are refused. */
export const INPUT_SIZE = 192;
// BlazeFace's box spans brows to mouth; grown by this factor around its centre it covers the whole
// face (forehead and chin), which is what a face crop shows and what the labelled boxes in
// test/fixtures/faces/labels.json mark (bench/faces.ts at 256 px: recall 0.50 with the model's own
// boxes, 0.92 with boxes grown 1.5x).
const BOX_SCALE = 1.5;
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

/** The tfjs graph's weights by name, as typed arrays over the .bin file. */
function readWeights(weightsManifest, bin) {
  const weights = new Map();
  let offset = 0;
  for (const spec of weightsManifest.flatMap((group) => group.weights)) {
    if (spec.dtype !== 'float32' && spec.dtype !== 'int32') throw new Error(`unexpected weight type ${spec.dtype} for ${spec.name}`);
    const count = spec.shape.reduce((a, b) => a * b, 1);
    const bytes = bin.buffer.slice(bin.byteOffset + offset, bin.byteOffset + offset + count * 4);
    offset += count * 4;
    weights.set(spec.name, { shape: spec.shape, values: spec.dtype === 'int32' ? new Int32Array(bytes) : new Float32Array(bytes) });
  }
  if (offset !== bin.length) throw new Error(`the weights take ${offset} bytes, the file has ${bin.length}`);
  return weights;
}

// Protocol buffer encoding, just what an ONNX model needs (field numbers from onnx.proto).
function varint(value) {
  const bytes = [];
  let rest = BigInt(value);
  if (rest < 0n) rest += 1n << 64n;
  do {
    let byte = Number(rest & 0x7fn);
    rest >>= 7n;
    if (rest) byte |= 0x80;
    bytes.push(byte);
  } while (rest);
  return bytes;
}
const field = (number, wireType) => varint((number << 3) | wireType);
const intField = (number, value) => [...field(number, 0), ...varint(value)];
const bytesField = (number, bytes) => [...field(number, 2), ...varint(bytes.length), ...bytes];
const stringField = (number, text) => bytesField(number, [...Buffer.from(text)]);
const ATTRIBUTE_INT = 2;
const ATTRIBUTE_STRING = 3;
const ATTRIBUTE_INTS = 7;
const TENSOR_FLOAT = 1;
const TENSOR_INT64 = 7;
const intsAttribute = (name, values) => bytesField(5, [...stringField(1, name), ...values.flatMap((value) => intField(8, value)), ...intField(20, ATTRIBUTE_INTS)]);
const intAttribute = (name, value) => bytesField(5, [...stringField(1, name), ...intField(3, value), ...intField(20, ATTRIBUTE_INT)]);
const stringAttribute = (name, text) => bytesField(5, [...stringField(1, name), ...stringField(4, text), ...intField(20, ATTRIBUTE_STRING)]);
const onnxNode = (op, inputs, outputs, attributes = []) =>
  bytesField(1, [...inputs.flatMap((name) => stringField(1, name)), ...outputs.flatMap((name) => stringField(2, name)), ...stringField(4, op), ...attributes.flat()]);
const initializer = (name, dims, type, values) =>
  bytesField(5, [...dims.flatMap((dim) => intField(1, dim)), ...intField(2, type), ...stringField(8, name), ...bytesField(9, [...new Uint8Array(values.buffer, values.byteOffset, values.byteLength)])]);
/** A float tensor of the graph's inputs (field 11) or outputs (12); string dims are named, free sizes. */
const valueInfo = (number, name, dims) =>
  bytesField(number, [
    ...stringField(1, name),
    ...bytesField(2, bytesField(1, [...intField(1, TENSOR_FLOAT), ...bytesField(2, dims.flatMap((dim) => bytesField(1, typeof dim === 'number' ? intField(1, dim) : stringField(2, dim))))])),
  ]);

const text = (attribute) => Buffer.from(attribute.s, 'base64').toString();
// TensorFlow's SAME pads the extra row and column of a stride-2 window at the end, as SAME_UPPER does.
const autoPad = (attribute) => (text(attribute) === 'SAME' ? 'SAME_UPPER' : 'VALID');
const spatial = (attribute) => attribute.list.i.map(Number).slice(1, 3);

/**
 * The tfjs graph as an ONNX model taking an NCHW float input and giving the four head
 * outputs "out0"-"out3" transposed back to NHWC, so they read as the tfjs graph's did. Only the
 * operations BlazeFace uses are known; any other fails the load.
 */
function toOnnx(modelTopology, weights) {
  const nodes = [];
  const initializers = [];
  for (const node of modelTopology.node) {
    const attr = node.attr ?? {};
    if (node.op === '_FusedConv2D') {
      // TensorFlow's filters are [height, width, in, out]; ONNX wants [out, in, height, width].
      const { shape: [kh, kw, inputs, outputs], values } = weights.get(node.input[1]);
      const filter = new Float32Array(values.length);
      for (let y = 0; y < kh; y++) for (let x = 0; x < kw; x++) for (let i = 0; i < inputs; i++) for (let o = 0; o < outputs; o++) {
        filter[((o * inputs + i) * kh + y) * kw + x] = values[((y * kw + x) * inputs + i) * outputs + o];
      }
      initializers.push(initializer(node.input[1], [outputs, inputs, kh, kw], TENSOR_FLOAT, filter), initializer(node.input[2], [outputs], TENSOR_FLOAT, weights.get(node.input[2]).values));
      const fused = attr.fused_ops.list.s.map((op) => Buffer.from(op, 'base64').toString());
      if (fused.some((op) => op !== 'BiasAdd' && op !== 'Relu')) throw new Error(`unsupported fused operations ${fused.join('+')} in ${node.name}`);
      const relu = fused.includes('Relu');
      const convolved = relu ? `${node.name}/conv` : node.name;
      nodes.push(onnxNode('Conv', node.input.slice(0, 3), [convolved], [intsAttribute('kernel_shape', [kh, kw]), intsAttribute('strides', spatial(attr.strides)), stringAttribute('auto_pad', autoPad(attr.padding))]));
      if (relu) nodes.push(onnxNode('Relu', [convolved], [node.name]));
    } else if (node.op === 'DepthwiseConv2dNative') {
      // [height, width, channels, 1] to [channels, 1, height, width], one group per channel.
      const { shape: [kh, kw, channels], values } = weights.get(node.input[1]);
      const filter = new Float32Array(values.length);
      for (let y = 0; y < kh; y++) for (let x = 0; x < kw; x++) for (let c = 0; c < channels; c++) filter[(c * kh + y) * kw + x] = values[(y * kw + x) * channels + c];
      initializers.push(initializer(node.input[1], [channels, 1, kh, kw], TENSOR_FLOAT, filter));
      nodes.push(
        onnxNode('Conv', node.input.slice(0, 2), [node.name], [
          intsAttribute('kernel_shape', [kh, kw]),
          intsAttribute('strides', spatial(attr.strides)),
          intAttribute('group', channels),
          stringAttribute('auto_pad', autoPad(attr.padding)),
        ]),
      );
    } else if (node.op === 'AddV2') {
      nodes.push(onnxNode('Add', node.input, [node.name]));
    } else if (node.op === 'Relu') {
      nodes.push(onnxNode('Relu', node.input, [node.name]));
    } else if (node.op === 'MaxPool') {
      nodes.push(onnxNode('MaxPool', node.input, [node.name], [intsAttribute('kernel_shape', spatial(attr.ksize)), intsAttribute('strides', spatial(attr.strides)), stringAttribute('auto_pad', autoPad(attr.padding))]));
    } else if (node.op === 'Pad') {
      // Channel padding of the shortcuts: TensorFlow's [[begin, end]] per NHWC axis to ONNX's
      // begins then ends in NCHW order.
      const paddings = weights.get(node.input[1]).values;
      const nchw = [0, 3, 1, 2];
      const pads = BigInt64Array.from([...nchw.map((axis) => BigInt(paddings[axis * 2])), ...nchw.map((axis) => BigInt(paddings[axis * 2 + 1]))]);
      initializers.push(initializer(node.input[1], [8], TENSOR_INT64, pads));
      nodes.push(onnxNode('Pad', node.input, [node.name]));
    } else if (!['Const', 'Placeholder', 'Reshape', 'Identity'].includes(node.op)) {
      // Reshape and Identity only flatten the heads, which are read from their convolutions instead.
      throw new Error(`unsupported operation ${node.op} in ${node.name}`);
    }
  }
  OUTPUT_NODES.forEach((name, i) => nodes.push(onnxNode('Transpose', [name], [`out${i}`], [intsAttribute('perm', [0, 2, 3, 1])])));
  const graph = [
    ...nodes.flat(),
    ...stringField(2, 'blazeface'),
    ...initializers.flat(),
    ...valueInfo(11, modelTopology.node.find((node) => node.op === 'Placeholder').name, ['batch', 3, 'height', 'width']),
    ...OUTPUT_NODES.flatMap((_, i) => valueInfo(12, `out${i}`, ['batch', 'rows', 'columns', 'values'])),
  ];
  // IR version 8, operator set 13.
  return Uint8Array.from([...intField(1, 8), ...bytesField(8, [...stringField(1, ''), ...intField(2, 13)]), ...bytesField(7, graph)]);
}

/** Loads the model once into an onnxruntime session on one thread. */
export async function loadBlazeFace() {
  if (model) return;
  const modelDir = join(dirname(require.resolve('@vladmandic/human')), '..', 'models');
  const [topology, bin] = await Promise.all([readFile(join(modelDir, 'blazeface.json'), 'utf8'), readFile(join(modelDir, 'blazeface.bin'))]);
  const { modelTopology, weightsManifest } = JSON.parse(topology);
  // One thread: the cores are used by one detection worker each (faces.ts).
  const session = await ort.InferenceSession.create(toOnnx(modelTopology, readWeights(weightsManifest, bin)), {
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  // The first run allocates; later ones take the steady time.
  await session.run({ [session.inputNames[0]]: new ort.Tensor('float32', new Float32Array(3 * INPUT_SIZE * INPUT_SIZE), [1, 3, INPUT_SIZE, INPUT_SIZE]) });
  model = session;
}

function iou(a, b) {
  const width = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  const height = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  if (!(width > 0 && height > 0)) return 0;
  return (width * height) / (a.width * a.height + b.width * b.height - width * height);
}

const paddedSide = (side) => Math.ceil(side / 32) * 32;

function checkRaster({ pixels, width, height, minScore }, maxSide) {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1 || width > maxSide || height > maxSide) {
    throw new Error(`invalid raster size ${width}x${height} (at most ${maxSide} a side)`);
  }
  if (!(pixels instanceof Uint8Array) || pixels.length !== width * height * 3) {
    throw new Error(`expected ${width * height * 3} RGB bytes, got ${pixels?.length}`);
  }
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
  const outputs = await model.run({ [model.inputNames[0]]: new ort.Tensor('float32', input, [rasters.length, 3, inputHeight, inputWidth]) });
  const values = OUTPUT_NODES.map((_, i) => outputs[`out${i}`].data);
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
    candidates.sort((a, b) => b.score - a.score);
    const kept = [];
    for (const face of candidates) if (kept.every((other) => iou(other, face) <= NMS_IOU)) kept.push(face);
    return kept;
  });
}
