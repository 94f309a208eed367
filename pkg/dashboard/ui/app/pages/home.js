// The landing page: the namespace, every section with what it is for, the latest queries and a
// chart of their durations (uPlot, loaded only here).
import { useEffect, useRef } from 'preact/hooks';
import { Empty, ErrorBox, ObjLink, Phase } from '../components/ui.js';
import { api, assetUrl, base, namespace, nsPath } from '../lib/api.js';
import { ago, targetText } from '../lib/format.js';
import { useAsync, useReady } from '../lib/hooks.js';
import { html } from '../lib/html.js';
import { Link } from '../lib/router.js';

const SECTIONS = [...document.querySelectorAll('#nav a')].map((a) => ({
  href: a.getAttribute('href'),
  title: a.textContent,
}));
const ABOUT = {
  chat: 'talk to an agent, team, model or tool',
  queries: 'answers, tool calls, events and traces',
  sessions: 'conversations as transcripts, live',
  traces: 'waterfalls of spans',
  approvals: 'tool calls waiting for a person',
  evaluations: 'scores of outputs and queries',
  agents: 'create and edit agents',
  teams: 'agents working together',
  models: 'providers the agents call',
  tools: 'HTTP and MCP tools',
  memories: 'where conversations are kept',
  'mcp-servers': 'MCP servers and their tools',
  evaluators: 'services that score outputs',
  marketplace: 'catalogue sources and items',
  'api-keys': 'create, list and revoke keys',
};

/** Durations of the latest queries as a bar-like line (uPlot draws on a canvas: CSP-safe). */
function DurationChart({ queries }) {
  const el = useRef();
  useEffect(() => {
    const done = queries.filter((q) => q.status?.startTime && q.status?.completionTime).reverse();
    if (done.length < 2 || !el.current) return undefined;
    let plot;
    let gone = false;
    void import(assetUrl('chart')).then(({ durationPlot }) => {
      if (!gone) plot = durationPlot(el.current, done);
    });
    return () => {
      gone = true;
      plot?.destroy();
    };
  }, [queries]);
  return html`<div ref=${el} class="chart" aria-label="Durations of the latest queries"></div>`;
}

export function Home() {
  const ns = useAsync(() => namespace(), []);
  const recent = useAsync(async () => api(`${await nsPath('queries')}?limit=20&sort=-created`), []);
  useReady(!ns.loading && !recent.loading);
  const items = recent.data?.items ?? [];
  return html`<h1>Berth</h1>
    <p>Namespace <strong id="namespace">${ns.data ?? (ns.error ? `unknown (${ns.error.message})` : '…')}</strong></p>
    <ul class="cards">${SECTIONS.map((s) => {
      const key = s.href.slice(base.length + 1);
      return html`<li><${Link} to=${`/${key}`}>${s.title}<//><span>${ABOUT[key] ?? ''}</span></li>`;
    })}</ul>
    <h2>Latest queries</h2>
    <${ErrorBox} error=${recent.error} what="Queries" />
    ${
      !recent.loading && !items.length && !recent.error
        ? html`<${Empty} title="No queries yet.">Start a conversation in <${Link} to="/chat">Chat<//>, or apply the samples: <code>kubectl apply -f manifests/samples/</code>.<//>`
        : html`<${DurationChart} queries=${items} />
        <table id="recent"><thead><tr><th>Query</th><th>Target</th><th>Phase</th><th>Created</th></tr></thead>
        <tbody>${items
          .slice(0, 8)
          .map(
            (q) =>
              html`<tr data-name=${q.metadata.name}><td><${ObjLink} section="queries" name=${q.metadata.name} /></td><td>${targetText(q.spec?.target)}</td><td><${Phase} phase=${q.status?.phase} /></td><td>${ago(q.metadata.creationTimestamp)}</td></tr>`,
          )}</tbody></table>`
    }`;
}
