// Accounts and personal API tokens (admins only; the server refuses everyone else). A new token's
// secret is shown once, in this screen, and never again.
import { api } from './api.js';
import { backupPanel } from './backup.js';
import { h, append, actionButton, clear, formatInstant } from './dom.js';
import { state, attempt, loading, toast, labelled, listLoader, tableHead } from './ui.js';

const ROLE_LABEL = { operator: '운영자 (operator)', admin: '관리자 (admin)' };

/**
 * A one-line form that creates something: its labelled fields and a submit button named for what it
 * does; `create` runs under that name (an error is shown in words), and `created` gets its answer.
 */
function creationForm(id, action, fields, create, created) {
  const form = h('form', { class: 'inline-form', id }, ...fields, h('button', { type: 'submit', class: 'primary' }, action));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const result = await attempt(action, create);
    if (result) await created(result);
  });
  return form;
}

function roleSelect(id, value = 'operator') {
  const select = h(
    'select',
    { id, name: 'role' },
    Object.entries(ROLE_LABEL).map(([v, label]) => h('option', { value: v }, label)),
  );
  select.value = value;
  return select;
}

export async function renderAccounts(view) {
  const accountsSlot = h('div', { class: 'accounts-list' }, loading());
  const tokensSlot = h('div', { class: 'tokens-list' }, loading());
  const secretSlot = h('div', { class: 'token-secret-slot' });

  const username = h('input', { id: 'new-account-username', name: 'username', autocomplete: 'off', required: '' });
  const password = h('input', { id: 'new-account-password', name: 'password', type: 'password', autocomplete: 'new-password', required: '' });
  const role = roleSelect('new-account-role');
  const accountForm = creationForm(
    'new-account',
    '계정 만들기',
    [labelled('사용자 이름', username), labelled('비밀번호 (10자 이상)', password), labelled('역할', role)],
    () => api.createAccount({ username: username.value.trim(), password: password.value, role: role.value }),
    async (result) => {
      toast(`계정 ${result.account.username} 을(를) 만들었습니다`, 'success');
      username.value = '';
      password.value = '';
      await loadAccounts();
    },
  );

  const tokenName = h('input', { id: 'new-token-name', name: 'name', autocomplete: 'off', required: '' });
  const tokenRole = roleSelect('new-token-role');
  const tokenForm = creationForm(
    'new-token',
    '토큰 만들기',
    [labelled('이름 (용도)', tokenName), labelled('역할', tokenRole)],
    () => api.createToken({ name: tokenName.value.trim(), role: tokenRole.value }),
    async (result) => {
      tokenName.value = '';
      clear(
        secretSlot,
        h(
          'div',
          { class: 'panel token-secret', role: 'status' },
          h('p', {}, `토큰 "${result.token.name}" — 지금 복사하세요. 다시 표시되지 않습니다.`),
          h('code', { class: 'mono', id: 'token-secret' }, result.secret),
          h('p', { class: 'muted' }, '사용: Authorization: Bearer <token>'),
        ),
      );
      await loadTokens();
    },
  );

  append(
    view.root,
    h('div', { class: 'screen-head' }, h('h1', {}, '계정 ', h('span', { class: 'en' }, 'Accounts'))),
    h('section', { class: 'panel' }, h('h2', {}, '계정'), accountForm, accountsSlot),
    h('section', { class: 'panel' }, h('h2', {}, 'API 토큰'), tokenForm, secretSlot, tokensSlot),
    backupPanel(),
  );

  const loadAccounts = listLoader(accountsSlot, async () => (await api.accounts()).accounts, accountTable, '계정이 없습니다.');
  const loadTokens = listLoader(tokensSlot, async () => (await api.tokens()).tokens, tokenTable, '토큰이 없습니다.');

  function accountTable(accounts) {
    return h(
      'table',
      { class: 'table' },
      tableHead('사용자', '역할', '상태', '만든 시각', ''),
      h(
        'tbody',
        {},
        accounts.map((a) => {
          const self = a.id === state.session?.actor?.id;
          const select = roleSelect(`role-${a.id}`, a.role);
          select.disabled = self;
          select.addEventListener('change', async () => {
            if (await attempt('역할 변경', () => api.updateAccount(a.id, { role: select.value })))
              toast(`${a.username}: ${ROLE_LABEL[select.value]}`, 'success');
            await loadAccounts();
          });
          const status = a.disabled
            ? '비활성'
            : a.locked_until && a.locked_until > new Date().toISOString()
              ? `잠김 (${formatInstant(a.locked_until, state.timeZone)}까지)`
              : '활성';
          return h(
            'tr',
            { dataset: { accountId: a.id } },
            h('td', {}, a.username),
            h('td', {}, select),
            h('td', {}, status),
            h('td', {}, formatInstant(a.created_at, state.timeZone)),
            h(
              'td',
              { class: 'actions' },
              self
                ? null
                : actionButton(a.disabled ? '활성화' : '비활성화', async () => {
                    if (await attempt('계정 상태 변경', () => api.updateAccount(a.id, { disabled: !a.disabled }))) await loadAccounts();
                  }),
              actionButton('모든 세션 종료', async () => {
                const result = await attempt('세션 종료', () => api.revokeSessions(a.id));
                if (result) toast(`${a.username}: 세션 ${result.sessions_revoked}개 종료`, 'success');
              }),
            ),
          );
        }),
      ),
    );
  }

  function tokenTable(tokens) {
    return h(
      'table',
      { class: 'table' },
      tableHead('이름', '역할', '만든 시각', '마지막 사용', '상태', ''),
      h(
        'tbody',
        {},
        tokens.map((t) =>
          h(
            'tr',
            { dataset: { tokenId: t.id } },
            h('td', {}, t.name),
            h('td', {}, ROLE_LABEL[t.role] ?? t.role),
            h('td', {}, formatInstant(t.created_at, state.timeZone)),
            h('td', {}, t.last_used_at ? formatInstant(t.last_used_at, state.timeZone) : '—'),
            h('td', {}, t.revoked_at ? '폐기됨' : '사용 중'),
            h(
              'td',
              { class: 'actions' },
              t.revoked_at
                ? null
                : actionButton('폐기', async () => {
                    if (await attempt('토큰 폐기', () => api.revokeToken(t.id))) await loadTokens();
                  }),
            ),
          ),
        ),
      ),
    );
  }

  await Promise.all([loadAccounts(), loadTokens()]);
}
