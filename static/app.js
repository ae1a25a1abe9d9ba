// Entry point: loads /api/bootstrap, then routes `#/<screen>/<param>?<query>` to a screen.
// Each visit renders into a fresh container, so a slow answer for a screen the operator already
// left lands in a detached node instead of overwriting the current screen.
import { api, setCsrfToken } from './api.js';
import { h, hashLink } from './dom.js';
import { state, showError, refreshSummary } from './ui.js';
import { renderQueue } from './queue.js';
import { renderReview } from './review.js';
import { renderWatchlist } from './watchlist.js';
import { renderProviders } from './providers.js';
import { renderSearch } from './search.js';
import { renderAudit } from './audit.js';
import { renderAccounts } from './accounts.js';
import { renderApiDocs } from './apidocs.js';
import { renderSignIn } from './signin.js';

const SCREENS = {
  queue: { render: renderQueue, title: '검토 대기열' },
  review: { render: renderReview, title: '검토' },
  watchlist: { render: renderWatchlist, title: '주의 목록' },
  providers: { render: renderProviders, title: '제공자' },
  search: { render: renderSearch, title: '수동 검색' },
  audit: { render: renderAudit, title: '감사 로그' },
  accounts: { render: renderAccounts, title: '계정' },
  api: { render: renderApiDocs, title: 'API 문서' },
};

function parseHash() {
  const raw = location.hash.replace(/^#\/?/, '');
  const cut = raw.indexOf('?');
  const path = cut === -1 ? raw : raw.slice(0, cut);
  const query = new URLSearchParams(cut === -1 ? '' : raw.slice(cut + 1));
  const parts = path
    .split('/')
    .filter(Boolean)
    .map((part) => {
      try {
        return decodeURIComponent(part);
      } catch {
        return part;
      }
    });
  return { name: parts[0] ?? 'queue', params: parts.slice(1), query };
}

let current = null;

function route() {
  const { name, params, query } = parseHash();
  const screen = SCREENS[name];
  if (!screen) {
    location.replace('#/queue');
    return;
  }
  const main = document.getElementById('main');
  const container = h('section', { class: `screen screen-${name}` });
  const view = { name, params, query, root: container, isCurrent: () => current === view };
  current = view;
  main.replaceChildren(container);
  document.title = `${screen.title} · 이미지 권리 검토 콘솔`;
  for (const link of document.querySelectorAll('.mainnav a')) {
    const active = link.dataset.route === name || (name === 'review' && link.dataset.route === 'queue');
    if (active) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  Promise.resolve(screen.render(view)).catch((error) => showError(error, '화면 표시'));
}

/** The signed-in caller in the top bar, with sign-out; admin-only links appear for admins. */
function showAccount(session) {
  const menu = document.getElementById('account-menu');
  const signOut = h('button', { type: 'button', id: 'sign-out' }, '로그아웃');
  signOut.addEventListener('click', async () => {
    try {
      await api.logout();
    } finally {
      location.reload();
    }
  });
  menu.replaceChildren(h('span', { class: 'account-name' }, `${session.actor.name} (${session.actor.role})`), signOut);
  for (const link of document.querySelectorAll('[data-admin-only]')) link.hidden = session.actor.role !== 'admin';
  if (session.actor.role === 'admin') showAlerts();
}

const PROVIDER_NAME = { regional: '지역 검색', global_vision: '비전', global_search: '글로벌 검색', local_llm: '언어 모델' };

/** Admins see today's quota alerts as a banner above every screen. */
async function showAlerts() {
  let alerts;
  try {
    ({ alerts } = await api.alerts());
  } catch {
    return;
  }
  const banner = document.getElementById('alert-banner');
  if (!alerts.length) return;
  const reached = alerts.filter((a) => a.threshold === 100);
  const text = alerts
    .filter((a) => a.threshold === 100 || !reached.some((r) => r.provider === a.provider))
    .map((a) => `${PROVIDER_NAME[a.provider] ?? a.provider} ${a.threshold === 100 ? '한도 도달' : '80% 사용'} (${a.used}/${a.daily_limit})`)
    .join(' · ');
  banner.replaceChildren(h('strong', {}, '오늘의 할당량 경고: '), text, ' ', hashLink(['providers'], '제공자 보기'));
  banner.hidden = false;
}

async function start() {
  let session;
  try {
    session = await api.session();
  } catch (error) {
    showError(error, '로그인 상태 확인');
    return;
  }
  if (!session.signed_in) {
    renderSignIn(session);
    return;
  }
  state.session = session;
  setCsrfToken(session.csrf_token);
  showAccount(session);
  window.addEventListener('svc:signed-out', async () => renderSignIn(await api.session().catch(() => null)), { once: true });
  try {
    const bootstrap = await api.bootstrap();
    state.bootstrap = bootstrap;
    if (Array.isArray(bootstrap.statuses) && bootstrap.statuses.length) state.statuses = bootstrap.statuses;
    if (Array.isArray(bootstrap.decisions) && bootstrap.decisions.length) state.decisions = bootstrap.decisions;
    if (typeof bootstrap.limits?.SVC_TIMEZONE === 'string') state.timeZone = bootstrap.limits.SVC_TIMEZONE;
    refreshSummary(bootstrap);
  } catch (error) {
    showError(error, '초기 정보 (bootstrap)');
  }
  window.addEventListener('hashchange', route);
  if (!location.hash || location.hash === '#' || location.hash === '#/') location.replace('#/queue');
  else route();
}

start();
