import { Response as WhatwgResponse } from '@whatwg-node/fetch';
import { answerCompleteBodiesWith } from '../../lib/http/json-answer.js';

// The Node suite's handlers answer JSON with the class the Node service answers it with (server.ts);
// the D1/R2 suite keeps the platform's, standing for the Worker runtime's.
answerCompleteBodiesWith(WhatwgResponse as typeof Response);
