// The tfjs graph models that the npm packages ship (model.json plus a .bin of weights), rewritten in
// memory as ONNX models for onnxruntime-node: nothing is downloaded or stored. Only the operations
// of the convolutional part of a detector are known (convolutions, activations, element-wise
// arithmetic, pooling, padding, up-sampling, concatenation); a graph is cut at the named outputs,
// so the decoding that follows them in tfjs (reshapes, top-k, gathers) is never converted, and any
// other operation on the way fails the load. The ONNX model takes an NCHW float input and gives
// every output transposed back to NHWC, so its values read as the tfjs graph's did. Convolutions
// a calibration names run in 8 bits, their weights in 7 (see convolution and WEIGHT_LEVELS).
// Plain .mjs: used from worker threads, which vitest and tsx do not transform reliably.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
const ort = require('onnxruntime-node');

/** An IEEE half-precision value as a float. */
function halfToFloat(half) {
  const exponent = (half >> 10) & 0x1f;
  const fraction = half & 0x3ff;
  const sign = half & 0x8000 ? -1 : 1;
  if (exponent === 0) return sign * 2 ** -14 * (fraction / 1024);
  if (exponent === 0x1f) return fraction ? NaN : sign * Infinity;
  return sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
}

let halves = null;
/** Every half-precision value as a float, made once: millions of weights are looked up. */
function halfTable() {
  halves ??= Float32Array.from({ length: 0x10000 }, (_, half) => halfToFloat(half));
  return halves;
}

/** One weight's values from its bytes, undoing tfjs's float16 or 8/16-bit affine quantisation. */
function weightValues(spec, bytes, count) {
  const stored = spec.quantization?.dtype;
  if (!stored) return spec.dtype === 'int32' ? new Int32Array(bytes) : new Float32Array(bytes);
  if (spec.dtype !== 'float32') throw new Error(`quantised ${spec.dtype} weights are not supported (${spec.name})`);
  const raw = stored === 'float16' || stored === 'uint16' ? new Uint16Array(bytes) : stored === 'uint8' ? new Uint8Array(bytes) : null;
  if (!raw || raw.length !== count) throw new Error(`quantisation ${stored} of ${spec.name} is not supported`);
  if (stored === 'float16') {
    const table = halfTable();
    return Float32Array.from(raw, (half) => table[half]);
  }
  const { scale, min } = spec.quantization;
  return Float32Array.from(raw, (value) => value * scale + min);
}

const BYTES_PER_VALUE = { float16: 2, uint16: 2, uint8: 1 };

/** The tfjs graph's weights by name, as typed arrays over the .bin file. */
function readWeights(weightsManifest, bin) {
  const weights = new Map();
  let offset = 0;
  for (const spec of weightsManifest.flatMap((group) => group.weights)) {
    if (spec.dtype !== 'float32' && spec.dtype !== 'int32') throw new Error(`unexpected weight type ${spec.dtype} for ${spec.name}`);
    const count = spec.shape.reduce((a, b) => a * b, 1);
    const size = count * (BYTES_PER_VALUE[spec.quantization?.dtype] ?? 4);
    const bytes = bin.buffer.slice(bin.byteOffset + offset, bin.byteOffset + offset + size);
    offset += size;
    weights.set(spec.name, { shape: spec.shape, values: weightValues(spec, bytes, count) });
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
// Every field is a Buffer, so that megabytes of weights are copied once, not spread into arrays.
const field = (number, wireType) => Buffer.from(varint((number << 3) | wireType));
const intField = (number, value) => Buffer.concat([field(number, 0), Buffer.from(varint(value))]);
const bytesField = (number, parts) => {
  const body = Buffer.concat([parts].flat());
  return Buffer.concat([field(number, 2), Buffer.from(varint(body.length)), body]);
};
const stringField = (number, text) => bytesField(number, Buffer.from(text));
const floatField = (number, value) => {
  const bytes = Buffer.alloc(4);
  bytes.writeFloatLE(value);
  return Buffer.concat([field(number, 5), bytes]);
};
// onnx.proto's AttributeProto.AttributeType and TensorProto.DataType codes the graphs use.
const ATTRIBUTE = { FLOAT: 1, INT: 2, STRING: 3, INTS: 7 };
const TENSOR = { FLOAT: 1, UINT8: 2, INT8: 3, INT32: 6, INT64: 7 };
/**
 * An 8-bit convolution's weights span -63..63 per output channel, not -127..127: without VNNI
 * (AVX2 alone) onnxruntime adds each two products of an 8-bit input and weight in 16 bits, which
 * 255 * 127 * 2 overflows. Full-range weights moved the fixtures' person centres by 0.66 on such
 * a CPU (machine E), where a VNNI one gave 0.026.
 */
const WEIGHT_LEVELS = 63;
const attribute = (name, type, payload) => bytesField(5, [stringField(1, name), payload, intField(20, type)]);
const intsAttribute = (name, values) => attribute(name, ATTRIBUTE.INTS, Buffer.concat(values.map((value) => intField(8, value))));
const intAttribute = (name, value) => attribute(name, ATTRIBUTE.INT, intField(3, value));
const floatAttribute = (name, value) => attribute(name, ATTRIBUTE.FLOAT, floatField(2, value));
const stringAttribute = (name, text) => attribute(name, ATTRIBUTE.STRING, stringField(4, text));
const onnxNode = (op, inputs, outputs, attributes = []) =>
  bytesField(1, [
    ...inputs.map((name) => stringField(1, name)),
    ...outputs.map((name) => stringField(2, name)),
    stringField(3, outputs[0]),
    stringField(4, op),
    ...attributes,
  ]);
const tensor = (name, dims, type, values) =>
  bytesField(5, [
    ...dims.map((dim) => intField(1, dim)),
    intField(2, type),
    stringField(8, name),
    bytesField(9, Buffer.from(values.buffer, values.byteOffset, values.byteLength)),
  ]);
/** A float tensor of the graph's inputs (field 11) or outputs (12); string dims are named, free sizes. */
const valueInfo = (number, name, dims) =>
  bytesField(number, [
    stringField(1, name),
    bytesField(
      2,
      bytesField(1, [
        intField(1, TENSOR.FLOAT),
        bytesField(
          2,
          dims.map((dim) => bytesField(1, typeof dim === 'number' ? intField(1, dim) : stringField(2, dim))),
        ),
      ]),
    ),
  ]);

const text = (value) => Buffer.from(value.s, 'base64').toString();
// TensorFlow's SAME pads the extra row and column of a stride-2 window at the end, as SAME_UPPER does.
const autoPad = (value) => (text(value) === 'SAME' ? 'SAME_UPPER' : 'VALID');
const spatial = (value) => value.list.i.map(Number).slice(1, 3);
const NHWC_TO_NCHW = [0, 3, 1, 2];
// TensorFlow's activations fused into a convolution, as ONNX nodes.
const ACTIVATIONS = {
  Relu: (input, output) => [onnxNode('Relu', [input], [output])],
  Relu6: (input, output, constant) => [onnxNode('Clip', [input, constant(0), constant(6)], [output])],
};

/** A converter for one graph: the ONNX nodes and initialisers it has written so far. */
function graphWriter(weights, calibration) {
  const nodes = [];
  const initializers = [];
  const constants = new Map();
  /** The scale of each tensor rounded to 8 bits, by the tensor's name. */
  const scales = new Map();
  const weight = (name) => {
    const found = weights.get(name);
    if (!found) throw new Error(`the weight ${name} is missing`);
    return found;
  };
  /** A float scalar as an initialiser, written once per value. */
  const constant = (value) => {
    const name = `constant/${value}`;
    if (!constants.has(name)) {
      constants.set(name, true);
      initializers.push(tensor(name, [], TENSOR.FLOAT, Float32Array.of(value)));
    }
    return name;
  };
  /** An operand of element-wise arithmetic: a per-channel vector becomes [C, 1, 1] to broadcast over NCHW. */
  const operand = (name) => {
    if (!weights.has(name) || constants.has(name)) return name;
    const { shape, values } = weight(name);
    constants.set(name, true);
    const floats = values instanceof Float32Array ? values : Float32Array.from(values);
    const dims =
      shape.length === 1 && shape[0] > 1 ? [shape[0], 1, 1] : shape.length <= 1 ? [] : shape.length === 4 ? NHWC_TO_NCHW.map((axis) => shape[axis]) : null;
    if (!dims) throw new Error(`an operand of shape [${shape}] (${name}) is not supported`);
    initializers.push(tensor(name, dims, TENSOR.FLOAT, floats));
    return name;
  };
  /** The convolution's activation, if fused, from `convolved` to `output`; the name of the result. */
  const activate = (node, fused, convolved, output) => {
    const activation = fused.find((op) => op !== 'BiasAdd');
    if (!activation) return convolved;
    if (!ACTIVATIONS[activation]) throw new Error(`unsupported fused operation ${activation} in ${node.name}`);
    nodes.push(...ACTIVATIONS[activation](convolved, output, constant));
    return output;
  };
  /** The scale and zero point of an 8-bit tensor spanning [low, high] (0 always inside), written once per tensor. */
  const quantiser = (tensorName, [low, high]) => {
    const scaleName = `${tensorName}/scale`;
    const zeroName = `${tensorName}/zero`;
    if (!scales.has(tensorName)) {
      const scale = (Math.max(0, high) - Math.min(0, low)) / 255 || 1e-6;
      scales.set(tensorName, scale);
      initializers.push(tensor(scaleName, [], TENSOR.FLOAT, Float32Array.of(scale)));
      initializers.push(tensor(zeroName, [], TENSOR.UINT8, Uint8Array.of(Math.min(255, Math.round(-Math.min(0, low) / scale)))));
    }
    return { scale: scales.get(tensorName), inputs: [scaleName, zeroName] };
  };
  /**
   * `from` rounded to 8 bits as `to`: a quantise and dequantise pair, which onnxruntime folds into
   * the integer convolutions on either side. Keyed by the tensor, so a producer and its consumers
   * round it alike.
   */
  const rounded = (from, tensorName, span, to) => {
    const q = quantiser(tensorName, span);
    nodes.push(onnxNode('QuantizeLinear', [from, ...q.inputs], [`${to}/8bit`]), onnxNode('DequantizeLinear', [`${to}/8bit`, ...q.inputs], [to]));
    return q.scale;
  };
  /** A constant dequantised per output channel (axis 0): int8 weights or int32 biases. */
  const perChannel = (name, dims, type, values, scales) => {
    const zeros = type === TENSOR.INT8 ? new Int8Array(scales.length) : new Int32Array(scales.length);
    initializers.push(
      tensor(`${name}/q`, dims, type, values),
      tensor(`${name}/s`, [scales.length], TENSOR.FLOAT, scales),
      tensor(`${name}/z`, [scales.length], type, zeros),
    );
    nodes.push(onnxNode('DequantizeLinear', [`${name}/q`, `${name}/s`, `${name}/z`], [`${name}/dq`], [intAttribute('axis', 0)]));
    return `${name}/dq`;
  };
  /** The span the calibration measured for a tensor. */
  const span = (name) => {
    const found = calibration.spans[name];
    if (!found) throw new Error(`the calibration has no span for ${name}`);
    return found;
  };
  /**
   * An 8-bit convolution's inputs: its input rounded over the span the calibration measured, its
   * weights to 8 bits per output channel, its bias (plus the calibration's correction of the mean
   * shift the rounding causes in each channel) to 32 bits.
   */
  const quantisedInputs = (node, filterDims, filterValues, fused) => {
    const outputs = filterDims[0];
    const perOutput = filterValues.length / outputs;
    const inputScale = rounded(node.input[0], node.input[0], span(node.input[0]), `${node.name}/input`);
    const weightScales = new Float32Array(outputs);
    const weights8 = new Int8Array(filterValues.length);
    for (let o = 0; o < outputs; o++) {
      const row = filterValues.subarray(o * perOutput, (o + 1) * perOutput);
      weightScales[o] = row.reduce((most, value) => Math.max(most, Math.abs(value)), 0) / WEIGHT_LEVELS || 1e-8;
      for (let i = 0; i < perOutput; i++) weights8[o * perOutput + i] = Math.round(row[i] / weightScales[o]);
    }
    const bias = fused.includes('BiasAdd') ? Float32Array.from(weight(node.input[2]).values) : new Float32Array(outputs);
    const correction = calibration.corrections[node.name];
    if (correction) for (let o = 0; o < outputs; o++) bias[o] += correction[o];
    const biasScales = weightScales.map((scale) => scale * inputScale);
    return [
      `${node.name}/input`,
      perChannel(node.input[1], filterDims, TENSOR.INT8, weights8, weightScales),
      perChannel(
        `${node.name}/bias`,
        [outputs],
        TENSOR.INT32,
        Int32Array.from(bias, (value, o) => Math.round(value / biasScales[o])),
        biasScales,
      ),
    ];
  };
  /** The float weights (and bias) of a convolution as initialisers; the convolution's inputs. */
  const floatInputs = (node, filterDims, filterValues, fused) => {
    initializers.push(tensor(node.input[1], filterDims, TENSOR.FLOAT, filterValues));
    if (!fused.includes('BiasAdd')) return [node.input[0], node.input[1]];
    initializers.push(tensor(node.input[2], [filterDims[0]], TENSOR.FLOAT, weight(node.input[2]).values));
    return [node.input[0], node.input[1], node.input[2]];
  };
  /**
   * A convolution with its fused bias and activation. One the calibration names runs in 8 bits
   * (ONNX's QDQ form, which onnxruntime runs as an integer convolution): its result is rounded to
   * 8 bits over its span (a ReLU6's is 0-6). Its output before the activation is `<name>/conv`.
   */
  const convolution = (node, filterDims, filterValues, extra) => {
    const attr = node.attr ?? {};
    const fused = (attr.fused_ops?.list?.s ?? []).map((op) => Buffer.from(op, 'base64').toString());
    if (fused.length > 2 || (fused.length > 0 && fused[0] !== 'BiasAdd')) throw new Error(`unsupported fused operations ${fused.join('+')} in ${node.name}`);
    const in8Bits = calibration?.convolutions.has(node.name) ?? false;
    const inputs = in8Bits ? quantisedInputs(node, filterDims, filterValues, fused) : floatInputs(node, filterDims, filterValues, fused);
    const convolved = fused.length > 1 || in8Bits ? `${node.name}/conv` : node.name;
    const dilations = attr.dilations ? spatial(attr.dilations) : [1, 1];
    nodes.push(
      onnxNode(
        'Conv',
        inputs,
        [convolved],
        [
          intsAttribute('kernel_shape', filterDims.slice(2)),
          intsAttribute('strides', spatial(attr.strides)),
          intsAttribute('dilations', dilations),
          stringAttribute('auto_pad', autoPad(attr.padding)),
          ...extra,
        ],
      ),
    );
    const result = activate(node, fused, convolved, in8Bits ? `${node.name}/activated` : node.name);
    if (in8Bits) rounded(result, node.name, fused.includes('Relu6') ? [0, 6] : span(node.name), node.name);
  };
  const converters = {
    _FusedConv2D: (node) => {
      // TensorFlow's filters are [height, width, in, out]; ONNX wants [out, in, height, width].
      const {
        shape: [kh, kw, inputs, outputs],
        values,
      } = weight(node.input[1]);
      const filter = new Float32Array(values.length);
      for (let y = 0; y < kh; y++)
        for (let x = 0; x < kw; x++)
          for (let i = 0; i < inputs; i++)
            for (let o = 0; o < outputs; o++) {
              filter[((o * inputs + i) * kh + y) * kw + x] = values[((y * kw + x) * inputs + i) * outputs + o];
            }
      convolution(node, [outputs, inputs, kh, kw], filter, []);
    },
    FusedDepthwiseConv2dNative: (node) => {
      // [height, width, channels, 1] to [channels, 1, height, width], one group per channel.
      const {
        shape: [kh, kw, channels, multiplier],
        values,
      } = weight(node.input[1]);
      if (multiplier !== 1) throw new Error(`depth multiplier ${multiplier} in ${node.name} is not supported`);
      const filter = new Float32Array(values.length);
      for (let y = 0; y < kh; y++)
        for (let x = 0; x < kw; x++) for (let c = 0; c < channels; c++) filter[(c * kh + y) * kw + x] = values[(y * kw + x) * channels + c];
      convolution(node, [channels, 1, kh, kw], filter, [intAttribute('group', channels)]);
    },
    DepthwiseConv2dNative: (node) => converters.FusedDepthwiseConv2dNative(node),
    Conv2D: (node) => converters._FusedConv2D(node),
    AddV2: (node) => nodes.push(onnxNode('Add', node.input.map(operand), [node.name])),
    Add: (node) => nodes.push(onnxNode('Add', node.input.map(operand), [node.name])),
    Sub: (node) => nodes.push(onnxNode('Sub', node.input.map(operand), [node.name])),
    Mul: (node) => nodes.push(onnxNode('Mul', node.input.map(operand), [node.name])),
    Relu: (node) => nodes.push(...ACTIVATIONS.Relu(node.input[0], node.name)),
    Relu6: (node) => nodes.push(...ACTIVATIONS.Relu6(node.input[0], node.name, constant)),
    Identity: (node) => nodes.push(onnxNode('Identity', [node.input[0]], [node.name])),
    // The input is given as floats already; a graph that takes integers casts them first.
    Cast: (node) => nodes.push(onnxNode('Identity', [node.input[0]], [node.name])),
    Sigmoid: (node) => nodes.push(onnxNode('Sigmoid', [node.input[0]], [node.name])),
    LeakyRelu: (node) => nodes.push(onnxNode('LeakyRelu', [node.input[0]], [node.name], [floatAttribute('alpha', node.attr?.alpha?.f ?? 0.2)])),
    MaxPool: (node) =>
      nodes.push(
        onnxNode(
          'MaxPool',
          [node.input[0]],
          [node.name],
          [
            intsAttribute('kernel_shape', spatial(node.attr.ksize)),
            intsAttribute('strides', spatial(node.attr.strides)),
            stringAttribute('auto_pad', autoPad(node.attr.padding)),
          ],
        ),
      ),
    Pad: (node) => {
      // TensorFlow's [[begin, end]] per NHWC axis to ONNX's begins then ends in NCHW order.
      const paddings = weight(node.input[1]).values;
      const name = `${node.input[1]}/nchw`;
      initializers.push(
        tensor(
          name,
          [8],
          TENSOR.INT64,
          BigInt64Array.from([...NHWC_TO_NCHW.map((axis) => BigInt(paddings[axis * 2])), ...NHWC_TO_NCHW.map((axis) => BigInt(paddings[axis * 2 + 1]))]),
        ),
      );
      nodes.push(onnxNode('Pad', [node.input[0], name], [node.name]));
    },
    Mean: (node) => {
      // Squeeze-and-excite: the mean over height and width, kept as 1x1.
      const axes = [...weight(node.input[1]).values].map((axis) => NHWC_TO_NCHW.indexOf(axis));
      nodes.push(
        onnxNode('ReduceMean', [node.input[0]], [node.name], [intsAttribute('axes', axes), intAttribute('keepdims', node.attr?.keep_dims?.b ? 1 : 0)]),
      );
    },
    ResizeBilinear: (node) => {
      // Every up-sampling in these graphs doubles the feature map; a scale (not the fixed size the
      // graph was saved with) keeps the model usable at any input size.
      const scales = `${node.name}/scales`;
      initializers.push(tensor(scales, [4], TENSOR.FLOAT, Float32Array.of(1, 1, 2, 2)));
      const mode = node.attr?.align_corners?.b ? 'align_corners' : node.attr?.half_pixel_centers?.b ? 'half_pixel' : 'asymmetric';
      nodes.push(
        onnxNode(
          'Resize',
          [node.input[0], '', scales],
          [node.name],
          [stringAttribute('mode', 'linear'), stringAttribute('coordinate_transformation_mode', mode)],
        ),
      );
    },
    ConcatV2: (node) => {
      const axis = Number(weight(node.input.at(-1)).values[0]);
      nodes.push(onnxNode('Concat', node.input.slice(0, -1), [node.name], [intAttribute('axis', NHWC_TO_NCHW.indexOf((axis + 4) % 4))]));
    },
    DepthToSpace: (node) =>
      nodes.push(
        onnxNode('DepthToSpace', [node.input[0]], [node.name], [intAttribute('blocksize', Number(node.attr.block_size.i)), stringAttribute('mode', 'DCR')]),
      ),
  };
  return { nodes, initializers, converters };
}

// The inputs of these operations that hold constants or sizes, not tensors to convert.
const TENSOR_INPUTS = { Pad: 1, Mean: 1, ResizeBilinear: 1, _FusedConv2D: 1, FusedDepthwiseConv2dNative: 1, DepthwiseConv2dNative: 1, Conv2D: 1 };

/** The graph's nodes that the named outputs depend on, inputs before the nodes that use them. */
function reachable(byName, outputs) {
  const order = [];
  const seen = new Set();
  const visit = (name) => {
    const node = byName.get(name.split(':')[0]);
    if (!node || seen.has(node.name)) return;
    seen.add(node.name);
    const inputs = node.op === 'ConcatV2' ? node.input.slice(0, -1) : (node.input?.slice(0, TENSOR_INPUTS[node.op] ?? node.input.length) ?? []);
    inputs.forEach(visit);
    order.push(node);
  };
  outputs.forEach(visit);
  return order;
}

// The ONNX graph's input, passed on to the tfjs graph's placeholder (whose name varies).
const INPUT = 'nchw_input';

/**
 * The part of a tfjs graph that gives `outputs` (node names, or `<name>/conv` for a convolution's
 * output before its activation) as an ONNX model: input INPUT (NCHW, any batch, height and width),
 * outputs "out0", "out1", ... (NHWC) in the order named. `calibration`, when given, names the
 * convolutions that run in 8 bits, with the spans of their inputs and outputs and their bias
 * corrections: { convolutions: Set, spans: { tensor: [low, high] }, corrections: { node: Float32Array } }.
 */
function toOnnx(modelTopology, weights, outputs, calibration) {
  const byName = new Map(modelTopology.node.map((node) => [node.name, node]));
  const placeholder = modelTopology.node.find((node) => node.op === 'Placeholder');
  const writer = graphWriter(weights, calibration);
  for (const node of reachable(byName, outputs)) {
    if (node.op === 'Const' || node.op === 'Placeholder') continue;
    const convert = writer.converters[node.op];
    if (!convert) throw new Error(`unsupported operation ${node.op} in ${node.name}`);
    convert(node);
  }
  outputs.forEach((name, i) => writer.nodes.push(onnxNode('Transpose', [name], [`out${i}`], [intsAttribute('perm', [0, 2, 3, 1])])));
  writer.nodes.unshift(onnxNode('Identity', [INPUT], [placeholder.name]));
  const graph = [
    ...writer.nodes,
    stringField(2, 'detector'),
    ...writer.initializers,
    valueInfo(11, INPUT, ['batch', 3, 'height', 'width']),
    ...outputs.map((_, i) => valueInfo(12, `out${i}`, ['batch', 'rows', 'columns', 'values'])),
  ];
  // IR version 8, operator set 13.
  return Buffer.concat([intField(1, 8), bytesField(8, [stringField(1, ''), intField(2, 13)]), bytesField(7, graph)]);
}

/**
 * Loads `<file>.json` and `<file>.bin` from a models folder into an onnxruntime session on one
 * thread (each detection worker has a core of its own), cut at `outputs`, with the convolutions
 * a calibration names in 8 bits (toOnnx).
 */
export async function loadGraphModel(modelDir, file, outputs, calibration = null) {
  const [topology, bin] = await Promise.all([readFile(join(modelDir, `${file}.json`), 'utf8'), readFile(join(modelDir, `${file}.bin`))]);
  const { modelTopology, weightsManifest } = JSON.parse(topology);
  return ort.InferenceSession.create(toOnnx(modelTopology, readWeights(weightsManifest, bin), outputs, calibration), {
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
}

/** Runs a session on an NCHW float input; the outputs' values in the order the session was cut. */
export async function runGraphModel(session, input, shape) {
  const outputs = await session.run({ [INPUT]: new ort.Tensor('float32', input, shape) });
  return session.outputNames.map((name) => outputs[name]);
}
