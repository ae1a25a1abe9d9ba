import { json } from '../lib/http/json.js';
import { submissionReview } from '../lib/review/detail.js';
import { pathParam, type ParamRequest } from '../lib/http/params.js';
import type { Env } from '../lib/ports.js';

/** GET /api/submissions/{id}/review: the submission, its evidence and the non-empty groups. */
export async function handleSubmissionReview(request: ParamRequest, env: Env): Promise<Response> {
  const id = pathParam(request, 'id', 'submission');
  return json(await submissionReview(env.db, id));
}
