// The review page's facts about the submission (fingerprint, size, format, analysis) and its risk
// panel: the score, the level and each signal with the evidence it cites.
import { h, clear, formatBytes } from './dom.js';
import { riskBadge, ANALYSIS_LABEL } from './ui.js';

/** What is known of the stored picture itself; `evidenceCount` when the record does not say. */
export function factsPanel(s, evidenceCount) {
  const row = (label, value, cls) => [h('dt', {}, label), h('dd', { class: cls }, value ?? '—')];
  return h(
    'section',
    { class: 'panel facts', 'aria-label': '제출물 정보' },
    h(
      'dl',
      { class: 'facts-grid' },
      row('지문 (pHash)', s.phash, 'mono phash'),
      row('제출 시각', s.submitted_at),
      row('크기', s.width && s.height ? `${s.width} × ${s.height}px` : null),
      row('형식 / 용량', `${s.format ?? '—'} · ${formatBytes(s.bytes)}`),
      row('분석', ANALYSIS_LABEL[s.analysis_status] ?? s.analysis_status),
      row('근거 수', String(s.evidence_count ?? evidenceCount)),
      row('파일', s.file, 'mono small'),
      row('SHA-256', s.sha256, 'mono small break'),
    ),
  );
}

/** Paints the risk panel of `page` (a review page) from its current submission. */
export function paintRiskPanel(page) {
  const risk = page.submission.risk ?? {};
  const signals = Array.isArray(risk.signals) ? risk.signals : [];
  clear(
    page.slots.risk,
    h('div', { class: 'panel-head' }, h('h2', { id: 'risk-title' }, '위험도 ', h('span', { class: 'en' }, 'Risk')), riskBadge(risk)),
    h(
      'div',
      {
        class: ['risk-meter', `risk-${risk.level ?? 'low'}`],
        role: 'meter',
        'aria-valuemin': '0',
        'aria-valuemax': '100',
        'aria-valuenow': String(risk.score ?? 0),
        'aria-label': '위험 점수',
      },
      meterFill(risk.score ?? 0),
    ),
    signals.length
      ? h(
          'ul',
          { class: 'signals' },
          signals.map((signal) =>
            h(
              'li',
              {},
              h('span', { class: 'signal-weight' }, `+${signal.weight}`),
              h('span', { class: 'signal-label' }, signal.label ?? signal.code),
              h('span', { class: 'muted mono small' }, ` ${signal.code}`),
              (signal.evidence_ids ?? []).length
                ? h(
                    'div',
                    { class: 'signal-evidence' },
                    (signal.evidence_ids ?? []).map((eid) => page.evidenceRef(eid)),
                  )
                : null,
            ),
          ),
        )
      : h('p', { class: 'muted' }, '위험 신호 없음'),
  );
}

function meterFill(score) {
  const fill = h('div', { class: 'risk-meter-fill' });
  fill.style.width = `${Math.max(0, Math.min(100, Number(score) || 0))}%`;
  return fill;
}
