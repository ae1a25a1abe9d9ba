// Providers: effective state, why one is off, today's quota, the stored switch, and the emergency
// disable of every provider that sends data out (behind a confirmation).
import { api } from './api.js';
import { h, append, actionButton, clear, formatInstant } from './dom.js';
import { state, attempt, loading, errorPanel, toast } from './ui.js';

const KIND_LABEL = { search: '검색 (search)', vision: '비전 (vision)', llm: '언어 모델 (llm)' };
// Who serves a role that has a choice (GLOBAL_SEARCH_PROVIDER for global_search).
const VENDOR_LABEL = { custom_search: 'Custom Search', brave: 'Brave Search' };

export async function renderProviders(view) {
  const list = h('div', { class: 'provider-list' }, loading());
  const alertsSlot = h('div', { class: 'quota-alerts-slot' });
  const emergency = h('button', { type: 'button', class: 'danger', id: 'emergency-disable' }, '긴급 전체 차단 (emergency disable)');
  emergency.addEventListener('click', () =>
    confirmEmergency(view.root, async () => {
      const result = await attempt('긴급 전체 차단', () => api.emergencyDisable());
      if (!result) return;
      toast(`긴급 차단: ${(result.disabled ?? []).join(', ') || '이미 모두 꺼져 있음'}`, 'success');
      paint(result.providers ?? []);
    }),
  );
  append(
    view.root,
    h(
      'div',
      { class: 'screen-head' },
      h('h1', {}, '제공자 ', h('span', { class: 'en' }, 'Providers')),
      h(
        'div',
        { class: 'toolbar' },
        actionButton('새로 고침', () => load()),
        emergency,
      ),
    ),
    h(
      'p',
      { class: 'muted' },
      '스위치는 데이터베이스에 저장됩니다. 켜져 있어도 필요한 환경 변수가 없으면 사용할 수 없습니다. 변수 이름만 표시하며 값은 표시하지 않습니다.',
    ),
    alertsSlot,
    list,
  );
  // Admins see today's quota alerts here as well as in the banner, with whether the webhook got them.
  if (state.session?.actor?.role === 'admin') {
    api.alerts().then(
      ({ alerts, webhook_configured }) => {
        if (!alerts.length) return;
        clear(
          alertsSlot,
          h(
            'section',
            { class: 'panel quota-alerts', 'aria-label': '할당량 경고' },
            h('h2', {}, '오늘의 할당량 경고'),
            h(
              'ul',
              {},
              alerts.map((a) =>
                h(
                  'li',
                  { dataset: { alertProvider: a.provider, alertThreshold: String(a.threshold) } },
                  `${a.provider}: ${a.threshold === 100 ? '한도 도달' : '80% 사용'} (${a.used}/${a.daily_limit}) · `,
                  !webhook_configured
                    ? '웹훅 없음'
                    : a.delivered_at
                      ? `웹훅 전달 ${formatInstant(a.delivered_at, state.timeZone)}`
                      : `웹훅 미전달 (${a.attempts}회 시도${a.last_error ? `: ${a.last_error}` : ''})`,
                ),
              ),
            ),
          ),
        );
      },
      () => undefined,
    );
  }

  // /api/providers/health adds last success/failure to the provider records; a switch answer
  // carries only the provider, so the last-known health fields are kept per id.
  const health = new Map();
  function paint(providers) {
    for (const p of providers) health.set(p.id, { ...health.get(p.id), ...p });
    clear(
      list,
      [...health.values()].map((p) =>
        providerCard(p, async (enabled) => {
          const result = await attempt(`${p.name ?? p.id} ${enabled ? '켜기' : '끄기'}`, () => api.switchProvider(p.id, enabled));
          if (!result) return;
          paint([result.provider]);
          list.querySelector(`[data-provider-id="${CSS.escape(p.id)}"] [role="switch"]`)?.focus();
          toast(
            `${result.provider.name ?? p.id}: 스위치 ${result.provider.switched_on ? '켬' : '끔'}${result.provider.enabled ? '' : ' — 현재 사용 불가'}`,
            'success',
          );
        }),
      ),
    );
  }
  async function load() {
    try {
      paint((await api.providersHealth()).providers ?? []);
    } catch (error) {
      clear(list, errorPanel(error, load));
    }
  }
  await load();
}

function providerCard(p, onSwitch) {
  const used = Number(p.used_today) || 0;
  const limit = Number(p.daily_limit) || 0;
  const ratio = limit > 0 ? Math.min(1, used / limit) : used > 0 ? 1 : 0;
  const fill = h('div', { class: 'quota-fill' });
  fill.style.width = `${(ratio * 100).toFixed(1)}%`;
  const switchButton = actionButton(
    [h('span', { class: 'switch-track' }, h('span', { class: 'switch-thumb' })), h('span', { class: 'switch-text' }, p.switched_on ? '켜짐' : '꺼짐')],
    () => onSwitch(!p.switched_on),
    { class: 'switch', role: 'switch', 'aria-checked': String(Boolean(p.switched_on)), 'aria-label': `${p.name ?? p.id} 스위치` },
  );
  const names = (list) => (Array.isArray(list) && list.length ? list.map((n) => h('code', { class: 'env-name' }, n)) : h('span', { class: 'muted' }, '없음'));
  return h(
    'article',
    { class: ['panel', 'provider', p.enabled ? 'is-enabled' : 'is-disabled'], dataset: { providerId: p.id } },
    h(
      'div',
      { class: 'provider-head' },
      h(
        'div',
        {},
        h('h2', { class: 'provider-name' }, p.name ?? p.id),
        h(
          'div',
          { class: 'muted small' },
          h('span', { class: 'mono' }, p.id),
          ' · ',
          KIND_LABEL[p.kind] ?? p.kind ?? '',
          p.vendor
            ? [' · 공급사 (vendor): ', h('span', { class: 'provider-vendor', dataset: { vendor: p.vendor } }, VENDOR_LABEL[p.vendor] ?? p.vendor)]
            : null,
        ),
      ),
      h('span', { class: ['badge', p.enabled ? 'ok' : 'off'] }, p.enabled ? '사용 가능 (enabled)' : '사용 불가 (disabled)'),
      switchButton,
    ),
    p.reason ? h('p', { class: 'provider-reason' }, '사유: ', p.reason) : null,
    h(
      'dl',
      { class: 'facts-grid compact' },
      h('dt', {}, '없는 변수 (missing)'),
      h('dd', {}, names(p.missing_env)),
      h('dt', {}, '필요 변수 (requiredEnv)'),
      h('dd', {}, names(p.requiredEnv)),
      h('dt', {}, '설정된 변수 (configuredEnv)'),
      h('dd', {}, names(p.configuredEnv)),
      p.last_success_at !== undefined ? [h('dt', {}, '최근 성공'), h('dd', {}, formatInstant(p.last_success_at, state.timeZone))] : null,
      p.last_failure_at !== undefined ? [h('dt', {}, '최근 실패'), h('dd', {}, formatInstant(p.last_failure_at, state.timeZone))] : null,
      p.last_error
        ? [h('dt', {}, '최근 오류'), h('dd', { class: 'small' }, typeof p.last_error === 'string' ? p.last_error : JSON.stringify(p.last_error))]
        : null,
    ),
    h(
      'div',
      { class: 'quota' },
      h(
        'div',
        { class: 'quota-label' },
        h('span', {}, '오늘 사용량 (quota)'),
        h('span', { class: 'mono' }, `${used.toLocaleString('ko-KR')} / ${limit.toLocaleString('ko-KR')}`),
        h('span', { class: 'muted small' }, `남음 ${Number(p.remaining_today ?? Math.max(0, limit - used)).toLocaleString('ko-KR')}`),
      ),
      h(
        'div',
        {
          class: ['quota-bar', ratio >= 1 ? 'full' : ratio >= 0.8 ? 'high' : ''],
          role: 'meter',
          'aria-valuemin': '0',
          'aria-valuemax': String(limit),
          'aria-valuenow': String(used),
          'aria-label': '오늘 사용량',
        },
        fill,
      ),
    ),
  );
}

/** An in-page dialog rather than window.confirm: it keeps the console's look and focus handling. */
function confirmEmergency(root, onConfirm) {
  const cancel = h('button', { type: 'button', class: 'quiet', value: 'cancel' }, '취소');
  const confirm = h('button', { type: 'button', class: 'danger', id: 'confirm-emergency' }, '모두 끄기');
  const dialog = h(
    'dialog',
    { class: 'confirm-dialog', 'aria-labelledby': 'emergency-title' },
    h('h2', { id: 'emergency-title' }, '모든 외부 제공자를 끌까요?'),
    h(
      'p',
      {},
      '외부로 데이터를 보내는 제공자(지역 검색, 글로벌 비전, 글로벌 검색, 로컬 LLM)의 스위치를 모두 끕니다. 다시 켜려면 제공자마다 스위치를 켜야 합니다.',
    ),
    h('div', { class: 'dialog-buttons' }, cancel, confirm),
  );
  cancel.addEventListener('click', () => dialog.close());
  confirm.addEventListener('click', async () => {
    confirm.disabled = true;
    dialog.close();
    await onConfirm();
  });
  dialog.addEventListener('close', () => dialog.remove());
  append(root, dialog);
  dialog.showModal();
  cancel.focus();
}
