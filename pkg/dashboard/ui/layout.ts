import { html } from 'hono/html';
import type { AuthMode } from '../../auth/mode.ts';
import type { Paths } from '../context.ts';
import type { SessionUser } from '../session/store.ts';

export type Html = ReturnType<typeof html>;

/** The screens the landing page links, in navigation order: path, title, one-line purpose. */
export const SCREENS = [
  { path: '/marketplace', title: 'Marketplace', about: 'catalogue sources and their items' },
  { path: '/sessions', title: 'Sessions', about: 'conversations as they happen, live' },
  { path: '/traces', title: 'Traces', about: 'spans of every query, live' },
  { path: '/queries', title: 'Queries', about: 'queries and their status' },
  { path: '/agents', title: 'Agents', about: 'agents of this namespace' },
  { path: '/models', title: 'Models', about: 'models of this namespace' },
  { path: '/mcp-servers', title: 'MCP servers', about: 'MCP servers, their status and tools' },
  { path: '/api-keys', title: 'API keys', about: 'create, list and revoke keys' },
  { path: '/chat', title: 'Chat', about: 'talk to an agent, team, model or tool' },
] as const;

export interface PageOptions {
  title: string;
  paths: Paths;
  mode: AuthMode;
  user?: SessionUser;
  /** The screen's script under `static/js/`, if it has one. */
  script?: string;
  /** Marks the active navigation entry. */
  current?: string;
  /** The CSRF token the sign-out form posts (sso/hybrid). */
  csrfToken?: string;
  body: Html;
}

/**
 * The one HTML shell: no inline script (the CSP forbids it), assets from this server only, every
 * URL carrying the base path. Scripts learn the base path and the mode from `data-*` attributes.
 */
export function page(o: PageOptions): Html {
  const p = o.paths;
  const signedIn = o.user && (o.mode === 'sso' || o.mode === 'hybrid');
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${o.title} · Berth</title>
<link rel="icon" href="${p.to('/favicon.ico')}">
<link rel="stylesheet" href="${p.to('/static/style.css')}">
${o.script ? html`<script type="module" src="${p.to(`/static/js/${o.script}`)}"></script>` : ''}
</head>
<body data-base="${p.base}" data-mode="${o.mode}">
<header>
<a class="brand" href="${p.home}">Berth</a>
<nav>${SCREENS.map(
    (s) =>
      html`<a href="${p.to(s.path)}"${o.current === s.path ? html` aria-current="page"` : ''}>${s.title}</a>`,
  )}</nav>
${
  signedIn
    ? html`<span class="user"><span id="user-name">${o.user?.name ?? o.user?.email ?? o.user?.sub}</span>
<form class="sign-out" method="post" action="${p.auth}/federated-signout">
<input type="hidden" name="csrfToken" value="${o.csrfToken ?? ''}">
<button id="sign-out" type="submit">Sign out</button>
</form></span>`
    : ''
}
</header>
<main id="main">
<h1>${o.title}</h1>
${o.body}
</main>
</body>
</html>`;
}

/** A page outside the signed-in shell (sign-out landing, errors): no navigation, no scripts. */
export function plainPage(title: string, paths: Paths, body: Html): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Berth</title>
<link rel="icon" href="${paths.to('/favicon.ico')}">
<link rel="stylesheet" href="${paths.to('/static/style.css')}">
</head>
<body data-base="${paths.base}">
<main id="main" class="narrow">
<h1>${title}</h1>
${body}
</main>
</body>
</html>`;
}
