// Detection process: BlazeFace (blazeface.mjs) and the people model (people-model.mjs) on
// onnxruntime-node, in a child process of its own (faces.ts runs one per core), so that a crash or
// a kill at the deadline ends only this process. Plain .mjs: it runs on plain node.
// It only sees already decoded, downscaled RGB pixels (sharp decodes in the main thread), so a
// malformed file can never reach a model. Protocol, one message per request, answered in turn:
//   in:  { id, stage: 'coarse', faceRaster, peopleRaster, faceScore, personScore, personLimit }
//        { id, stage: 'fine', regions: [raster], faceScore, confirmScore }
//        where a raster is { width, height, pixels: Uint8Array (RGB, row-major) }
//   out: { id, ok: true, faces, people, peopleCapped } for 'coarse' (boxes in each raster's pixels)
//        { id, ok: true, faces: [faces of each region] } for 'fine'
//        { id, ok: false, error }
//   { ready: true } once the models are loaded, { running: id } as a request starts (its deadline
//   counts from there), { fatal } once when a model cannot load: the main thread then drops this process.
import { detectBlazeFaces, detectConfirmedFaces, loadBlazeFace } from './blazeface.mjs';
import { detectPeople, loadPeopleModel } from './people-model.mjs';

/** The largest raster a face stage accepts on a side (faces.ts sends a wide picture's whole at up to 384, regions at 128). */
const MAX_SIDE = 384;
/** The largest raster the people model accepts on a side (faces.ts sends a wide picture at up to 1024). */
const PEOPLE_MAX_SIDE = 1024;

const modelsReady = Promise.all([loadBlazeFace(), loadPeopleModel()]);
modelsReady.then(
  () => process.send({ ready: true }),
  (error) => {
    process.send({ fatal: `the detection models could not be loaded: ${error instanceof Error ? error.message : String(error)}` });
  },
);
const waiting = [];
let running = false;

// The service that started it is gone: nothing will ask again.
process.on('disconnect', () => process.exit(0));
process.on('message', (request) => {
  waiting.push(request);
  if (!running) void drain();
});

async function drain() {
  running = true;
  try {
    await modelsReady;
  } catch {
    // Reported as fatal above; the main thread drops this worker and everything it holds.
    return;
  }
  while (waiting.length > 0) await answer(waiting.shift());
  running = false;
}

async function answer(request) {
  process.send({ running: request.id });
  try {
    process.send({ id: request.id, ok: true, ...(await run(request)) });
  } catch (error) {
    process.send({ id: request.id, ok: false, error: error instanceof Error ? error.message : String(error) });
  }
}

async function run({ stage, faceRaster, peopleRaster, regions, faceScore, confirmScore, personScore, personLimit }) {
  if (stage === 'coarse') {
    const [faces] = await detectBlazeFaces([{ ...faceRaster, minScore: faceScore }], MAX_SIDE);
    const { people, capped } = await detectPeople(peopleRaster, { minScore: personScore, limit: personLimit, maxSide: PEOPLE_MAX_SIDE });
    return { faces, people, peopleCapped: capped };
  }
  if (stage === 'fine') {
    if (!Array.isArray(regions)) throw new Error('regions must be a list of rasters');
    return {
      faces: regions.length ? await detectConfirmedFaces(regions, { minScore: faceScore, confirmScore }, MAX_SIDE) : [],
    };
  }
  throw new Error(`unknown stage ${stage}`);
}
