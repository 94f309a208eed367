// Sources with add/edit/delete only when the marketplace's permissions probe says canEdit
// (fail-closed: any error hides them), and the items of all sources with each source's error inline.
import { useEffect, useState } from 'preact/hooks';
import { ConfirmButton, PageHead, Status } from '../components/ui.js';
import { api, nsPath } from '../lib/api.js';
import { useAsync, useReady } from '../lib/hooks.js';
import { html } from '../lib/html.js';

const unavailable = (err) =>
  err.status === 404 ? 'The marketplace is not available on this API service.' : err.message;

function SourceForm({ editing, onDone, onCancel }) {
  const [error, setError] = useState('');
  const save = async (event) => {
    event.preventDefault();
    const f = event.currentTarget.elements;
    const body = { url: f.url.value, displayName: f.displayName.value || undefined };
    if (f.scheme.value && f.credential.value)
      body.auth = { scheme: f.scheme.value, credential: f.credential.value };
    else if (!f.scheme.value && editing?.auth) body.auth = null;
    try {
      const sources = await nsPath('marketplace-sources');
      if (editing) await api(`${sources}/${encodeURIComponent(editing.name)}`, { method: 'PATCH', body });
      else await api(sources, { method: 'POST', body: { name: f.name.value, ...body } });
      onDone();
    } catch (err) {
      setError(err.message);
    }
  };
  return html`<form id="source-form" onSubmit=${save}>
    <label>Name <input name="name" required pattern="[-._a-zA-Z0-9]+" value=${editing?.name ?? ''} disabled=${!!editing} /></label>
    <label>Display name <input name="displayName" value=${editing?.displayName ?? ''} /></label>
    <label>URL <input name="url" type="url" required placeholder="https://…/marketplace.json" value=${editing?.url ?? ''} /></label>
    <label>Credential <select name="scheme" value=${editing?.auth?.scheme ?? ''}><option value="">none</option><option value="bearer">bearer</option><option value="basic">basic</option></select></label>
    <label>Secret <input name="credential" type="password" autocomplete="off" /></label>
    <p><button type="submit">Save</button> <button type="button" id="cancel-source" onClick=${onCancel}>Cancel</button></p>
    <p id="source-form-status" class=${`status ${error ? 'error' : ''}`} role="status">${error}</p>
  </form>`;
}

export function Marketplace() {
  const probe = useAsync(
    async () => (await api(`${await nsPath('marketplace-sources')}/permissions`))?.canEdit === true,
    [],
  );
  const canEdit = probe.data === true;
  const sources = useAsync(async () => api(await nsPath('marketplace-sources')), []);
  const items = useAsync(async () => api(await nsPath('marketplace-items')), []);
  const [form, setForm] = useState(); // {editing} while open
  const [error, setError] = useState();
  useEffect(() => {
    if (!probe.loading) document.body.dataset.canEdit = String(canEdit);
  }, [probe.loading, canEdit]);
  useReady(!probe.loading && !sources.loading && !items.loading);
  const reload = () => Promise.all([sources.reload(true), items.reload(true)]);
  const list = sources.data?.items ?? [];
  const itemList = items.data?.items ?? [];
  const failures = (items.data?.sources ?? []).filter((s) => s.error);
  const sourcesText = error
    ? error.message
    : sources.error
      ? unavailable(sources.error)
      : sources.loading
        ? 'Loading…'
        : list.length
          ? ''
          : 'No sources yet.';
  return html`<${PageHead} title="Marketplace" />
    <section>
      <h2>Sources</h2>
      <${Status} id="sources-status" kind=${error || sources.error ? 'error' : ''}>${sourcesText}<//>
      <div class="table-wrap"><table id="sources"><thead><tr><th>Name</th><th>Display name</th><th>URL</th><th>Credential</th><th></th></tr></thead>
      <tbody>${list.map(
        (s) =>
          html`<tr data-source=${s.name}><td>${s.name}</td><td>${s.displayName ?? ''}</td><td>${s.url}</td><td>${s.auth?.scheme ?? 'none'}</td><td>${
            canEdit
              ? html`<button type="button" class="edit" onClick=${() => setForm({ editing: s })}>Edit</button>
              <${ConfirmButton} class="delete danger" question=${`Delete the source ${s.name}?`} onConfirm=${async () => {
                try {
                  await api(`${await nsPath('marketplace-sources')}/${encodeURIComponent(s.name)}`, {
                    method: 'DELETE',
                  });
                  await reload();
                } catch (err) {
                  setError(err);
                }
              }}>Delete<//>`
              : ''
          }</td></tr>`,
      )}</tbody></table></div>
      <p><button id="add-source" type="button" hidden=${!canEdit} onClick=${() => setForm({})}>Add source</button></p>
      ${
        form
          ? html`<${SourceForm} key=${form.editing?.name ?? 'new'} editing=${form.editing} onCancel=${() => setForm(undefined)} onDone=${async () => {
              setForm(undefined);
              await reload();
            }} />`
          : ''
      }
    </section>
    <section>
      <h2>Items</h2>
      <${Status} id="items-status" kind=${items.error ? 'error' : ''}>${items.error ? unavailable(items.error) : items.loading ? 'Loading…' : itemList.length ? '' : 'No items.'}<//>
      <ul id="source-errors" class="errors">${failures.map((s) => html`<li data-source=${s.name}>${`${s.displayName || s.name}: ${s.error.code} — ${s.error.message}`}</li>`)}</ul>
      <div class="table-wrap"><table id="items"><thead><tr><th>Name</th><th>Type</th><th>Description</th><th>Source</th></tr></thead>
      <tbody>${itemList.map((i) => html`<tr><td>${i.displayName ?? i.name}</td><td>${i.type}</td><td>${i.description ?? ''}</td><td>${i.source}</td></tr>`)}</tbody></table></div>
    </section>`;
}
