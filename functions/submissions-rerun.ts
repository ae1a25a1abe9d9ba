import { z } from 'zod';
import { answer } from '../lib/api/answer.js';
import { EvidenceRecord, SubmissionRecord } from '../lib/api/records.js';
import { enrichSubmission } from '../lib/enrichment/pipeline.js';
import { conflict, notFound } from '../lib/http/errors.js';
import { readBody } from '../lib/http/json.js';
import { auditStatement } from '../lib/repo/audit.js';
import { getSubmission, getSubmissionRow } from '../lib/repo/submissions.js';
import { pathParam, type ParamRequest } from '../lib/http/params.js';
import type { Env } from '../lib/ports.js';
import { route } from './route.js';

export const RerunBody = z.object({ face_crop: z.boolean().optional() }).strict();

const Rerun = answer('rerun', z.object({ submission: SubmissionRecord, evidence_added: z.array(EvidenceRecord) }));

/** POST /api/submissions/{id}/rerun-enrichment: the flow again, then the summary; answers when done. */
export async function handleSubmissionRerun(request: ParamRequest, env: Env): Promise<Response> {
  const id = pathParam(request, 'id', 'submission');
  const body = await readBody(request, env.config.SVC_MAX_BODY_BYTES, RerunBody);
  const row = await getSubmissionRow(env.db, id);
  if (!row) throw notFound(`unknown submission: ${id}`);
  if (row.analysis_status !== 'done')
    throw conflict(`submission ${id} has no analysed image (${row.analysis_status}${row.analysis_error ? `: ${row.analysis_error}` : ''})`);
  const faceCrop = body.face_crop ?? env.config.SVC_GLOBAL_FACE_CROP_SEARCH;
  const result = await enrichSubmission(env, id, { faceCrop });
  await auditStatement(
    env.db,
    {
      action: 'submission.rerun',
      target_type: 'submission',
      target_id: id,
      details: { face_crop: faceCrop, status: result.status, evidence_added: result.added.length },
    },
    env.clock.now().toISOString(),
    env.actor,
  ).run();
  // Removed by a reload while its enrichment ran: nothing is left to show.
  const submission = await getSubmission(env.db, id);
  if (!submission) throw notFound(`unknown submission: ${id}`);
  return Rerun.send({ submission, evidence_added: result.added });
}

export const rerunRoute = route('post', '/api/submissions/:id/rerun-enrichment', 'operator', 'Run enrichment again', {
  body: RerunBody,
  answer: Rerun,
  handler: handleSubmissionRerun,
});
