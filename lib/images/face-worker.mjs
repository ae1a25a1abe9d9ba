// Face detection worker: BlazeFace on onnxruntime-node, one thread (blazeface.mjs). faces.ts runs one per core.
// Plain .mjs because workers started from .ts files are not transformed reliably by vitest or tsx.
// It only sees already decoded, downscaled RGB pixels (sharp decodes in the main thread), so a
// malformed file can never reach the model. Protocol, one message per request:
//   in:  { id, width, height, pixels: Uint8Array (RGB, row-major, at most INPUT_SIZE a side), minScore }
//   out: { id, ok: true, faces: [{ x, y, width, height, score }] } in the coordinates of the pixels
//        { id, ok: false, error }
//   { fatal } once, when the model cannot load: the main thread then drops this worker.
import { parentPort } from 'node:worker_threads';
import { detectBlazeFaces, loadBlazeFace } from './blazeface.mjs';

// Requests that arrived while the model was busy run together as one batch (blazeface.mjs), one
// model call for all of them (on tfjs this saved its fixed cost per call, 10-15 %; on onnxruntime a
// batch of 1 to 8 costs the same per image, bench/faces.ts). Nothing waits for a batch to fill: a
// request that finds the model idle runs at once. The cap bounds the worker's peak memory.
const MAX_BATCH = 8;

const modelReady = loadBlazeFace();
modelReady.catch((error) => {
  parentPort.postMessage({ fatal: `the face model could not be loaded: ${error instanceof Error ? error.message : String(error)}` });
});
const waiting = [];
let running = false;

parentPort.on('message', (request) => {
  waiting.push(request);
  if (!running) void drain();
});

async function drain() {
  running = true;
  try {
    await modelReady;
  } catch {
    // Reported as fatal above; the main thread drops this worker and everything it holds.
    return;
  }
  while (waiting.length > 0) {
    await answer(waiting.splice(0, MAX_BATCH));
    // Lets the requests posted during the run arrive, to join the next batch.
    await new Promise((resolve) => setImmediate(resolve));
  }
  running = false;
}

async function answer(requests) {
  try {
    const found = await detectBlazeFaces(requests);
    requests.forEach((request, i) => parentPort.postMessage({ id: request.id, ok: true, faces: found[i] }));
  } catch (error) {
    if (requests.length === 1) {
      parentPort.postMessage({ id: requests[0].id, ok: false, error: error instanceof Error ? error.message : String(error) });
      return;
    }
    // One bad request must not fail the others: each runs again on its own.
    for (const request of requests) await answer([request]);
  }
}
