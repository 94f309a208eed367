import { html } from 'hono/html';
import type { Paths } from '../context.ts';
import { type Html, SCREENS } from './layout.ts';

/**
 * The body of each screen: the static skeleton its script (static/js/<screen>.js) fills through
 * the proxy. Kept server-side so a screen shows its structure at once, before any API answer.
 */
export interface Screen {
  path: string;
  title: string;
  script?: string;
  body: (paths: Paths) => Html;
}

const status = (id: string) => html`<p id="${id}" class="status" role="status"></p>`;

const table = (id: string, columns: string[]) =>
  html`<table id="${id}"><thead><tr>${columns.map((c) => html`<th>${c}</th>`)}</tr></thead><tbody></tbody></table>`;

const home: Screen = {
  path: '/',
  title: 'Berth',
  body: (p) => html`<p>Namespace <strong id="namespace">…</strong></p>
<ul class="cards">${SCREENS.map(
    (s) => html`<li><a href="${p.to(s.path)}">${s.title}</a><span>${s.about}</span></li>`,
  )}</ul>`,
  script: 'home.js',
};

const marketplace: Screen = {
  path: '/marketplace',
  title: 'Marketplace',
  script: 'marketplace.js',
  body: () => html`<section>
<h2>Sources</h2>
${status('sources-status')}
${table('sources', ['Name', 'Display name', 'URL', 'Credential', ''])}
<p><button id="add-source" type="button" hidden>Add source</button></p>
<form id="source-form" hidden>
<label>Name <input name="name" required pattern="[-._a-zA-Z0-9]+"></label>
<label>Display name <input name="displayName"></label>
<label>URL <input name="url" type="url" required placeholder="https://…/marketplace.json"></label>
<label>Credential <select name="scheme"><option value="">none</option><option value="bearer">bearer</option><option value="basic">basic</option></select></label>
<label>Secret <input name="credential" type="password" autocomplete="off"></label>
<p><button type="submit">Save</button> <button type="button" id="cancel-source">Cancel</button></p>
<p id="source-form-status" class="status" role="status"></p>
</form>
</section>
<section>
<h2>Items</h2>
${status('items-status')}
<ul id="source-errors" class="errors"></ul>
${table('items', ['Name', 'Type', 'Description', 'Source'])}
</section>`,
};

const sessions: Screen = {
  path: '/sessions',
  title: 'Sessions',
  script: 'sessions.js',
  body: () =>
    html`${status('live-status')}${table('sessions', ['Session', 'Status', 'Queries', 'Messages', 'Last activity'])}`,
};

const traces: Screen = {
  path: '/traces',
  title: 'Traces',
  script: 'traces.js',
  body: () => html`${status('live-status')}${table('spans', ['Trace', 'Span', 'Session', 'Duration'])}`,
};

const resource = (path: string, title: string, columns: string[]): Screen => ({
  path,
  title,
  script: 'resources.js',
  body: () =>
    html`${status('list-status')}<p><button id="reload" type="button">Reload</button></p>${table('resources', columns)}`,
});

/** Read-only: MCP servers are declared with kubectl; the controller's discovery fills their status. */
const mcpServers: Screen = {
  path: '/mcp-servers',
  title: 'MCP servers',
  script: 'mcp-servers.js',
  body: () => html`${status('list-status')}<p><button id="reload" type="button">Reload</button></p>
${table('servers', ['Name', 'Phase', 'Protocol', 'Tools', 'Address', 'Message'])}
<section>
<h2>Tools</h2>
<p class="muted">As each server listed them at its last discovery; * marks a required argument.</p>
${table('tools', ['Server', 'Tool', 'Description', 'Hints', 'Arguments'])}
</section>`,
};

const apiKeys: Screen = {
  path: '/api-keys',
  title: 'API keys',
  script: 'api-keys.js',
  body: () => html`<form id="key-form">
<label>Name <input name="name" required></label>
<label>Expires <input name="expires_at" type="date"></label>
<button type="submit">Create key</button>
</form>
<div id="new-key" class="secret" hidden>
<p>Copy the secret key now: it is shown only once.</p>
<p>Public key <code id="new-public-key"></code></p>
<p>Secret key <code id="new-secret-key"></code></p>
<button id="dismiss-key" type="button">Done</button>
</div>
${status('keys-status')}
${table('keys', ['Name', 'Public key', 'Created', 'Last used', 'Expires', 'Active', ''])}`,
};

const chat: Screen = {
  path: '/chat',
  title: 'Chat',
  script: 'chat.js',
  body: () => html`<p>Messages stay in this page; nothing is stored. Reloading starts over.</p>
<label>Target <select id="target"></select></label>
<ol id="messages" class="chat"></ol>
<form id="chat-form">
<textarea name="content" rows="3" required placeholder="Your message"></textarea>
<button type="submit">Send</button>
</form>
${status('chat-status')}`,
};

export const ALL_SCREENS: Screen[] = [
  home,
  marketplace,
  sessions,
  traces,
  resource('/queries', 'Queries', ['Name', 'Target', 'Phase', 'Created']),
  resource('/agents', 'Agents', ['Name', 'Model', 'Description', 'Created']),
  resource('/models', 'Models', ['Name', 'Type', 'Provider model', 'Phase']),
  mcpServers,
  apiKeys,
  chat,
];
