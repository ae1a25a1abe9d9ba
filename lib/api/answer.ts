import type { z } from 'zod';
import { json } from '../http/json.js';

/**
 * A route's JSON answer: its zod schema, the name the OpenAPI document gives it under
 * `components.schemas`, and the way a handler sends it. `send` takes what the schema describes, so
 * a handler that builds another shape does not compile (the test suite checks the bytes too).
 */
export interface NamedAnswer<S extends z.ZodType = z.ZodType> {
  name: string;
  schema: S;
  send(body: z.output<S>, status?: number): Response;
  /** The body as JSON text, to keep and send later with `jsonText`. */
  text(body: z.output<S>): string;
}

export function answer<S extends z.ZodType>(name: string, schema: S): NamedAnswer<S> {
  return { name, schema, send: (body, status) => json(body, status), text: (body) => JSON.stringify(body) };
}
