// The backup panel of the admin screen: starts a backup (POST /api/admin/backup), then follows it
// (GET /api/admin/backups) until it is done, and lists the latest with their archive and size. The
// archive goes to the service's backup folder; restoring is a command on the machine
// (docs/operations.md), never an action of the console.
import { api } from './api.js';
import { actionButton, clear, formatBytes, formatInstant, h } from './dom.js';
import { attempt, emptyState, errorPanel, loading, state, toast, tableHead } from './ui.js';

const POLL_MS = 1000;
const STATUS_LABEL = { queued: '대기 중', running: '진행 중', done: '완료', failed: '실패', skipped: '건너뜀' };

function progressText(job) {
  const p = job.payload;
  if (job.status === 'done') return `${p.archive} · ${formatBytes(p.bytes)} · 파일 ${p.files}개${p.missing ? ` · 없어진 파일 ${p.missing}개` : ''}`;
  if (job.status === 'failed') return job.error ?? '';
  if (p.files_total) return `파일 ${p.files_done} / ${p.files_total} · ${formatBytes(p.bytes_written)}`;
  return '데이터베이스 복사 중';
}

function backupTable(backups) {
  return h(
    'table',
    { class: 'table', id: 'backup-list' },
    tableHead('시작', '상태', '내용'),
    h(
      'tbody',
      {},
      backups.map((job) =>
        h(
          'tr',
          { dataset: { backupId: String(job.id), status: job.status } },
          h('td', {}, formatInstant(job.created_at, state.timeZone)),
          h('td', {}, STATUS_LABEL[job.status] ?? job.status),
          h('td', { class: job.status === 'failed' ? 'error' : '' }, progressText(job)),
        ),
      ),
    ),
  );
}

export function backupPanel() {
  const slot = h('div', { class: 'backup-list', 'aria-live': 'polite' }, loading());
  let timer = null;
  const start = actionButton(
    '백업 시작',
    async () => {
      const result = await attempt('백업 시작', () => api.startBackup());
      if (!result) return;
      toast(result.queued ? '백업을 시작했습니다' : '이미 진행 중인 백업이 있습니다', 'success');
      await load();
    },
    { class: 'primary', id: 'start-backup' },
  );
  const panel = h(
    'section',
    { class: 'panel', id: 'backup-panel' },
    h('h2', {}, '백업 ', h('span', { class: 'en' }, 'Backup')),
    h(
      'p',
      { class: 'muted' },
      '데이터베이스와 저장된 파일을 서비스가 실행되는 동안 하나의 묶음(tar)으로 백업 폴더에 씁니다. 복원은 서버에서 npm run restore 로 합니다.',
    ),
    start,
    slot,
  );

  async function load() {
    clearTimeout(timer);
    try {
      const { backups, available } = await api.backups();
      start.hidden = !available;
      clear(
        slot,
        !available
          ? emptyState('이 배포에는 온라인 백업이 없습니다 (docs/operations.md).')
          : backups.length
            ? backupTable(backups)
            : emptyState('아직 백업이 없습니다.'),
      );
      // Followed while one waits or runs, and while the panel is on screen.
      if (backups.some((b) => b.status === 'queued' || b.status === 'running') && panel.isConnected) timer = setTimeout(load, POLL_MS);
    } catch (error) {
      clear(slot, errorPanel(error, load));
    }
  }
  load();
  return panel;
}
