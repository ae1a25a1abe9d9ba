// Face detection worker: tfjs on the wasm backend running face-api's tiny face detector.
// Plain .mjs because workers started from .ts files are not transformed reliably by vitest or tsx.
// It only sees already decoded, downscaled RGB pixels (sharp decodes in the main thread), so a
// malformed file can never reach the model. Protocol, one message per request:
//   in:  { id, width, height, pixels: Uint8Array (RGB, row-major), minScore }
//   out: { id, ok: true, faces: [{ x, y, width, height, score }] } in the coordinates of the pixels
//        { id, ok: false, error }
//   { fatal } once, when the model cannot load: the main thread then drops this worker.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { parentPort } from 'node:worker_threads';

const require = createRequire(import.meta.url);
const faceapi = require('@vladmandic/face-api/dist/face-api.node-wasm.js');
const { setWasmPaths } = require('@tensorflow/tfjs-backend-wasm');
const tf = faceapi.tf;

// The tiny detector's input size, the same as DETECTION_MAX_SIDE in faces.ts. bench/faces.ts: 416
// finds 21 of 24 labelled faces; 320 only 16, 224 and below almost none. SSD MobileNet was not used:
// it is slower and took the cat in chelsea.png for a face at 0.93.
const INPUT_SIZE = 416;
// Candidates below this never reach the main thread, which applies the caller's minScore.
const FLOOR_SCORE = 0.05;

async function loadModel() {
  // Both folders are read from disk: the .wasm binaries and the weights the npm packages ship.
  setWasmPaths(join(dirname(require.resolve('@tensorflow/tfjs-backend-wasm')), '/'));
  // The multithreaded wasm build would start emscripten pthread workers inside this worker.
  tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
  if (!(await tf.setBackend('wasm'))) throw new Error('the tfjs wasm backend could not start');
  await tf.ready();
  const modelDir = join(dirname(require.resolve('@vladmandic/face-api/package.json')), 'model');
  await faceapi.nets.tinyFaceDetector.loadFromDisk(modelDir);
}

const modelReady = loadModel();
modelReady.catch((error) => {
  parentPort.postMessage({ fatal: `the face model could not be loaded: ${error instanceof Error ? error.message : String(error)}` });
});
// One detection at a time keeps the peak memory of the worker at a single input tensor.
let queue = modelReady;

async function detect({ width, height, pixels, minScore }) {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    throw new Error(`invalid raster size ${width}x${height}`);
  }
  if (!(pixels instanceof Uint8Array) || pixels.length !== width * height * 3) {
    throw new Error(`expected ${width * height * 3} RGB bytes, got ${pixels?.length}`);
  }
  const input = tf.tensor3d(pixels, [height, width, 3], 'int32');
  try {
    const options = new faceapi.TinyFaceDetectorOptions({
      inputSize: INPUT_SIZE,
      scoreThreshold: Math.max(FLOOR_SCORE, minScore),
    });
    const detections = await faceapi.detectAllFaces(input, options);
    return detections.map(({ box, score }) => ({ x: box.x, y: box.y, width: box.width, height: box.height, score }));
  } finally {
    input.dispose();
  }
}

parentPort.on('message', (request) => {
  queue = queue
    .then(() => detect(request))
    .then(
      (faces) => parentPort.postMessage({ id: request.id, ok: true, faces }),
      (error) => parentPort.postMessage({ id: request.id, ok: false, error: error instanceof Error ? error.message : String(error) }),
    );
});
