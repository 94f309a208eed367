// Small building blocks every page uses: headings with actions, phase badges, empty states,
// errors, key-value lists, conditions, tabs and JSON.
import { useEffect, useState } from 'preact/hooks';
import { assetUrl } from '../lib/api.js';
import { html } from '../lib/html.js';
import { Link } from '../lib/router.js';

export function PageHead({ title, sub, children }) {
  return html`<div class="page-head">
    <div><h1>${title}</h1>${sub ? html`<p class="muted sub">${sub}</p>` : ''}</div>
    <div class="actions">${children}</div>
  </div>`;
}

export const Phase = ({ phase }) => {
  const p = phase || 'pending';
  return html`<span class=${`phase ${p}`}>${p}</span>`;
};

/** An empty state that says what to do next. */
export function Empty({ title, children }) {
  return html`<div class="empty" role="note"><p class="empty-title">${title}</p>${children ? html`<p>${children}</p>` : ''}</div>`;
}

export function ErrorBox({ error, what }) {
  if (!error) return null;
  const gone = error.status === 404;
  return html`<p class="status error" role="alert">${what ? `${what}: ` : ''}${
    gone ? 'not found (it may have been deleted).' : error.message
  }</p>`;
}

export function Status({ id, kind = '', children }) {
  return html`<p id=${id} class=${`status ${kind}`.trim()} role="status">${children}</p>`;
}

/** A definition list; entries whose value is empty are left out. */
export function KeyValue({ entries }) {
  const shown = entries.filter(([, v]) => v !== undefined && v !== null && v !== '');
  return html`<dl class="kv">${shown.map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>`;
}

export function Conditions({ conditions }) {
  if (!conditions?.length) return html`<p class="muted">No conditions.</p>`;
  return html`<table class="conditions"><thead><tr><th>Type</th><th>Status</th><th>Reason</th><th>Message</th><th>Since</th></tr></thead>
    <tbody>${conditions.map(
      (c) =>
        html`<tr data-type=${c.type}><td>${c.type}</td><td class=${`cond ${c.status}`}>${c.status}</td><td>${c.reason ?? ''}</td><td>${c.message ?? ''}</td><td>${c.lastTransitionTime ? new Date(c.lastTransitionTime).toLocaleString() : ''}</td></tr>`,
    )}</tbody></table>`;
}

/** Tabs as buttons (keyboard: Tab to them, Enter or Space to pick). */
export function Tabs({ tabs, active, onPick }) {
  return html`<div class="tabs" role="tablist">${tabs.map(
    ([id, label]) =>
      html`<button type="button" role="tab" id=${`tab-${id}`} aria-selected=${active === id} class=${active === id ? 'on' : ''} onClick=${() => onPick(id)}>${label}</button>`,
  )}</div>`;
}

export const Json = ({ value }) => html`<pre class="json">${JSON.stringify(value, null, 2)}</pre>`;

let toHtml;
let loading;
/**
 * Markdown rendered and sanitized (marked + DOMPurify, a bundle loaded on first use); the plain
 * text shows until it is there.
 */
export function Markdown({ text, id }) {
  const [, loaded] = useState(!!toHtml);
  useEffect(() => {
    if (toHtml) return;
    loading ??= import(assetUrl('markdown')).then((m) => {
      toHtml = m.markdownToHtml;
    });
    void loading.then(() => loaded(true));
  }, []);
  if (!toHtml) return html`<div id=${id} class="markdown"><p>${text}</p></div>`;
  return html`<div id=${id} class="markdown" dangerouslySetInnerHTML=${{ __html: toHtml(text) }}></div>`;
}

/** A link to an object's page when it has one. */
export const ObjLink = ({ section, name }) =>
  name ? html`<${Link} to=${`/${section}/${encodeURIComponent(name)}`}>${name}<//>` : '';

/** A target as a link to its page: agent/assistant → /agents/assistant. */
export function TargetLink({ target }) {
  if (!target) return '';
  const section = { agent: 'agents', team: 'teams', model: 'models', tool: 'tools' }[target.type];
  return section
    ? html`<span>${target.type}/<${ObjLink} section=${section} name=${target.name} /></span>`
    : `${target.type}/${target.name}`;
}

/** A button asking for confirmation first (the browser's own dialog: keyboard and screen readers work). */
export function ConfirmButton({ question, onConfirm, children, ...rest }) {
  const [busy, setBusy] = useState(false);
  return html`<button type="button" disabled=${busy} ...${rest} onClick=${async () => {
    if (!window.confirm(question)) return;
    setBusy(true);
    try {
      await onConfirm();
    } finally {
      setBusy(false);
    }
  }}>${children}</button>`;
}
