// Audit log (paged backwards with `before`) and the job table, both newest first.
import { api } from './api.js';
import { h, append, hashLink, actionButton, clear, formatInstant } from './dom.js';
import { state, errorPanel, loading, emptyState, attempt, JOB_STATUS_LABEL, labelled, listLoader, tableHead } from './ui.js';

const PAGE = 100;
const ACTION_LABEL = {
  'submission.reload': '제출물 다시 읽기',
  'submission.rerun': '재분석',
  'evidence.status': '근거 상태',
  'submission.decision': '결정',
  'knowledge.promote': '확정 DB 편입',
  'knowledge.exclude': '오탐 제외',
  'provider.switch': '제공자 스위치',
  'provider.emergency_disable': '긴급 전체 차단',
  'search.manual': '수동 검색',
  'retention.run': '보존 기한 정리',
  'backup.start': '백업 시작',
  'submission.decision_change': '결정 변경',
  'auth.login': '로그인',
  'auth.login_failed': '로그인 실패',
  'auth.locked': '계정 잠김',
  'auth.logout': '로그아웃',
  'auth.setup': '첫 관리자 생성',
  'account.create': '계정 생성',
  'account.update': '계정 변경',
  'account.sessions_revoke': '세션 종료',
  'token.create': '토큰 생성',
  'token.revoke': '토큰 폐기',
  'evidence.capture': '페이지 보존',
  'submission.bundle': '증거 묶음 내려받기',
  'caller.rate_limited': '요청 한도 초과',
};

const ACTOR_LABEL = { account: '계정', token: 'API 토큰', admin_token: '관리 토큰', system: '서비스', anonymous: '익명' };

/** Who acted, as the event recorded it: the name, what kind of caller, its role and address. */
function actorCell(actor) {
  if (!actor) return h('span', { class: 'muted' }, '—');
  return [
    h('div', { class: 'audit-actor' }, actor.name ?? ACTOR_LABEL[actor.type] ?? actor.type),
    h('div', { class: 'muted small' }, [ACTOR_LABEL[actor.type] ?? actor.type, actor.role, actor.client].filter(Boolean).join(' · ')),
  ];
}

export async function renderAudit(view) {
  const tab = view.query.get('tab') === 'jobs' ? 'jobs' : 'events';
  const body = h('div', {}, loading());
  append(
    view.root,
    h('div', { class: 'screen-head' }, h('h1', {}, '감사 로그 · 작업 ', h('span', { class: 'en' }, 'Audit log & jobs'))),
    h(
      'nav',
      { class: 'tabs', 'aria-label': '보기' },
      hashLink(['audit'], '감사 로그 (audit events)', { class: 'tab', 'aria-current': tab === 'events' ? 'page' : undefined }),
      hashLink(['audit'], '작업 (jobs)', { class: 'tab', 'aria-current': tab === 'jobs' ? 'page' : undefined }, { tab: 'jobs' }),
    ),
    body,
  );
  if (tab === 'jobs') await renderJobs(body, view.query.get('status') ?? '');
  else await renderEvents(body);
}

async function renderEvents(slot) {
  const rows = h('tbody', {});
  const more = actionButton('더 보기 (older)', () => attempt('감사 로그 더 보기', loadPage), { id: 'audit-more' });
  let oldest;

  async function loadPage() {
    const answer = await api.auditEvents({ limit: PAGE, before: oldest });
    const list = answer.events ?? [];
    append(rows, ...list.map(eventRow));
    if (list.length) oldest = list[list.length - 1].id;
    more.hidden = list.length < PAGE;
    return list.length;
  }

  try {
    if (!(await loadPage())) {
      clear(slot, emptyState('감사 기록이 없습니다.'));
      return;
    }
  } catch (error) {
    clear(
      slot,
      errorPanel(error, () => {
        clear(slot, loading());
        renderEvents(slot);
      }),
    );
    return;
  }
  clear(
    slot,
    h('table', { class: 'table audit-table' }, tableHead('#', '시각', '작업 (action)', '누가 (actor)', '대상', '세부 (details)'), rows),
    h('div', { class: 'pager' }, more),
  );
}

function eventRow(event) {
  const target =
    event.target_type === 'submission' && event.target_id
      ? hashLink(['review', event.target_id], event.target_id, { class: 'mono' })
      : h('span', { class: 'mono' }, event.target_id ?? '—');
  return h(
    'tr',
    {},
    h('td', { class: 'mono muted' }, String(event.id)),
    h('td', { class: 'nowrap' }, formatInstant(event.at, state.timeZone)),
    h(
      'td',
      {},
      ACTION_LABEL[event.action]
        ? [ACTION_LABEL[event.action], h('div', { class: 'muted small mono' }, event.action)]
        : h('span', { class: 'mono' }, event.action),
    ),
    h('td', {}, actorCell(event.actor)),
    h('td', {}, h('div', { class: 'muted small' }, event.target_type ?? ''), target),
    h('td', {}, detailsText(event.details)),
  );
}

function detailsText(details) {
  if (!details || typeof details !== 'object' || !Object.keys(details).length) return h('span', { class: 'muted' }, '—');
  return h('code', { class: 'details' }, JSON.stringify(details));
}

async function renderJobs(slot, status) {
  const select = h(
    'select',
    { id: 'jobs-status' },
    h('option', { value: '' }, '전체 (all)'),
    Object.entries(JOB_STATUS_LABEL).map(([value, label]) => h('option', { value }, `${label} (${value})`)),
  );
  select.value = status;
  select.addEventListener('change', () => {
    location.hash = `#/audit?tab=jobs${select.value ? `&status=${encodeURIComponent(select.value)}` : ''}`;
  });
  const table = h('div', {}, loading());
  const load = listLoader(table, async () => (await api.jobs({ status })).jobs ?? [], jobTable, '작업이 없습니다.');
  clear(
    slot,
    h(
      'form',
      { class: 'filters', on: { submit: (e) => e.preventDefault() } },
      ...labelled('상태 ', select),
      actionButton('새로 고침', () => load()),
    ),
    table,
  );
  await load();
}

function jobTable(jobs) {
  return h(
    'table',
    { class: 'table jobs-table' },
    tableHead('#', '종류 (type)', '제출물', '상태', '시도', '만든 때', '시작', '끝', '오류'),
    h(
      'tbody',
      {},
      jobs.map((job) =>
        h(
          'tr',
          { class: `job-${job.status}` },
          h('td', { class: 'mono muted' }, String(job.id)),
          h('td', { class: 'mono' }, job.type),
          h('td', {}, job.submission_id ? hashLink(['review', job.submission_id], job.submission_id, { class: 'mono' }) : '—'),
          h('td', {}, h('span', { class: ['badge', `job-status-${job.status}`] }, JOB_STATUS_LABEL[job.status] ?? job.status)),
          h('td', { class: 'num' }, String(job.attempts ?? 0)),
          h('td', { class: 'nowrap small' }, formatInstant(job.created_at, state.timeZone)),
          h('td', { class: 'nowrap small' }, formatInstant(job.started_at, state.timeZone)),
          h('td', { class: 'nowrap small' }, formatInstant(job.finished_at, state.timeZone)),
          h('td', { class: 'small' }, job.error ? (typeof job.error === 'string' ? job.error : JSON.stringify(job.error)) : ''),
        ),
      ),
    ),
  );
}
