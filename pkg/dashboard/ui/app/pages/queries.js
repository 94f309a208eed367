// Queries, a page at a time from the API (newest first), filtered by name, refreshed live while
// the broker reports events (a query starting, calling a tool, ending).

import { DataTable, ListControls, usePagedList } from '../components/table.js';
import { Empty, ErrorBox, ObjLink, PageHead, Phase, TargetLink } from '../components/ui.js';
import { can } from '../lib/api.js';
import { ago, ms, num, targetText } from '../lib/format.js';
import { useLive, usePermissions, useReady, useThrottled } from '../lib/hooks.js';
import { html } from '../lib/html.js';
import { Link } from '../lib/router.js';

export const durationOf = (q) => {
  const s = Date.parse(q.status?.startTime ?? '');
  const e = Date.parse(q.status?.completionTime ?? '');
  return Number.isNaN(s) || Number.isNaN(e) ? undefined : e - s;
};

export const QUERY_COLUMNS = [
  {
    label: 'Name',
    value: (q) => html`<${ObjLink} section="queries" name=${q.metadata.name} />`,
    sortKey: (q) => q.metadata.name,
  },
  {
    label: 'Target',
    value: (q) => html`<${TargetLink} target=${q.spec?.target} />`,
    sortKey: (q) => targetText(q.spec?.target),
  },
  {
    label: 'Phase',
    value: (q) => html`<${Phase} phase=${q.status?.phase} />`,
    sortKey: (q) => q.status?.phase ?? '',
  },
  {
    label: 'Tokens',
    value: (q) => num(q.status?.tokenUsage?.totalTokens),
    sortKey: (q) => q.status?.tokenUsage?.totalTokens ?? 0,
  },
  { label: 'Duration', value: (q) => ms(durationOf(q)), sortKey: (q) => durationOf(q) ?? 0 },
  {
    label: 'Session',
    value: (q) => (q.spec?.sessionId ? html`<${ObjLink} section="sessions" name=${q.spec.sessionId} />` : ''),
    sortKey: (q) => q.spec?.sessionId ?? '',
  },
  {
    label: 'Created',
    value: (q) => ago(q.metadata.creationTimestamp),
    sortKey: (q) => q.metadata.creationTimestamp ?? '',
  },
];

export function QueryList() {
  const list = usePagedList('queries', { sort: '-created' });
  const perms = usePermissions();
  const refresh = useThrottled(() => void list.reload(true), 1000);
  const live = useLive('/v1/broker/events?watch=true', refresh);
  useReady(!list.loading);
  return html`<${PageHead} title="Queries" sub=${live === 'live' ? 'updating live' : ''}>
      ${can(perms, 'queries', 'create') ? html`<${Link} class="button" id="new-query" to="/queries/new">New query<//>` : ''}
    <//>
    <${ListControls} list=${list} />
    <${ErrorBox} error=${list.error} what="Queries" />
    ${
      !list.loading && !list.items.length && !list.error
        ? html`<${Empty} title=${list.q ? `No query's name contains "${list.q}".` : 'No queries yet.'}>Ask something in <${Link} to="/chat">Chat<//> or create a query; each one shows its answer, tool calls, events and trace here.<//>`
        : html`<${DataTable} id="resources" columns=${QUERY_COLUMNS} rows=${list.items} rowAttrs=${(q) => ({ 'data-name': q.metadata.name })} />`
    }`;
}
