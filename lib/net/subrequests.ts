import type { Fetcher } from '../images/http-service.js';
import type { QueueLike } from '../jobs/queue.js';
import type { BlobStore, Egress, Subrequests } from '../ports.js';

/**
 * A Worker invocation may make at most 1,000 subrequests: fetches, calls through a service binding
 * (the image service), queue sends and operations on R2 (counted together here, the stricter reading). Going over fails the invocation in production only
 * (miniflare does not count), so the Worker counts them here and throws the moment one more would
 * pass the limit, and work that scales with the data (the reload) asks how many are left before it
 * starts what it can finish. The Node service has no such limit: its budget never runs out.
 */
export const SUBREQUEST_LIMIT = 1000;

export class SubrequestLimitExceeded extends Error {
  constructor(limit: number) {
    super(`Worker limit: more than ${limit} subrequests (R2, the image service, outbound fetches) in one invocation`);
    this.name = 'SubrequestLimitExceeded';
  }
}

export interface SubrequestBudget extends Subrequests {
  /** Counts one; throws SubrequestLimitExceeded when none is left. */
  take(): void;
}

export const unlimitedSubrequests: Subrequests = { left: () => Number.POSITIVE_INFINITY };

export function subrequestBudget(limit = SUBREQUEST_LIMIT): SubrequestBudget {
  let used = 0;
  return {
    left: () => limit - used,
    take() {
      if (used >= limit) throw new SubrequestLimitExceeded(limit);
      used++;
    },
  };
}

/** The blob store with each operation counted (an R2 list is one operation per page). */
export function countedBlobStore(store: BlobStore, budget: SubrequestBudget): BlobStore {
  return {
    get: (key) => (budget.take(), store.get(key)),
    head: (key) => (budget.take(), store.head(key)),
    put: (key, bytes) => (budget.take(), store.put(key, bytes)),
    delete: (key) => (budget.take(), store.delete(key)),
    list: (prefix, options) => (budget.take(), store.list(prefix, options)),
  };
}

export function countedFetcher(fetcher: Fetcher, budget: SubrequestBudget): Fetcher {
  return (request) => (budget.take(), fetcher(request));
}

/** Outbound requests counted; the limit throws (egress otherwise answers with values) as it is not the peer's doing. */
export function countedEgress(egress: Egress, budget: SubrequestBudget): Egress {
  return (request) => (budget.take(), egress(request));
}

export function countedQueue(queue: QueueLike, budget: SubrequestBudget): QueueLike {
  return { sendBatch: (messages) => (budget.take(), queue.sendBatch(messages)) };
}
