// Agents, teams, models, tools, memories and evaluators: lists that page on the server, a detail
// view (spec, status and conditions, the queries that used it, YAML), create and edit forms made
// from the kind's schema, delete with confirmation — each control shown only when the permissions
// probe allows it. MCP servers get the detail view read-only.
import { useState } from 'preact/hooks';
import { DataTable, ListControls, usePagedList } from '../components/table.js';
import {
  Conditions,
  ConfirmButton,
  Empty,
  ErrorBox,
  Json,
  KeyValue,
  ObjLink,
  PageHead,
  Phase,
  Tabs,
} from '../components/ui.js';
import { YamlView } from '../components/yaml.js';
import { api, can, nsPath } from '../lib/api.js';
import { addressText, ago, when } from '../lib/format.js';
import { useAsync, usePermissions, useReady } from '../lib/hooks.js';
import { html } from '../lib/html.js';
import { Link, navigate } from '../lib/router.js';
import { QUERY_COLUMNS } from './queries.js';
import { ResourceForm } from './resource-form.js';

const name = {
  label: 'Name',
  value: (o) => html`<${ObjLink} section=${o.__section} name=${o.metadata.name} />`,
  sortKey: (o) => o.metadata.name,
};
const created = {
  label: 'Created',
  value: (o) => ago(o.metadata.creationTimestamp),
  sortKey: (o) => o.metadata.creationTimestamp ?? '',
};
const phase = {
  label: 'Phase',
  value: (o) => (o.status?.phase ? html`<${Phase} phase=${o.status.phase} />` : ''),
  sortKey: (o) => o.status?.phase ?? '',
};
const col = (label, f) => ({ label, value: f, sortKey: (o) => String(f(o) ?? '') });

export const KINDS = {
  agents: {
    plural: 'agents',
    kind: 'Agent',
    title: 'Agents',
    target: 'agent',
    columns: [
      name,
      col('Model', (o) => o.spec?.modelRef?.name ?? 'default'),
      col('Description', (o) => o.spec?.description ?? ''),
      created,
    ],
    empty: 'An agent is a prompt, a model and tools. Create one, then chat with it.',
  },
  teams: {
    plural: 'teams',
    kind: 'Team',
    title: 'Teams',
    target: 'team',
    columns: [
      name,
      col('Strategy', (o) => o.spec?.strategy ?? ''),
      col('Members', (o) => (o.spec?.members ?? []).map((m) => m.name).join(', ')),
      created,
    ],
    empty: 'A team runs agents (or teams) in turn on one question. Create agents first.',
  },
  models: {
    plural: 'models',
    kind: 'Model',
    title: 'Models',
    target: 'model',
    columns: [
      name,
      col('Type', (o) => o.spec?.type ?? ''),
      col('Provider model', (o) => o.spec?.model ?? ''),
      phase,
      created,
    ],
    empty: 'A Model points at an OpenAI-compatible provider; `berth up` creates the demo model.',
  },
  tools: {
    plural: 'tools',
    kind: 'Tool',
    title: 'Tools',
    target: 'tool',
    columns: [
      name,
      col('Type', (o) => (o.spec?.mcp ? 'mcp' : o.spec?.http ? 'http' : (o.spec?.type ?? ''))),
      col('Description', (o) => o.spec?.description ?? ''),
      created,
    ],
    empty: 'A Tool is an HTTP endpoint (or an MCP server’s tool) agents may call.',
  },
  memories: {
    plural: 'memories',
    kind: 'Memory',
    title: 'Memories',
    columns: [name, col('Address', addressText), phase, created],
    empty: 'A Memory keeps conversations; `berth up` creates "default" on its broker.',
  },
  evaluators: {
    plural: 'evaluators',
    kind: 'Evaluator',
    title: 'Evaluators',
    columns: [name, col('Address', addressText), phase, created],
    empty: 'An Evaluator scores outputs; `berth up` serves a built-in one at http://127.0.0.1:9100.',
  },
};
const ALL = {
  ...KINDS,
  'mcp-servers': { plural: 'mcpservers', kind: 'MCPServer', title: 'MCP servers', readOnly: true },
};

export function ResourceList({ section }) {
  const k = KINDS[section];
  const list = usePagedList(k.plural);
  const perms = usePermissions();
  useReady(!list.loading);
  const rows = list.items.map((o) => Object.assign(o, { __section: section }));
  return html`<${PageHead} title=${k.title}>
      ${can(perms, k.plural, 'create') ? html`<${Link} class="button" id="new" to=${`/${section}/new`}>New ${k.kind}<//>` : ''}
    <//>
    <${ListControls} list=${list} />
    <${ErrorBox} error=${list.error} what=${k.title} />
    ${
      !list.loading && !rows.length && !list.error
        ? html`<${Empty} title=${list.q ? `No name contains "${list.q}".` : `No ${k.title.toLowerCase()} yet.`}>${k.empty}<//>`
        : html`<${DataTable} id="resources" columns=${k.columns} rows=${rows} rowAttrs=${(o) => ({ 'data-name': o.metadata.name })} />`
    }`;
}

/** Queries (or evaluations) that used this object. */
function UsedBy({ section, obj }) {
  const k = ALL[section];
  const n = obj.metadata.name;
  const used = useAsync(async () => {
    if (section === 'evaluators') {
      const all = (await api(await nsPath('evaluations')))?.items ?? [];
      return { evaluations: all.filter((e) => e.spec?.evaluator?.name === n) };
    }
    const { items = [] } = (await api(`${await nsPath('queries')}?limit=1000&sort=-created`)) ?? {};
    const uses = (q) =>
      k.target
        ? q.spec?.target?.type === k.target && q.spec?.target?.name === n
        : section === 'memories' && q.spec?.memory?.name === n;
    return { queries: items.filter(uses) };
  }, [section, n]);
  if (used.loading) return html`<p class="muted">Loading…</p>`;
  if (used.data?.evaluations)
    return used.data.evaluations.length
      ? html`<ul id="used-by">${used.data.evaluations.map((e) => html`<li><${ObjLink} section="evaluations" name=${e.metadata.name} /> <${Phase} phase=${e.status?.phase} /></li>`)}</ul>`
      : html`<p class="muted" id="used-by">No evaluation used it yet.</p>`;
  const qs = used.data?.queries ?? [];
  if (!k.target && section !== 'memories') return null;
  return qs.length
    ? html`<${DataTable} id="used-by" columns=${QUERY_COLUMNS} rows=${qs.slice(0, 50)} rowAttrs=${(q) => ({ 'data-name': q.metadata.name })} />`
    : html`<p class="muted" id="used-by">No query used it yet.${k.target ? html` <${Link} to=${`/chat?target=${k.target}/${encodeURIComponent(n)}`}>Chat with it<//>.` : ''}</p>`;
}

export function ResourceDetail({ section, name: objName }) {
  const k = ALL[section];
  const perms = usePermissions();
  const [tab, setTab] = useState('overview');
  const obj = useAsync(
    async () => api(await nsPath(`${k.plural}/${encodeURIComponent(objName)}`)),
    [section, objName],
  );
  useReady(!obj.loading);
  if (obj.error)
    return html`<${PageHead} title=${objName} /><${ErrorBox} error=${obj.error} what=${k.kind} />`;
  const o = obj.data;
  if (!o) return html`<${PageHead} title=${objName} /><p class="muted">Loading…</p>`;
  const canUpdate = !k.readOnly && can(perms, k.plural, 'update');
  const path = async () => nsPath(`${k.plural}/${encodeURIComponent(objName)}`);
  const replace = async (parsed) => {
    const metadata = {
      labels: parsed.metadata?.labels,
      annotations: parsed.metadata?.annotations,
      resourceVersion: o.metadata.resourceVersion,
    };
    await api(await path(), { method: 'PUT', body: { metadata, spec: parsed.spec } });
    await obj.reload(true);
  };
  const tabs = [['overview', 'Overview'], ...(canUpdate ? [['edit', 'Edit']] : []), ['yaml', 'YAML']];
  return html`<${PageHead} title=${objName} sub=${html`${k.kind}${o.status?.phase ? html` · <${Phase} phase=${o.status.phase} />` : ''}`}>
      ${k.target ? html`<${Link} class="button" id="chat-with" to=${`/chat?target=${k.target}/${encodeURIComponent(objName)}`}>Chat<//>` : ''}
      ${
        !k.readOnly && can(perms, k.plural, 'delete')
          ? html`<${ConfirmButton} class="danger" id="delete" question=${`Delete the ${k.kind} ${objName}?`} onConfirm=${async () => {
              await api(await path(), { method: 'DELETE' });
              navigate(`/${section}`);
            }}>Delete<//>`
          : ''
      }
    <//>
    <${Tabs} tabs=${tabs} active=${tab} onPick=${setTab} />
    ${
      tab === 'overview'
        ? html`
      <${KeyValue} entries=${[
        ['Description', o.spec?.description],
        ['Address', o.spec?.address ? addressText(o) : ''],
        ['Message', o.status?.message],
        ['Created', when(o.metadata.creationTimestamp)],
      ]} />
      <h2>Spec</h2><${Json} value=${o.spec} />
      ${o.status ? html`<h2>Status</h2><${Json} value=${Object.fromEntries(Object.entries(o.status).filter(([s]) => s !== 'conditions'))} />` : ''}
      <h2>Conditions</h2><${Conditions} conditions=${o.status?.conditions} />
      ${k.target || section === 'memories' ? html`<h2>Queries that used it</h2>` : section === 'evaluators' ? html`<h2>Evaluations</h2>` : ''}
      <${UsedBy} section=${section} obj=${o} />`
        : ''
    }
    ${
      tab === 'edit'
        ? html`<${ResourceForm} section=${section} plural=${k.plural} obj=${o} onSaved=${() => {
            setTab('overview');
            void obj.reload(true);
          }} />`
        : ''
    }
    ${tab === 'yaml' ? html`<${YamlView} obj=${o} canEdit=${canUpdate} onSave=${replace} />` : ''}`;
}

export function ResourceCreate({ section }) {
  const k = ALL[section] ?? { plural: 'queries', kind: 'Query', title: 'Queries' };
  const plural = section === 'queries' ? 'queries' : k.plural;
  const kind = section === 'queries' ? 'Query' : k.kind;
  useReady(true);
  return html`<${PageHead} title=${`New ${kind}`} />
    <${ResourceForm} section=${section} plural=${plural} onSaved=${(created) => navigate(`/${section}/${encodeURIComponent(created.metadata.name)}`)} />`;
}
