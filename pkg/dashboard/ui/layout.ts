import { html } from 'hono/html';
import type { AuthMode } from '../../auth/mode.ts';
import type { Paths } from '../context.ts';
import type { SessionUser } from '../session/store.ts';
import { SECTION_GROUPS } from './screens.ts';

export type Html = ReturnType<typeof html>;

export interface PageOptions {
  title: string;
  paths: Paths;
  mode: AuthMode;
  user?: SessionUser;
  /** The section of the page, marked in the navigation. */
  current?: string;
  /** The CSRF token the sign-out form posts (sso/hybrid). */
  csrfToken?: string;
  /** This page's own path (the skip link's target keeps the base path like every URL here). */
  self: string;
}

/** The bundle's files by logical name (`main.js` → `main-<hash>.js`), from its manifest at start. */
let bundle: Record<string, string> = {};
export function setBundle(manifest: Record<string, string>): void {
  bundle = manifest;
}
const asset = (p: Paths, name: string) => p.to(`/static/app/${bundle[name] ?? name}`);
const STYLES = (p: Paths) => html`<link rel="stylesheet" href="${asset(p, 'main.css')}">`;

/**
 * The one HTML shell of every section: no inline script or style (the CSP forbids both), the
 * bundle from this server only, every URL carrying the base path. The navigation and the user's
 * sign-out form are rendered here (the form needs the CSRF token); the app renders `main`. Scripts
 * learn the base path and mode from `data-*` attributes.
 */
export function page(o: PageOptions): Html {
  const p = o.paths;
  const signedIn = o.user && (o.mode === 'sso' || o.mode === 'hybrid');
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${o.title} · Berth</title>
<link rel="icon" href="${p.to('/favicon.ico')}">
${STYLES(p)}
<script type="module" src="${asset(p, 'main.js')}"></script>
</head>
<body data-base="${p.base}" data-mode="${o.mode}" data-ready="false" data-asset-yaml="${asset(p, 'yaml.js')}" data-asset-markdown="${asset(p, 'markdown.js')}" data-asset-chart="${asset(p, 'chart.js')}">
<a class="skip" href="${o.self}#main">Skip to content</a>
<header>
<button id="menu" type="button" aria-controls="nav" aria-expanded="false" aria-label="Menu">☰</button>
<a class="brand" href="${p.home}">Berth</a>
<span id="namespace-badge" class="badge" title="namespace"></span>
<span class="spacer"></span>
<button id="theme" type="button" aria-label="Switch between light and dark">◐</button>
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
<div class="layout">
<nav id="nav" aria-label="Sections">${SECTION_GROUPS.map(
    (g) =>
      html`<p class="group">${g.title}</p><ul>${g.sections.map(
        (s) =>
          html`<li><a href="${p.to(s.path)}"${o.current === s.path ? html` aria-current="page"` : ''}>${s.title}</a></li>`,
      )}</ul>`,
  )}</nav>
<main id="main" tabindex="-1">
<h1>${o.title}</h1>
<p class="muted">Loading…</p>
</main>
</div>
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
<meta name="color-scheme" content="light dark">
<title>${title} · Berth</title>
<link rel="icon" href="${paths.to('/favicon.ico')}">
${STYLES(paths)}
</head>
<body data-base="${paths.base}">
<main id="main" class="narrow">
<h1>${title}</h1>
${body}
</main>
</body>
</html>`;
}
