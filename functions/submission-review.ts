import { answer } from '../lib/api/answer.js';
import { SubmissionReviewRecord } from '../lib/api/records.js';
import { submissionReview } from '../lib/review/detail.js';
import { recordHandler, route } from './route.js';

const Review = answer('review', SubmissionReviewRecord);

/** GET /api/submissions/{id}/review: the submission, its evidence and the non-empty groups. */
export const handleSubmissionReview = recordHandler('submission', Review, (env, id) => submissionReview(env.db, id));

export const submissionReviewRoute = route('get', '/api/submissions/:id/review', 'operator', 'A submission, its evidence by group, its watchlist entry', {
  answer: Review,
  handler: handleSubmissionReview,
});
