import { $, api, fillTable, h, namespace, setStatus } from './lib.js';

// The namespace's MCP servers, read-only: the status the controller's discovery wrote (phase,
// protocol revision, tool count, why it failed) and the tools each server listed.

const HINTS = [
  ['readOnlyHint', 'read-only'],
  ['destructiveHint', 'destructive'],
  ['idempotentHint', 'idempotent'],
  ['openWorldHint', 'open world'],
];

/** The hints a server gave about a tool (its own claims: shown, never trusted). */
const hints = (annotations) =>
  HINTS.filter(([key]) => annotations?.[key] === true)
    .map(([, label]) => label)
    .join(', ');

/** The argument names of a JSON Schema, `*` marking the required ones. */
function args(schema) {
  const properties = schema && typeof schema.properties === 'object' ? Object.keys(schema.properties) : [];
  const required = new Set(Array.isArray(schema?.required) ? schema.required : []);
  return properties.map((p) => (required.has(p) ? `${p}*` : p)).join(', ');
}

function address(s) {
  if (s.status?.lastResolvedAddress) return s.status.lastResolvedAddress;
  if (s.spec?.address?.value) return s.spec.address.value;
  const ref = s.spec?.address?.valueFrom?.serviceRef;
  return ref ? `service ${ref.name}:${ref.port ?? ''}` : '';
}

/** Why a server is not ready: the status message, else the Available condition's. */
function message(s) {
  if (s.status?.message) return s.status.message;
  if (s.status?.phase === 'ready') return '';
  return s.status?.conditions?.find((c) => c.type === 'Available')?.message ?? '';
}

const row = (attrs, cells) =>
  h(
    'tr',
    attrs,
    cells.map((v) => h('td', {}, v)),
  );

async function load() {
  setStatus('list-status', 'Loading…');
  try {
    const ns = await namespace();
    const { items = [] } = (await api(`/v1/namespaces/${ns}/mcpservers`)) ?? {};
    fillTable(
      'servers',
      items.map((s) => {
        const phase = s.status?.phase ?? 'pending';
        return row({ dataset: { name: s.metadata.name } }, [
          s.metadata.name,
          h('span', { class: `phase ${phase}` }, phase),
          s.status?.protocolVersion ?? '',
          s.status?.toolCount === undefined ? '' : String(s.status.toolCount),
          h('span', { class: 'mono' }, address(s)),
          message(s),
        ]);
      }),
    );
    fillTable(
      'tools',
      items.flatMap((s) =>
        (s.status?.tools ?? []).map((t) =>
          row({ dataset: { server: s.metadata.name, tool: t.name } }, [
            s.metadata.name,
            h('code', {}, t.name),
            t.description ?? '',
            hints(t.annotations),
            args(t.inputSchema),
          ]),
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
