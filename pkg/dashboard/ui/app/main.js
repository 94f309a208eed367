// The dashboard's browser side: one Preact app rendered into the server's shell. Routes map a
// path under the base path to a page; the server answers every one of them with the same shell.
// uPlot's styles here: CSS of a lazily loaded chunk would not be loaded with it.
import 'uplot/dist/uPlot.min.css';
import './styles.css';
import { render } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { namespace } from './lib/api.js';
import { html } from './lib/html.js';
import { bindNavigation, match, useLocation } from './lib/router.js';
import { ApiKeys } from './pages/api-keys.js';
import { Approvals } from './pages/approvals.js';
import { Chat } from './pages/chat.js';
import { EvaluationCreate, EvaluationDetail, EvaluationList } from './pages/evaluations.js';
import { Home } from './pages/home.js';
import { Marketplace } from './pages/marketplace.js';
import { McpServers } from './pages/mcp-servers.js';
import { QueryList } from './pages/queries.js';
import { QueryDetail } from './pages/query-detail.js';
import { KINDS, ResourceCreate, ResourceDetail, ResourceList } from './pages/resources.js';
import { SessionDetail, SessionList } from './pages/sessions.js';
import { TraceDetail, TraceList } from './pages/traces.js';

const kindRoutes = Object.keys(KINDS).flatMap((section) => [
  [`/${section}`, () => html`<${ResourceList} section=${section} />`],
  [`/${section}/new`, () => html`<${ResourceCreate} section=${section} />`],
  [`/${section}/:name`, ({ name }) => html`<${ResourceDetail} section=${section} name=${name} />`],
]);

const ROUTES = [
  ['/', () => html`<${Home} />`],
  ['/queries', () => html`<${QueryList} />`],
  ['/queries/new', () => html`<${ResourceCreate} section="queries" />`],
  ['/queries/:name', ({ name }) => html`<${QueryDetail} name=${name} />`],
  ['/sessions', () => html`<${SessionList} />`],
  ['/sessions/:id', ({ id }) => html`<${SessionDetail} id=${id} />`],
  ['/traces', () => html`<${TraceList} />`],
  ['/traces/:id', ({ id }) => html`<${TraceDetail} id=${id} />`],
  // Keyed: a new chat, or another conversation, starts from a clean page.
  ['/chat', () => html`<${Chat} key="new" />`],
  [
    '/chat/:conversation',
    ({ conversation }) => html`<${Chat} key=${conversation} conversation=${conversation} />`,
  ],
  ['/approvals', () => html`<${Approvals} />`],
  ['/evaluations', () => html`<${EvaluationList} />`],
  ['/evaluations/new', () => html`<${EvaluationCreate} />`],
  ['/evaluations/:name', ({ name }) => html`<${EvaluationDetail} name=${name} />`],
  ['/mcp-servers', () => html`<${McpServers} />`],
  ['/mcp-servers/:name', ({ name }) => html`<${ResourceDetail} section="mcp-servers" name=${name} />`],
  ['/marketplace', () => html`<${Marketplace} />`],
  ['/api-keys', () => html`<${ApiKeys} />`],
  ...kindRoutes,
];

function NotFound({ path }) {
  return html`<h1>Not found</h1><p>Nothing here at <code>${path}</code>.</p>`;
}

function App() {
  const { path } = useLocation();
  const first = useRef(true);
  useEffect(() => {
    bindNavigation(path);
    if (first.current) {
      first.current = false;
      return;
    }
    // A new page (navigate() marked it unready): focus moves to it for keyboard and screen readers.
    document.getElementById('main')?.focus({ preventScroll: true });
    document.getElementById('nav')?.classList.remove('open');
  }, [path]);
  for (const [pattern, view] of ROUTES) {
    const params = match(pattern, path.replace(/\/+$/, '') || '/');
    if (params) return view(params);
  }
  return html`<${NotFound} path=${path} />`;
}

function setupChrome() {
  const root = document.documentElement;
  const saved = localStorage.getItem('berth.theme');
  if (saved) root.dataset.theme = saved;
  document.getElementById('theme')?.addEventListener('click', () => {
    const dark = root.dataset.theme
      ? root.dataset.theme === 'dark'
      : window.matchMedia('(prefers-color-scheme: dark)').matches;
    root.dataset.theme = dark ? 'light' : 'dark';
    localStorage.setItem('berth.theme', root.dataset.theme);
  });
  const menu = document.getElementById('menu');
  menu?.addEventListener('click', () => {
    const open = document.getElementById('nav').classList.toggle('open');
    menu.setAttribute('aria-expanded', String(open));
  });
  namespace().then(
    (ns) => {
      const badge = document.getElementById('namespace-badge');
      if (badge) badge.textContent = ns;
    },
    () => {},
  );
}

setupChrome();
const main = document.getElementById('main');
main.replaceChildren();
render(html`<${App} />`, main);
