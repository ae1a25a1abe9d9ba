import { runAnalyseJob, runIndexJob } from '../matching/analysis.js';
import { runEnrichJob } from '../enrichment/pipeline.js';
import { runBackupJob } from './backup.js';
import type { JobHandler } from './loops.js';
import type { JobType } from '../repo/jobs.js';

/** What each job type does, wherever it runs (the Node runner, the Worker's queue consumer). */
export const JOB_HANDLERS: Record<JobType, JobHandler> = {
  analyse: runAnalyseJob,
  enrich: runEnrichJob,
  index: runIndexJob,
  backup: runBackupJob,
};
