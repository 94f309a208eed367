import { $, api, fillTable, h, namespace, setStatus } from './lib.js';

// Sources with add/edit/delete only when the permissions probe says canEdit (fail-closed: any
// error hides them), and the items of all sources with each source's error shown inline.

const ns = await namespace();
const sources = `/v1/namespaces/${ns}/marketplace-sources`;
const form = $('#source-form');
let canEdit = false;
let editing; // the source being edited, or undefined when adding

const unavailable = (err) =>
  err.status === 404 ? 'The marketplace is not available on this API service.' : err.message;

async function probe() {
  try {
    canEdit = (await api(`${sources}/permissions`))?.canEdit === true;
  } catch {
    canEdit = false;
  }
  $('#add-source').hidden = !canEdit;
  document.body.dataset.canEdit = String(canEdit);
}

async function loadSources() {
  setStatus('sources-status', 'Loading…');
  try {
    const { items = [] } = (await api(sources)) ?? {};
    fillTable('sources', items.map(sourceRow));
    setStatus('sources-status', items.length ? '' : 'No sources yet.');
  } catch (err) {
    fillTable('sources', []);
    setStatus('sources-status', unavailable(err), 'error');
  }
}

function sourceRow(s) {
  const actions = canEdit
    ? [
        h('button', { type: 'button', class: 'edit', onclick: () => openForm(s) }, 'Edit'),
        h('button', { type: 'button', class: 'delete', onclick: () => remove(s) }, 'Delete'),
      ]
    : [];
  return h(
    'tr',
    { dataset: { source: s.name } },
    h('td', {}, s.name),
    h('td', {}, s.displayName ?? ''),
    h('td', {}, s.url),
    h('td', {}, s.auth?.scheme ?? 'none'),
    h('td', {}, actions),
  );
}

async function loadItems() {
  setStatus('items-status', 'Loading…');
  try {
    const { items = [], sources: status = [] } = (await api(`/v1/namespaces/${ns}/marketplace-items`)) ?? {};
    fillTable(
      'items',
      items.map((i) =>
        h(
          'tr',
          {},
          h('td', {}, i.displayName ?? i.name),
          h('td', {}, i.type),
          h('td', {}, i.description ?? ''),
          h('td', {}, i.source),
        ),
      ),
    );
    $('#source-errors').replaceChildren(
      ...status
        .filter((s) => s.error)
        .map((s) =>
          h(
            'li',
            { dataset: { source: s.name } },
            `${s.displayName || s.name}: ${s.error.code} — ${s.error.message}`,
          ),
        ),
    );
    setStatus('items-status', items.length ? '' : 'No items.');
  } catch (err) {
    fillTable('items', []);
    setStatus('items-status', unavailable(err), 'error');
  }
}

function openForm(source) {
  editing = source;
  form.reset();
  form.elements.name.value = source?.name ?? '';
  form.elements.name.disabled = !!source;
  form.elements.displayName.value = source?.displayName ?? '';
  form.elements.url.value = source?.url ?? '';
  form.elements.scheme.value = source?.auth?.scheme ?? '';
  setStatus('source-form-status', '');
  form.hidden = false;
}

async function save(event) {
  event.preventDefault();
  const f = form.elements;
  const body = { url: f.url.value, displayName: f.displayName.value || undefined };
  if (f.scheme.value && f.credential.value)
    body.auth = { scheme: f.scheme.value, credential: f.credential.value };
  else if (!f.scheme.value && editing?.auth) body.auth = null;
  try {
    if (editing)
      await api(`${sources}/${encodeURIComponent(editing.name)}`, {
        method: 'PATCH',
        body: JSON.stringify(body),
      });
    else await api(sources, { method: 'POST', body: JSON.stringify({ name: f.name.value, ...body }) });
    form.hidden = true;
    await Promise.all([loadSources(), loadItems()]);
  } catch (err) {
    setStatus('source-form-status', err.message, 'error');
  }
}

async function remove(source) {
  if (!window.confirm(`Delete the source ${source.name}?`)) return;
  try {
    await api(`${sources}/${encodeURIComponent(source.name)}`, { method: 'DELETE' });
    await Promise.all([loadSources(), loadItems()]);
  } catch (err) {
    setStatus('sources-status', err.message, 'error');
  }
}

$('#add-source').addEventListener('click', () => openForm(undefined));
$('#cancel-source').addEventListener('click', () => {
  form.hidden = true;
});
form.addEventListener('submit', save);
await probe();
await Promise.all([loadSources(), loadItems()]);
document.body.dataset.ready = 'true';
