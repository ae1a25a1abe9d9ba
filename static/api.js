// The console talks only to the JSON API of CONTRACT.md section 4. Failures become ApiError with
// the server's `{error: {code, message}}`, or a `network` code when the service cannot be reached.

export class ApiError extends Error {
  constructor(code, message, status) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.status = status;
  }
}

// The session's CSRF token, sent with every state-changing request (the cookie itself is HttpOnly).
let csrfToken = null;
export function setCsrfToken(token) {
  csrfToken = token;
}

async function request(method, path, body) {
  const init = { method, headers: { accept: 'application/json' } };
  if (method !== 'GET' && csrfToken) init.headers['x-csrf-token'] = csrfToken;
  if (body !== undefined) {
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch {
    throw new ApiError('network', '서비스에 연결할 수 없습니다 (service unreachable)', 0);
  }
  const text = await response.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!response.ok) {
    const error = data && typeof data === 'object' ? data.error : null;
    // A session that expired or was revoked: the console goes back to its sign-in page.
    if (response.status === 401 && !path.startsWith('/api/auth/')) window.dispatchEvent(new CustomEvent('svc:signed-out'));
    throw new ApiError(
      typeof error?.code === 'string' ? error.code : `http_${response.status}`,
      typeof error?.message === 'string' ? error.message : `HTTP ${response.status}`,
      response.status,
    );
  }
  if (data === null) throw new ApiError('bad_response', '서버 응답을 읽을 수 없습니다 (not JSON)', response.status);
  return data;
}

const q = (params) => {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== '') search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
};
const seg = encodeURIComponent;

export const api = {
  bootstrap: () => request('GET', '/api/bootstrap'),
  reviewQueue: (params) => request('GET', `/api/review-queue${q(params)}`),
  review: (id) => request('GET', `/api/submissions/${seg(id)}/review`),
  reload: () => request('POST', '/api/submissions/reload'),
  reloadProgress: () => request('GET', '/api/submissions/reload/progress'),
  reloadReport: (id, params) => request('GET', `/api/reloads/${seg(id)}${q(params)}`),
  rerunEnrichment: (id, faceCrop) => request('POST', `/api/submissions/${seg(id)}/rerun-enrichment`, faceCrop ? { face_crop: true } : undefined),
  decide: (id, decision, note) => request('POST', `/api/submissions/${seg(id)}/decision`, note ? { decision, note } : { decision }),
  setEvidenceStatus: (id, status) => request('POST', `/api/evidence/${seg(id)}/status`, { status }),
  captureEvidencePage: (id) => request('POST', `/api/evidence/${seg(id)}/capture`),
  knowledge: (state) => request('GET', `/api/knowledge${q({ state })}`),
  promote: (id) => request('POST', `/api/knowledge/${seg(id)}/promote-watchlist`),
  exclude: (id) => request('POST', `/api/knowledge/${seg(id)}/exclude-watchlist`),
  manualSearch: (body) => request('POST', '/api/search/manual', body),
  providersHealth: () => request('GET', '/api/providers/health'),
  switchProvider: (id, enabled) => request('PATCH', `/api/providers/${seg(id)}`, { enabled }),
  emergencyDisable: () => request('POST', '/api/providers/emergency-disable'),
  auditEvents: (params) => request('GET', `/api/audit-events${q(params)}`),
  jobs: (params) => request('GET', `/api/jobs${q(params)}`),
  jobsProgress: () => request('GET', '/api/jobs/progress'),
  session: () => request('GET', '/api/auth/session'),
  login: (username, password) => request('POST', '/api/auth/login', { username, password }),
  setup: (username, password) => request('POST', '/api/auth/setup', { username, password }),
  logout: () => request('POST', '/api/auth/logout'),
  accounts: () => request('GET', '/api/accounts'),
  createAccount: (body) => request('POST', '/api/accounts', body),
  updateAccount: (id, body) => request('PATCH', `/api/accounts/${seg(id)}`, body),
  revokeSessions: (id) => request('POST', `/api/accounts/${seg(id)}/revoke-sessions`),
  tokens: () => request('GET', '/api/tokens'),
  alerts: () => request('GET', '/api/alerts'),
  createToken: (body) => request('POST', '/api/tokens', body),
  revokeToken: (id) => request('POST', `/api/tokens/${seg(id)}/revoke`),
  startBackup: () => request('POST', '/api/admin/backup'),
  backups: () => request('GET', '/api/admin/backups'),
};
