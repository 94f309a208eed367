import { $, api, fillTable, h, namespace, setStatus, when } from './lib.js';

// Queries, agents and models of the namespace: one list screen, the columns per kind.

const kind = location.pathname.split('/').filter(Boolean).at(-1);
const columns = {
  queries: (q) => [
    q.metadata.name,
    q.spec?.target ? `${q.spec.target.type}/${q.spec.target.name}` : '',
    h('span', { class: `phase ${q.status?.phase ?? 'pending'}` }, q.status?.phase ?? 'pending'),
    when(q.metadata.creationTimestamp),
  ],
  agents: (a) => [
    a.metadata.name,
    a.spec?.modelRef?.name ?? 'default',
    a.spec?.description ?? '',
    when(a.metadata.creationTimestamp),
  ],
  models: (m) => [m.metadata.name, m.spec?.type ?? '', m.spec?.model ?? '', m.status?.phase ?? ''],
};

async function load() {
  setStatus('list-status', 'Loading…');
  try {
    const ns = await namespace();
    const { items = [] } = (await api(`/v1/namespaces/${ns}/${kind}`)) ?? {};
    fillTable(
      'resources',
      items.map((item) =>
        h(
          'tr',
          { dataset: { name: item.metadata.name } },
          columns[kind](item).map((v) => h('td', {}, v)),
        ),
      ),
    );
    setStatus('list-status', items.length ? `${items.length} in ${ns}` : `None in ${ns}.`);
  } catch (err) {
    setStatus('list-status', err.message, 'error');
  }
}

$('#reload').addEventListener('click', load);
await load();
document.body.dataset.ready = 'true';
