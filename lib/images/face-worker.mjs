// Face detection worker: BlazeFace on tfjs's wasm backend (blazeface.mjs). faces.ts runs one per core.
// Plain .mjs because workers started from .ts files are not transformed reliably by vitest or tsx.
// It only sees already decoded, downscaled RGB pixels (sharp decodes in the main thread), so a
// malformed file can never reach the model. Protocol, one message per request:
//   in:  { id, width, height, pixels: Uint8Array (RGB, row-major, at most INPUT_SIZE a side), minScore }
//   out: { id, ok: true, faces: [{ x, y, width, height, score }] } in the coordinates of the pixels
//        { id, ok: false, error }
//   { fatal } once, when the model cannot load: the main thread then drops this worker.
import { parentPort } from 'node:worker_threads';
import { detectBlazeFaces, loadBlazeFace } from './blazeface.mjs';

const modelReady = loadBlazeFace();
modelReady.catch((error) => {
  parentPort.postMessage({ fatal: `the face model could not be loaded: ${error instanceof Error ? error.message : String(error)}` });
});
// One detection at a time keeps the peak memory of the worker at a single input tensor.
let queue = modelReady;

parentPort.on('message', (request) => {
  queue = queue
    .then(() => detectBlazeFaces(request.pixels, request.width, request.height, request.minScore))
    .then(
      (faces) => parentPort.postMessage({ id: request.id, ok: true, faces }),
      (error) => parentPort.postMessage({ id: request.id, ok: false, error: error instanceof Error ? error.message : String(error) }),
    );
});
