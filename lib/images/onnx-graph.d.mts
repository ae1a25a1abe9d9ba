// Types for onnx-graph.mjs, which the calibration script and its test import from TypeScript.
import type { InferenceSession, Tensor } from 'onnxruntime-node';
/** The convolutions that run in 8 bits, the spans of the tensors they round and their bias corrections. */
export interface Calibration {
  convolutions: Set<string>;
  spans: Record<string, [number, number]>;
  corrections: Record<string, Float32Array>;
}
export declare function loadGraphModel(modelDir: string, file: string, outputs: string[], calibration?: Calibration | null): Promise<InferenceSession>;
export declare function runGraphModel(session: InferenceSession, input: Float32Array, shape: number[]): Promise<Tensor[]>;
