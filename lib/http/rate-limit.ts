/**
 * Request rate limits: one token bucket per caller (an account's sessions together, a token, or an
 * address before sign-in). A bucket holds `burst` requests and refills at `perSecond`; a request
 * that finds it empty is refused with the seconds until it holds one again. Kept in this process's
 * (or Worker isolate's) memory: docs/decisions/0028-rate-limits.md says what that means with
 * several of them.
 */
export interface RateLimit {
  /** Requests a second the bucket refills with; 0 switches the limit off. */
  perSecond: number;
  /** Requests a caller may send at once after a quiet moment. */
  burst: number;
}

export type RateDecision =
  | { allowed: true }
  | {
      allowed: false;
      /** Whole seconds until one request passes again (the `Retry-After` header), at least 1. */
      retryAfterSeconds: number;
      /** True for the first refusal since the caller was last quiet long enough to fill its bucket. */
      firstRefusal: boolean;
    };

interface Bucket {
  tokens: number;
  atMs: number;
  /** Refused since the bucket was last full: a later refusal is the same episode. */
  limited: boolean;
}

export interface RateLimiter {
  take(key: string, limit: RateLimit, nowMs: number): RateDecision;
  /** Callers tracked now: never more than `maxKeys`. */
  readonly size: number;
}

/**
 * A limiter that tracks at most `maxKeys` callers: the least recently seen is forgotten first, so a
 * flood of distinct addresses costs a bounded map (a forgotten caller starts again with a full bucket).
 */
export function createRateLimiter(maxKeys: number): RateLimiter {
  const buckets = new Map<string, Bucket>();
  return {
    get size() {
      return buckets.size;
    },
    take(key, limit, nowMs) {
      if (limit.perSecond <= 0) return { allowed: true };
      const bucket = buckets.get(key) ?? { tokens: limit.burst, atMs: nowMs, limited: false };
      // Re-inserted so that the map's order is least recently seen first.
      buckets.delete(key);
      buckets.set(key, bucket);
      if (buckets.size > maxKeys) buckets.delete(buckets.keys().next().value as string);
      const elapsed = Math.max(0, nowMs - bucket.atMs);
      bucket.tokens = Math.min(limit.burst, bucket.tokens + (elapsed * limit.perSecond) / 1000);
      bucket.atMs = nowMs;
      if (bucket.tokens >= limit.burst) bucket.limited = false;
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return { allowed: true };
      }
      const firstRefusal = !bucket.limited;
      bucket.limited = true;
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / limit.perSecond)), firstRefusal };
    },
  };
}
