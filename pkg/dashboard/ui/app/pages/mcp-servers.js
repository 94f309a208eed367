// The namespace's MCP servers, read-only: the status the controller's discovery wrote (phase,
// protocol revision, tool count, why it failed) and the tools each server listed. A server opens
// as its detail view.

import { Empty, PageHead, Phase, Status } from '../components/ui.js';
import { api, nsPath } from '../lib/api.js';
import { addressText } from '../lib/format.js';
import { useAsync, useReady } from '../lib/hooks.js';
import { html } from '../lib/html.js';
import { Link } from '../lib/router.js';

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

/** Why a server is not ready: the status message, else the Available condition's (none when ready). */
function message(s) {
  if (s.status?.message) return s.status.message;
  if (s.status?.phase === 'ready') return '';
  return s.status?.conditions?.find((c) => c.type === 'Available')?.message ?? '';
}

export function McpServers() {
  const list = useAsync(async () => {
    const ns = await nsPath('mcpservers');
    return { ns: ns.split('/')[3], ...(await api(ns)) };
  }, []);
  useReady(!list.loading);
  const items = list.data?.items ?? [];
  const ns = list.data?.ns ? decodeURIComponent(list.data.ns) : '';
  return html`<${PageHead} title="MCP servers"><button type="button" id="reload" onClick=${() => list.reload()}>Reload</button><//>
    <${Status} id="list-status" kind=${list.error ? 'error' : ''}>${list.error ? list.error.message : list.loading ? 'Loading…' : items.length ? `${items.length} in ${ns}` : `None in ${ns}.`}<//>
    ${!list.loading && !items.length && !list.error ? html`<${Empty} title="No MCP servers yet.">Declare one with kubectl (<code>kind: MCPServer</code>); <code>berth up</code> serves a demo one at http://127.0.0.1:8090/mcp.<//>` : ''}
    <div class="table-wrap"><table id="servers"><thead><tr><th>Name</th><th>Phase</th><th>Protocol</th><th>Tools</th><th>Address</th><th>Message</th></tr></thead>
    <tbody>${items.map(
      (s) =>
        html`<tr data-name=${s.metadata.name}><td><${Link} to=${`/mcp-servers/${encodeURIComponent(s.metadata.name)}`}>${s.metadata.name}<//></td><td><${Phase} phase=${s.status?.phase ?? 'pending'} /></td><td>${s.status?.protocolVersion ?? ''}</td><td>${s.status?.toolCount === undefined ? '' : String(s.status.toolCount)}</td><td><span class="mono">${addressText(s)}</span></td><td>${message(s)}</td></tr>`,
    )}</tbody></table></div>
    <section>
      <h2>Tools</h2>
      <p class="muted">As each server listed them at its last discovery; * marks a required argument.</p>
      <div class="table-wrap"><table id="tools"><thead><tr><th>Server</th><th>Tool</th><th>Description</th><th>Hints</th><th>Arguments</th></tr></thead>
      <tbody>${items.flatMap((s) =>
        (s.status?.tools ?? []).map(
          (t) =>
            html`<tr data-server=${s.metadata.name} data-tool=${t.name}><td>${s.metadata.name}</td><td><code>${t.name}</code></td><td>${t.description ?? ''}</td><td>${hints(t.annotations)}</td><td>${args(t.inputSchema)}</td></tr>`,
        ),
      )}</tbody></table></div>
    </section>`;
}
