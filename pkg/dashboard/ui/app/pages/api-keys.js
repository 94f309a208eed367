// API keys: the secret is shown once, right after creation, and never again.
import { useState } from 'preact/hooks';
import { ConfirmButton, Empty, PageHead, Status } from '../components/ui.js';
import { api } from '../lib/api.js';
import { when } from '../lib/format.js';
import { useAsync, useReady } from '../lib/hooks.js';
import { html } from '../lib/html.js';

export function ApiKeys() {
  const keys = useAsync(() => api('/v1/api-keys'), []);
  const [created, setCreated] = useState();
  const [error, setError] = useState();
  useReady(!keys.loading);
  const items = keys.data?.items ?? [];
  const create = async (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    const { name, expires_at: expires } = form.elements;
    const body = { name: name.value };
    if (expires.value) body.expires_at = new Date(`${expires.value}T23:59:59Z`).toISOString();
    setError(undefined);
    try {
      setCreated(await api('/v1/api-keys', { method: 'POST', body }));
      form.reset();
      await keys.reload(true);
    } catch (err) {
      setError(err);
    }
  };
  const revoke = async (k) => {
    try {
      await api(`/v1/api-keys/${encodeURIComponent(k.public_key)}`, { method: 'DELETE' });
      await keys.reload(true);
    } catch (err) {
      setError(err);
    }
  };
  return html`<${PageHead} title="API keys" />
    <form id="key-form" class="inline-form" onSubmit=${create}>
      <label>Name <input name="name" required maxlength="253" /></label>
      <label>Expires <input name="expires_at" type="date" /></label>
      <button type="submit">Create key</button>
    </form>
    <section id="new-key" class="notice" hidden=${!created}>
      <p><strong>Copy the secret key now: it is not shown again.</strong></p>
      <p>Public key <code id="new-public-key">${created?.public_key ?? ''}</code></p>
      <p>Secret key <code id="new-secret-key">${created?.secret_key ?? ''}</code></p>
      <p class="muted">Use them as HTTP Basic (public:secret), X-API-Key or Bearer public:secret.</p>
      <button type="button" id="dismiss-key" onClick=${() => setCreated(undefined)}>I have copied it</button>
    </section>
    <${Status} id="keys-status" kind=${error || keys.error ? 'error' : ''}>${(error ?? keys.error)?.message ?? ''}<//>
    ${
      !keys.loading && !items.length && !keys.error
        ? html`<${Empty} title="No keys yet.">Create one for a script, a CI job or an OpenAI SDK (<code>/compat/v1</code>).<//>`
        : html`<div class="table-wrap"><table id="keys"><thead><tr><th>Name</th><th>Public key</th><th>Created</th><th>Last used</th><th>Expires</th><th>Active</th><th></th></tr></thead>
          <tbody>${items.map(
            (
              k,
            ) => html`<tr data-key=${k.public_key}><td>${k.name}</td><td class="mono">${k.public_key}</td><td>${when(k.created_at)}</td><td>${when(k.last_used_at)}</td><td>${when(k.expires_at)}</td><td>${k.is_active ? 'yes' : 'revoked'}</td>
              <td>${k.is_active ? html`<${ConfirmButton} class="revoke danger" question=${`Revoke ${k.name} (${k.public_key})?`} onConfirm=${() => revoke(k)}>Revoke<//>` : ''}</td></tr>`,
          )}</tbody></table></div>`
    }`;
}
