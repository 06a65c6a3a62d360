import { ApiError, clientWith } from '../api';
import { h, put } from '../dom';
import { setKey } from '../session';
import { describeError, withBusy } from '../ui';

/**
 * Sign-in with an API key. The key is tried on GET /usage (which is never counted against the
 * limit) and kept only when it works, in this tab's sessionStorage (src/session.ts).
 */
export async function signInPage(app: HTMLElement, done: () => void): Promise<void> {
  document.title = 'Sign in · pricehound';
  const error = h('div', { id: 'signin-error', role: 'alert' });
  const input = h('input', {
    id: 'api-key',
    name: 'api_key',
    type: 'password',
    required: true,
    autocomplete: 'off',
    spellcheck: 'false',
    'aria-describedby': 'api-key-hint signin-error',
  });
  const button = h('button', { type: 'submit' }, 'Sign in');
  const form = h(
    'form',
    { class: 'signin card', 'aria-labelledby': 'signin-title', novalidate: true },
    h('h1', { id: 'signin-title' }, 'pricehound'),
    h('p', null, 'Sign in with an API key to see usage, products, prices, alerts and webhooks.'),
    h('div', { class: 'field' }, h('label', { for: 'api-key' }, 'API key'), input),
    h(
      'p',
      { class: 'hint', id: 'api-key-hint' },
      'Create one with ',
      h('code', null, 'npx pricehound keys create'),
      '. It is kept in this tab only (sessionStorage) until you sign out or close the tab.',
    ),
    error,
    button,
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const key = input.value.trim();
    if (!key) {
      put(error, h('p', { class: 'notice error' }, 'Enter an API key.'));
      input.setAttribute('aria-invalid', 'true');
      input.focus();
      return;
    }
    void withBusy(button, null, async () => {
      put(error);
      try {
        await clientWith(key).GET('/api/v1/usage', { params: { query: { hours: 1 } } });
      } catch (err) {
        const text =
          err instanceof ApiError && err.status === 401
            ? 'That key is not valid, or it has been revoked.'
            : `Could not sign in: ${describeError(err)}`;
        put(error, h('p', { class: 'notice error' }, text));
        input.setAttribute('aria-invalid', 'true');
        input.focus();
        return;
      }
      setKey(key);
      input.value = '';
      done();
    });
  });
  put(app, h('main', { id: 'main', class: 'signin-wrap' }, form));
  input.focus();
}
