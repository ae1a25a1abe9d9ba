// Types for blazeface.mjs, which the bench imports from TypeScript.
export declare const INPUT_SIZE: number;
export declare function loadBlazeFace(): Promise<void>;
export interface BlazeFaceRaster {
  pixels: Uint8Array;
  width: number;
  height: number;
  minScore: number;
}
export declare function detectBlazeFaces(
  rasters: BlazeFaceRaster[],
  maxSide?: number,
): Promise<{ x: number; y: number; width: number; height: number; score: number }[][]>;
export declare function detectConfirmedFaces(
  rasters: Omit<BlazeFaceRaster, 'minScore'>[],
  scores: { minScore: number; confirmScore: number },
  maxSide?: number,
): Promise<{ x: number; y: number; width: number; height: number; score: number }[][]>;
