import { $, api, fillTable, h, setStatus, when } from './lib.js';

// API keys: the secret is shown once, right after creation, and never again.

const form = $('#key-form');

async function load() {
  try {
    const { items = [] } = (await api('/v1/api-keys')) ?? {};
    fillTable(
      'keys',
      items.map((k) =>
        h(
          'tr',
          { dataset: { key: k.public_key } },
          h('td', {}, k.name),
          h('td', { class: 'mono' }, k.public_key),
          h('td', {}, when(k.created_at)),
          h('td', {}, when(k.last_used_at)),
          h('td', {}, when(k.expires_at)),
          h('td', {}, k.is_active ? 'yes' : 'revoked'),
          h(
            'td',
            {},
            k.is_active
              ? h('button', { type: 'button', class: 'revoke', onclick: () => revoke(k) }, 'Revoke')
              : '',
          ),
        ),
      ),
    );
    setStatus('keys-status', items.length ? '' : 'No keys yet.');
  } catch (err) {
    setStatus('keys-status', err.message, 'error');
  }
}

async function revoke(key) {
  if (!window.confirm(`Revoke ${key.name} (${key.public_key})?`)) return;
  try {
    await api(`/v1/api-keys/${encodeURIComponent(key.public_key)}`, { method: 'DELETE' });
    await load();
  } catch (err) {
    setStatus('keys-status', err.message, 'error');
  }
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const { name, expires_at: expires } = form.elements;
  const body = { name: name.value };
  if (expires.value) body.expires_at = new Date(`${expires.value}T23:59:59Z`).toISOString();
  try {
    const key = await api('/v1/api-keys', { method: 'POST', body: JSON.stringify(body) });
    $('#new-public-key').textContent = key.public_key;
    $('#new-secret-key').textContent = key.secret_key;
    $('#new-key').hidden = false;
    form.reset();
    await load();
  } catch (err) {
    setStatus('keys-status', err.message, 'error');
  }
});

$('#dismiss-key').addEventListener('click', () => {
  $('#new-secret-key').textContent = '';
  $('#new-key').hidden = true;
});

await load();
document.body.dataset.ready = 'true';
