// The sign-in page, and on a fresh data folder the one-time "create the first administrator" page
// (the server allows it only from the machine itself). Success reloads the console in place.
import { api, ApiError } from './api.js';
import { h, clear } from './dom.js';
import { describeError } from './ui.js';

function field(id, label, type, autocomplete) {
  const input = h('input', { id, name: id, type, required: '', autocomplete });
  return { input, row: h('div', { class: 'form-row' }, h('label', { for: id }, label), input) };
}

function form(title, intro, submitLabel, onSubmit, withConfirm) {
  const user = field('signin-username', '사용자 이름 (username)', 'text', 'username');
  const pass = field('signin-password', '비밀번호 (password)', 'password', withConfirm ? 'new-password' : 'current-password');
  const confirm = withConfirm ? field('signin-confirm', '비밀번호 확인', 'password', 'new-password') : null;
  const message = h('p', { class: 'signin-message', role: 'alert' });
  const button = h('button', { type: 'submit', class: 'primary', id: 'signin-submit' }, submitLabel);
  const element = h(
    'form',
    { class: 'panel signin', 'aria-label': title },
    h('h1', {}, title),
    intro ? h('p', { class: 'muted' }, intro) : null,
    user.row,
    pass.row,
    confirm?.row,
    message,
    button,
  );
  element.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (confirm && confirm.input.value !== pass.input.value) {
      message.textContent = '두 비밀번호가 다릅니다.';
      return;
    }
    button.disabled = true;
    message.textContent = '';
    try {
      await onSubmit(user.input.value.trim(), pass.input.value);
      location.reload();
    } catch (error) {
      message.textContent =
        error instanceof ApiError && error.code === 'unauthenticated'
          ? '사용자 이름 또는 비밀번호가 맞지 않거나, 계정이 잠겼거나 비활성입니다.'
          : describeError(error);
      button.disabled = false;
      pass.input.value = '';
      pass.input.focus();
    }
  });
  return element;
}

/** Fills the page with the form the session calls for; the navigation is hidden until signed in. */
export function renderSignIn(session) {
  document.querySelector('.mainnav')?.setAttribute('hidden', '');
  document.getElementById('account-menu')?.replaceChildren();
  const main = document.getElementById('main');
  document.title = '로그인 · 이미지 권리 검토 콘솔';
  if (session?.setup_required) {
    clear(
      main,
      session.setup_allowed
        ? form(
            '첫 관리자 만들기 (first administrator)',
            '이 데이터 폴더에는 아직 계정이 없습니다. 관리자 계정을 하나 만드세요. 이 페이지는 서비스가 실행되는 컴퓨터에서만 열립니다.',
            '관리자 만들기',
            (u, p) => api.setup(u, p),
            true,
          )
        : h(
            'section',
            { class: 'panel signin' },
            h('h1', {}, '계정이 없습니다'),
            h(
              'p',
              {},
              '첫 관리자는 서비스가 실행되는 컴퓨터에서 이 주소(127.0.0.1)를 열어 만들 수 있습니다. 또는 SVC_ADMIN_TOKEN으로 API에서 계정을 만드세요.',
            ),
          ),
    );
  } else {
    clear(
      main,
      form('로그인 (sign in)', null, '로그인', (u, p) => api.login(u, p), false),
    );
  }
  main.querySelector('input')?.focus();
}
