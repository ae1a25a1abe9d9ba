/**
 * Writes lib/images/people-calibration.json, which makes the people model's backbone run in 8 bits
 * (decisions/0070): `npm run calibrate:people`, about 3 minutes. Run it again when the model, the
 * tuning pictures or the rules below change; the same pictures give the same file.
 *
 * - Which convolutions: the MobileNetV2 backbone's, but its first three. Those three run at half
 *   the input's size for 5 % of the model's work and moved the person scores most when rounded.
 *   The feature pyramid and the heads stay in float (their outputs span thousands).
 * - Spans: each rounded tensor's 0.01 % and 99.99 % values on each picture, the widest over all.
 * - Bias corrections: convolution by convolution in the graph's order, the mean by which each
 *   output channel before its activation falls short of the float model's on the pictures, with
 *   every earlier convolution already rounded and corrected. Corrected all at once, each one would
 *   answer for errors the ones before it had already taken away.
 * - Pictures: the tuning sets' (test/fixtures/faces/labels.json and debian-set.json,
 *   test/fixtures/people/tuning-set.json) at 384 px on the longer side, as the people pass sees
 *   them. The held-out sets are never read.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { InferenceSession, Tensor } from 'onnxruntime-node';
import sharp from 'sharp';
import { type Calibration, loadGraphModel, runGraphModel } from '../lib/images/onnx-graph.mjs';
import { type CalibrationFile, PEOPLE_MODEL, peopleInput } from '../lib/images/people-model.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const LABELS = ['test/fixtures/faces/labels.json', 'test/fixtures/faces/debian-set.json', 'test/fixtures/people/tuning-set.json'];
const SIDE = 384;
const TAIL = 0.0001;
const FLOAT_FIRST = 3;

interface GraphNode {
  name: string;
  op: string;
  input?: string[];
  attr?: { fused_ops?: { list?: { s?: string[] } } };
}

type Input = ReturnType<typeof peopleInput>;

async function pictures(): Promise<Input[]> {
  const files = new Set<string>();
  for (const labels of LABELS) {
    const parsed = JSON.parse(readFileSync(path.join(ROOT, labels), 'utf8')) as { images: { file: string }[] } | { file: string }[];
    for (const { file } of Array.isArray(parsed) ? parsed : parsed.images) files.add(path.resolve(ROOT, file));
  }
  const found = [...files].filter((file) => existsSync(file));
  if (found.length < files.size) throw new Error(`${files.size - found.length} tuning pictures are not installed (bench/faces.ts names the packages)`);
  return Promise.all(
    found.map(async (file) => {
      const { data, info } = await sharp(file)
        .rotate()
        .removeAlpha()
        .resize(SIDE, SIDE, { fit: 'inside', withoutEnlargement: true })
        .raw()
        .toBuffer({ resolveWithObject: true });
      return peopleInput({ pixels: data, width: info.width, height: info.height });
    }),
  );
}

/** The backbone's convolutions that run in 8 bits, in the graph's order. */
function backbone(nodes: GraphNode[]): GraphNode[] {
  const convolutions = nodes.filter((node) => /Conv2D|Depthwise/.test(node.op) && node.name.includes('/model/'));
  return convolutions.slice(FLOAT_FIRST);
}

const fusedOps = (node: GraphNode) => (node.attr?.fused_ops?.list?.s ?? []).map((op) => Buffer.from(op, 'base64').toString());
/** A convolution's output before its activation, as toOnnx names it. */
const beforeActivation = (node: GraphNode, in8Bits: boolean) => (in8Bits || fusedOps(node).length > 1 ? `${node.name}/conv` : node.name);

/** Each extra output's values (after the model's own outputs) on every picture, handed to `take`. */
async function outputsOn(session: InferenceSession, inputs: Input[], take: (extra: Tensor[]) => void): Promise<void> {
  for (const { input, shape } of inputs) take((await runGraphModel(session, input, shape)).slice(PEOPLE_MODEL.outputs.length));
}

/** `means` (new if not given) plus a picture's mean per output channel (the last axis), as its share of `pictures`. */
function addChannelMeans(means: Float64Array | undefined, tensor: Tensor, pictures: number): Float64Array {
  const sums = means ?? new Float64Array(tensor.dims.at(-1)!);
  const values = tensor.data as Float32Array;
  const share = sums.length / values.length / pictures;
  for (let i = 0; i < values.length; i++) sums[i % sums.length]! += values[i]! * share;
  return sums;
}

function tails(values: Float32Array): [number, number] {
  const sorted = Float32Array.from(values).sort();
  return [sorted[Math.floor(TAIL * sorted.length)]!, sorted[Math.min(sorted.length - 1, Math.floor((1 - TAIL) * sorted.length))]!];
}

async function main(): Promise<void> {
  const dir = PEOPLE_MODEL.dir();
  const { modelTopology } = JSON.parse(readFileSync(path.join(dir, `${PEOPLE_MODEL.file}.json`), 'utf8')) as { modelTopology: { node: GraphNode[] } };
  const convolutions = backbone(modelTopology.node);
  const inputs = await pictures();
  const load = (outputs: string[], calibration: Calibration | null) =>
    loadGraphModel(dir, PEOPLE_MODEL.file, [...PEOPLE_MODEL.outputs, ...outputs], calibration);

  // Spans: every rounded input, and every output a ReLU6 does not bound.
  const rounded = [...new Set(convolutions.flatMap((node) => [node.input![0]!, ...(fusedOps(node).includes('Relu6') ? [] : [node.name])]))];
  const spans: Record<string, [number, number]> = Object.fromEntries(rounded.map((name) => [name, [0, 0]]));
  const targets: Float64Array[] = [];
  await outputsOn(await load([...rounded, ...convolutions.map((node) => beforeActivation(node, false))], null), inputs, (extra) => {
    rounded.forEach((name, i) => {
      const [low, high] = tails(extra[i]!.data as Float32Array);
      spans[name] = [Math.min(spans[name]![0], low), Math.max(spans[name]![1], high)];
    });
    convolutions.forEach((_, i) => (targets[i] = addChannelMeans(targets[i], extra[rounded.length + i]!, inputs.length)));
  });

  const calibration: Calibration = { convolutions: new Set(convolutions.map((node) => node.name)), spans, corrections: {} };
  for (const [index, node] of convolutions.entries()) {
    const got: Float64Array[] = [];
    await outputsOn(await load([beforeActivation(node, true)], calibration), inputs, ([output]) => (got[0] = addChannelMeans(got[0], output!, inputs.length)));
    calibration.corrections[node.name] = Float32Array.from(targets[index]!, (mean, channel) => mean - got[0]![channel]!);
    process.stdout.write(`\r${index + 1}/${convolutions.length} convolutions corrected`);
  }
  const file: CalibrationFile = {
    convolutions: [...calibration.convolutions],
    spans,
    corrections: Object.fromEntries(Object.entries(calibration.corrections).map(([name, values]) => [name, Buffer.from(values.buffer).toString('base64')])),
  };
  writeFileSync(PEOPLE_MODEL.calibration, `${JSON.stringify(file, null, 1)}\n`);
  console.log(`\n${PEOPLE_MODEL.calibration}: ${convolutions.length} convolutions from ${inputs.length} pictures`);
}

await main();
