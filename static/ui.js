// Shared pieces of every screen: Korean labels for the contract's vocabularies, badges, the toast
// area that reports API errors in words, and the small state the screens share (bootstrap data).
import { h, append, clear } from './dom.js';
import { api } from './api.js';

export const RISK_LEVEL_LABEL = { low: '낮음', medium: '보통', high: '높음' };
export const ENRICHMENT_LABEL = { pending: '대기', running: '진행 중', done: '완료', failed: '실패', skipped: '건너뜀' };
export const ANALYSIS_LABEL = { pending: '분석 대기', done: '분석 완료', failed: '분석 실패' };
export const SOURCE_LABEL = {
  internal: '내부 비교',
  watchlist: '주의 목록',
  regional: '지역 검색',
  global_vision: '글로벌 비전',
  global_search: '글로벌 검색',
  local_llm: '로컬 LLM',
  file_metadata: '파일 메타데이터',
};
export const DECISION_CLASS = { 승인: 'approve', 보류: 'hold', 반려: 'reject' };
export const STATUS_CLASS = { '판단에 사용': 'use', 무관: 'irrelevant', 오탐: 'false-positive', 보류: 'hold' };
export const KNOWLEDGE_STATES = ['주의 후보', '확정 DB 편입', '오탐 제외'];
export const KNOWLEDGE_STATE_CLASS = { '주의 후보': 'candidate', '확정 DB 편입': 'confirmed', '오탐 제외': 'excluded' };
export const JOB_STATUS_LABEL = { queued: '대기', running: '진행 중', done: '완료', failed: '실패', skipped: '건너뜀' };

const ERROR_HINT = {
  invalid_request: '요청이 올바르지 않습니다',
  unauthenticated: '로그인이 필요합니다',
  forbidden: '권한이 없습니다 (관리자 전용이거나 보안 확인 실패)',
  not_found: '찾을 수 없습니다',
  conflict: '현재 상태에서는 할 수 없는 작업입니다',
  provider_disabled: '제공자가 꺼져 있거나 키가 없습니다',
  payload_too_large: '요청 본문이 너무 큽니다',
  unsupported_media_type: '요청 형식이 올바르지 않습니다',
  quota_exhausted: '오늘 할당량을 모두 사용했습니다',
  rate_limited: '요청이 너무 많습니다; 잠시 후 다시 시도하세요',
  provider_error: '제공자 호출이 실패했습니다',
  internal: '서버 내부 오류',
  unavailable: '서비스를 사용할 수 없습니다',
  network: '연결 오류',
};

/** Statuses and decisions in the contract's order; bootstrap's lists win once loaded. */
export const state = {
  bootstrap: null,
  statuses: ['판단에 사용', '무관', '오탐', '보류'],
  decisions: ['승인', '보류', '반려'],
  timeZone: undefined,
};

export function riskBadge(risk) {
  const level = risk?.level ?? 'low';
  const score = typeof risk?.score === 'number' ? risk.score : 0;
  return h(
    'span',
    { class: ['badge', 'risk', `risk-${level}`], title: `위험도 ${RISK_LEVEL_LABEL[level] ?? level} (${level}), 점수 ${score}/100` },
    h('span', { class: 'risk-level' }, RISK_LEVEL_LABEL[level] ?? String(level)),
    h('span', { class: 'risk-score' }, String(score)),
  );
}

export function decisionBadge(decision) {
  if (!decision) return h('span', { class: 'badge decision decision-none' }, '미결정');
  return h('span', { class: ['badge', 'decision', `decision-${DECISION_CLASS[decision.value] ?? 'other'}`] }, String(decision.value));
}

export function enrichmentBadge(status) {
  return h('span', { class: ['badge', 'enrichment', `enrichment-${status}`] }, ENRICHMENT_LABEL[status] ?? String(status ?? '—'));
}

export function attentionBadge() {
  return h('span', { class: 'badge attention', title: '주의 후보와 일치하는 이미지입니다' }, '⚠ 주의 후보 일치');
}

export function knowledgeStateBadge(value) {
  return h('span', { class: ['badge', 'knowledge', `knowledge-${KNOWLEDGE_STATE_CLASS[value] ?? 'other'}`] }, String(value ?? '—'));
}

/** An evidence item's source. */
export function sourceBadge(source) {
  return h('span', { class: ['badge', 'source', `source-${source}`] }, SOURCE_LABEL[source] ?? source);
}

/** A table's head: one column header per label. */
export function tableHead(...labels) {
  return h('thead', {}, h('tr', {}, ...labels.map((label) => h('th', { scope: 'col' }, label))));
}

/** A form control and its label, as the two siblings a form lists (spread them in). */
export function labelled(text, control) {
  return [h('label', { for: control.id }, text), control];
}

export function statusBadge(status) {
  if (!status) return h('span', { class: 'badge status status-none' }, '미표시');
  return h('span', { class: ['badge', 'status', `status-${STATUS_CLASS[status] ?? 'other'}`] }, String(status));
}

const toastArea = () => document.getElementById('toasts');

/** Shows a message; errors stay until dismissed so an operator cannot miss them. */
export function toast(message, kind = 'info') {
  const close = h('button', { type: 'button', class: 'toast-close', 'aria-label': '닫기' }, '×');
  const item = h('div', { class: ['toast', `toast-${kind}`], role: kind === 'error' ? 'alert' : 'status' }, h('span', { class: 'toast-text' }, message), close);
  close.addEventListener('click', () => item.remove());
  append(toastArea(), item);
  if (kind !== 'error') setTimeout(() => item.remove(), 5000);
  const items = toastArea().children;
  while (items.length > 5) items[0].remove();
  return item;
}

export function describeError(error) {
  if (error && error.name === 'ApiError') {
    const hint = ERROR_HINT[error.code];
    return `${hint ? `${hint}: ` : ''}${error.message} [${error.code}]`;
  }
  return `예상치 못한 오류: ${error?.message ?? String(error)}`;
}

export function showError(error, what) {
  toast(`${what ? `${what} 실패 — ` : ''}${describeError(error)}`, 'error');
}

/** Runs an API action and reports its failure as a toast; returns undefined when it failed. */
export async function attempt(what, action) {
  try {
    return await action();
  } catch (error) {
    showError(error, what);
    return undefined;
  }
}

export function loading(text = '불러오는 중…') {
  return h('p', { class: 'loading', role: 'status' }, text);
}

export function errorPanel(error, retry) {
  return h(
    'div',
    { class: 'panel error-panel', role: 'alert' },
    h('p', {}, describeError(error)),
    retry ? h('button', { type: 'button', on: { click: retry } }, '다시 시도') : null,
  );
}

export function emptyState(text) {
  return h('p', { class: 'empty' }, text);
}

/**
 * The loader of a list screen's slot: fills it with the list's table, or `emptyText` when the list
 * is empty, or an error panel whose retry loads again. Call it to load and again to refresh.
 */
export function listLoader(slot, fetchList, table, emptyText) {
  const load = async () => {
    try {
      const items = await fetchList();
      clear(slot, items.length ? table(items) : emptyState(emptyText));
    } catch (error) {
      clear(slot, errorPanel(error, load));
    }
  };
  return load;
}

/** Header figures (version, queue size, open attention candidates); fetches bootstrap when not given. */
export async function refreshSummary(bootstrap) {
  let data = bootstrap;
  if (!data) {
    try {
      data = await api.bootstrap();
      state.bootstrap = data;
    } catch {
      return;
    }
  }
  document.getElementById('version').textContent = data.version ? `v${data.version}` : '';
  const total = data.queue?.total;
  document.getElementById('nav-queue-count').textContent = typeof total === 'number' ? String(total) : '';
  const candidates = knowledgeCount(data.knowledge_counts, '주의 후보');
  document.getElementById('nav-watchlist-count').textContent = candidates ? String(candidates) : '';
}

/** `knowledge_counts` is `{state: n}` with every state present. */
export function knowledgeCount(counts, knowledgeState) {
  const value = counts?.[knowledgeState];
  return typeof value === 'number' ? value : 0;
}
