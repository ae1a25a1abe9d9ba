/**
 * The one maker of JSON answers (records, lists, errors), and the Response class they are made
 * with: the platform's unless the entry chose another. The Node service chooses @whatwg-node's
 * (server.ts), which its server adapter writes in one call with the body's length; Node's own
 * Response (undici's) hands the adapter a web stream to read a chunk at a time and send chunked,
 * which cost a kept queue page twice the CPU (decisions/0060). Streamed answers (exports, bundles,
 * media) keep the platform's class, whose streams the suite covers.
 */
let JsonAnswer: typeof Response = Response;

export function answerCompleteBodiesWith(responseClass: typeof Response): void {
  JsonAnswer = responseClass;
}

/** `text` (JSON, or its UTF-8 bytes) as an answer of `status` with `headers` beside its content type. */
export function jsonAnswer(text: string | Uint8Array<ArrayBuffer>, status: number, headers: Readonly<Record<string, string>> = {}): Response {
  return new JsonAnswer(text, { status, headers: { 'content-type': 'application/json; charset=utf-8', ...headers } });
}
