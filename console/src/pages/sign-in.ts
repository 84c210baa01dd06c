import type { ConsoleConfig, Credentials } from '../api.ts';
import { h, problemView } from '../dom.ts';

/** Signing in with a tenant's access key; the data API key is optional (data pages and valuations). */
export function signInForm(config: ConsoleConfig, notice: string | undefined, signIn: (credentials: Credentials) => Promise<void>): HTMLElement {
  const status = h('div', { class: 'form-status', 'aria-live': 'polite' }, notice ? h('p', { class: 'state notice' }, notice) : null);
  const field = (id: string, label: string, attrs: Record<string, string | boolean>, hint?: string) =>
    h(
      'div',
      { class: 'field' },
      h('label', { for: id }, label),
      h('input', { id, name: id, ...attrs, ...(hint ? { 'aria-describedby': `${id}-hint` } : {}) }),
      hint ? h('p', { class: 'hint', id: `${id}-hint` }, hint) : null,
    );
  const button = h('button', { type: 'submit' }, 'Sign in');
  const form = h(
    'form',
    { class: 'sign-in', 'aria-labelledby': 'sign-in-title' },
    h('h1', { id: 'sign-in-title' }, 'Sign in'),
    h(
      'p',
      {},
      "With one of the tenant's access keys (created with the CLI; ",
      h('code', {}, 'npm start'),
      " writes the demo tenant's to ",
      h('code', {}, '.data/credentials.json'),
      ').',
    ),
    field('access-key-id', 'Access key id', { required: true, autocomplete: 'username', spellcheck: false }),
    field('secret-access-key', 'Secret access key', { type: 'password', required: true, autocomplete: 'current-password' }),
    field(
      'data-api-key',
      'Data API key (optional)',
      { type: 'password', autocomplete: 'off' },
      config.data_service_url
        ? 'For the data page and the valuation of holdings with the data service.'
        : 'This deployment names no data service to the console: the data pages are off.',
    ),
    h('p', { class: 'hint' }, 'The keys stay in this page only: reloading it signs out.'),
    button,
    status,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const value = (id: string) => (form.querySelector(`#${id}`) as HTMLInputElement).value.trim();
    button.disabled = true;
    status.replaceChildren(h('p', { class: 'state loading', role: 'status' }, 'Signing in…'));
    signIn({ accessKeyId: value('access-key-id'), secret: value('secret-access-key'), apiKey: value('data-api-key') })
      .catch((error: unknown) => {
        status.replaceChildren(problemView(error));
        (form.querySelector('#secret-access-key') as HTMLInputElement).focus();
      })
      .finally(() => {
        button.disabled = false;
      });
  });
  queueMicrotask(() => (form.querySelector('#access-key-id') as HTMLInputElement | null)?.focus());
  return form;
}
