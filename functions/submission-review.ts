import { answer } from '../lib/api/answer.js';
import { SubmissionReviewRecord } from '../lib/api/records.js';
import { submissionReview } from '../lib/review/detail.js';
import { pathParam, type ParamRequest } from '../lib/http/params.js';
import type { Env } from '../lib/ports.js';
import type { RouteSpec } from './route.js';

const Review = answer('review', SubmissionReviewRecord);

/** GET /api/submissions/{id}/review: the submission, its evidence and the non-empty groups. */
export async function handleSubmissionReview(request: ParamRequest, env: Env): Promise<Response> {
  const id = pathParam(request, 'id', 'submission');
  return Review.send(await submissionReview(env.db, id));
}

export const submissionReviewRoute: RouteSpec = {
  method: 'get',
  path: '/api/submissions/:id/review',
  access: 'operator',
  summary: 'A submission with its evidence by group and its watchlist entry',
  answer: Review,
  handler: handleSubmissionReview,
};
