import { afterAll } from 'vitest';
import { stopD1r2 } from './d1-r2.js';

// Each test file of the D1 and R2 run stops the miniflare it started.
afterAll(stopD1r2);
