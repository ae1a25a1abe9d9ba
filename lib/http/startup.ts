import { ServiceError } from './errors.js';
import type { Startup, StartupNeed } from '../ports.js';

/**
 * The Node service's start-up (server.ts): its database is migrated before it listens, but the work a
 * previous process left is picked up after, and until then a reload or rerun could race it (a rerun's
 * job requeued under it, owed work queued twice).
 */
export function startingGate(reason: string): Startup & { open(): void } {
  let opened = false;
  return {
    waiting: async (what) => (what === 'work' && !opened ? reason : null),
    open() {
      opened = true;
    },
  };
}

/** The routes that read the submissions folder or run jobs; every other route needs only the database. */
const WORK_ROUTES = new Set(['/api/submissions/reload', '/api/submissions/:id/rerun-enrichment']);

export const startupNeedOf = (path: string): StartupNeed => (WORK_ROUTES.has(path) ? 'work' : 'database');

/** Seconds a client is told to wait before asking again while the service starts. */
const RETRY_AFTER_S = 2;

/** The 503 a route answers while start-up is not done for it. */
export const stillStarting = (reason: string) => new ServiceError('unavailable', `starting: ${reason}; try again shortly`);
export const STARTING_HEADERS = { 'retry-after': String(RETRY_AFTER_S) };
