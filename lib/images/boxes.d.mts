// Types for boxes.mjs, which faces.ts imports from TypeScript.
export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}
export declare function clamp(value: number, min: number, max: number): number;
export declare function overlap(a: Box, b: Box): number;
export declare function iou(a: Box, b: Box): number;
export declare function suppress<T extends Box & { score: number }>(boxes: T[], threshold: number): T[];
export declare function checkRgbRaster(raster: { pixels: Uint8Array; width: number; height: number }, maxSide: number): void;
