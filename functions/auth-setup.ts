import { z } from 'zod';
import { Password, setupFirstAdmin, Username } from '../lib/auth/accounts.js';
import { SignedIn, sessionHandler } from './auth-login.js';
import { route } from './route.js';

/** The first administrator's body: the same rules as any account. */
export const SetupBody = z.object({ username: Username, password: Password }).strict();

/** POST /api/auth/setup: the first administrator of a fresh data folder, from a loopback address only. */
export const handleSetup = sessionHandler(SetupBody, setupFirstAdmin);

export const setupRoute = route('post', '/api/auth/setup', 'public', 'Create the first administrator (loopback only, once)', {
  body: SetupBody,
  answer: SignedIn,
  handler: handleSetup,
});
