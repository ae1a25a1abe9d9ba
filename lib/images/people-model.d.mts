// Types for people-model.mjs, which the calibration script and its test import from TypeScript.
import type { Calibration } from './onnx-graph.mjs';
export declare const PEOPLE_MODEL: { dir: () => string; file: string; outputs: string[]; calibration: string };
export interface CalibrationFile {
  convolutions: string[];
  spans: Record<string, [number, number]>;
  corrections: Record<string, string>;
}
export declare function parseCalibration(file: CalibrationFile): Calibration;
export declare function isPeak(values: ArrayLike<number>, rows: number, columns: number, row: number, column: number): boolean;
export declare function peopleInput(raster: { pixels: Uint8Array; width: number; height: number }): { input: Float32Array; shape: number[] };
