// The people model as the service runs it, its backbone in 8 bits (people-calibration.json), against
// the same graph in float: where it puts people and how sure it is. These pictures are among the
// calibration's (the tuning sets), so this says the file fits the model, not how the model does on
// pictures the file was not made on: bench/faces.ts reports that on the held-out sets.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { InferenceSession } from 'onnxruntime-node';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadGraphModel, runGraphModel } from '../../lib/images/onnx-graph.mjs';
import { isPeak, PEOPLE_MODEL, parseCalibration, peopleInput } from '../../lib/images/people-model.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const PICTURES = ['test/fixtures/images/astronaut.png', ...[1, 2, 3, 4, 5, 6].map((n) => `node_modules/@vladmandic/face-api/demo/sample${n}.jpg`)];
const calibration = () => parseCalibration(JSON.parse(readFileSync(PEOPLE_MODEL.calibration, 'utf8')));
const sigmoid = (value: number) => 1 / (1 + Math.exp(-value));

/** The person-centre heat map (as scores) of each picture at 384 px. */
async function centres(session: InferenceSession): Promise<{ scores: number[]; columns: number }[]> {
  const maps = [];
  for (const file of PICTURES) {
    const { data, info } = await sharp(path.join(ROOT, file)).removeAlpha().resize(384, 384, { fit: 'inside' }).raw().toBuffer({ resolveWithObject: true });
    const { input, shape } = peopleInput({ pixels: data, width: info.width, height: info.height });
    const [centre] = await runGraphModel(session, input, shape);
    maps.push({ scores: Array.from(centre!.data as Float32Array, sigmoid), columns: centre!.dims[2]! });
  }
  return maps;
}

/** The cells scoring at least `min` that are peaks as detectPeople reads them. */
function peaks({ scores, columns }: { scores: number[]; columns: number }, min: number): number[] {
  const rows = scores.length / columns;
  return scores.flatMap((score, cell) => (score >= min && isPeak(scores, rows, columns, Math.floor(cell / columns), cell % columns) ? [cell] : []));
}

describe('the people model in 8 bits', () => {
  let float: { scores: number[]; columns: number }[];
  beforeAll(async () => {
    float = await centres(await loadGraphModel(PEOPLE_MODEL.dir(), PEOPLE_MODEL.file, PEOPLE_MODEL.outputs));
  });

  it('scores the float model’s person centres within a few hundredths, and finds the same people', async () => {
    const rounded = await centres(await loadGraphModel(PEOPLE_MODEL.dir(), PEOPLE_MODEL.file, PEOPLE_MODEL.outputs, calibration()));
    const differences = float.flatMap((map, i) => peaks(map, 0.3).map((cell) => Math.abs(map.scores[cell]! - rounded[i]!.scores[cell]!)));
    // With the file: 22 centres, 0.030 apart on average, 0.159 at most; without its bias
    // corrections 0.090 and 0.389. With weights over -127..127 on a CPU without VNNI, where
    // onnxruntime's sums of two products overflow 16 bits: 0.66 on average.
    expect(differences.length).toBeGreaterThanOrEqual(15);
    expect(differences.reduce((a, b) => a + b, 0) / differences.length).toBeLessThan(0.035);
    expect(Math.max(...differences)).toBeLessThan(0.2);
    // Every person the float model is sure of (0.6) is one the 8-bit model reports (0.4) within a
    // cell, and back. Of the fixtures' people between 0.5 and 0.6, one (0.52) is 0.36 in 8 bits.
    const near = (cell: number, cells: number[], columns: number) =>
      cells.some((other) => Math.abs(Math.floor(other / columns) - Math.floor(cell / columns)) <= 1 && Math.abs((other % columns) - (cell % columns)) <= 1);
    float.forEach((map, i) => {
      const other = rounded[i]!;
      expect(peaks(map, 0.6).every((cell) => near(cell, peaks(other, 0.4), map.columns))).toBe(true);
      expect(peaks(other, 0.6).every((cell) => near(cell, peaks(map, 0.4), map.columns))).toBe(true);
    });
  });

  it('refuses a calibration that misses the span of a tensor it rounds', async () => {
    const { convolutions, corrections } = calibration();
    await expect(loadGraphModel(PEOPLE_MODEL.dir(), PEOPLE_MODEL.file, PEOPLE_MODEL.outputs, { convolutions, spans: {}, corrections })).rejects.toThrow(
      /^the calibration has no span for StatefulPartitionedCall\/.+\/expanded_conv_project_BN\/FusedBatchNormV3$/,
    );
  });
});
