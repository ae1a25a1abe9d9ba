// Types for blazeface.mjs, which the bench imports from TypeScript.
export declare const INPUT_SIZE: number;
export declare function loadBlazeFace(): Promise<void>;
export declare function detectBlazeFaces(
  pixels: Uint8Array,
  width: number,
  height: number,
  minScore: number,
  inputSize?: number,
): Promise<{ x: number; y: number; width: number; height: number; score: number }[]>;
