import { z } from 'zod';
import { answer } from '../lib/api/answer.js';
import { readReloadProgress } from '../lib/repo/reload-progress.js';
import type { Env } from '../lib/ports.js';
import { route } from './route.js';

const ReloadProgressAnswer = answer(
  'reloadProgress',
  z.object({
    reload: z
      .object({
        started_at: z.string(),
        phase: z.enum(['listing', 'reading']).describe('listing: the folder is listed and compared; reading: new and changed files are read and stored'),
        listed: z.number().int().describe('Files listed and compared so far'),
        to_read: z.number().int().describe('New and changed files this pass reads (known once the listing is done)'),
        read: z.number().int(),
        updated_at: z.string(),
      })
      .nullable()
      .describe('null when no reload runs'),
  }),
);

/** GET /api/submissions/reload/progress: how far the running reload has come, from any process. */
export async function handleReloadProgress(_request: Request, env: Env): Promise<Response> {
  return ReloadProgressAnswer.send({ reload: await readReloadProgress(env.db, env.clock.now()) });
}

export const reloadProgressRoute = route(
  'get',
  '/api/submissions/reload/progress',
  'operator',
  'How far the running reload has come: files listed, to read and read',
  {
    answer: ReloadProgressAnswer,
    handler: handleReloadProgress,
  },
);
