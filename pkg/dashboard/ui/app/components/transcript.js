// A conversation as a transcript: messages in order, each with its role; an assistant's answer
// rendered as Markdown, tool messages folded.
import { html } from '../lib/html.js';
import { Link } from '../lib/router.js';
import { Markdown } from './ui.js';

const text = (c) =>
  typeof c === 'string'
    ? c
    : Array.isArray(c)
      ? c.map((p) => p?.text ?? '').join(' ')
      : JSON.stringify(c ?? '');

export function Transcript({ records, id = 'transcript' }) {
  if (!records.length) return html`<p class="muted" id=${id}>No messages yet.</p>`;
  return html`<ol class="transcript" id=${id}>${records.map((r) => {
    const m = r.message ?? {};
    return html`<li class=${m.role} data-role=${m.role} data-query=${r.query_id}>
      <span class="role">${m.role}${m.name ? ` · ${m.name}` : ''}${r.query_id ? html` · <${Link} to=${`/queries/${encodeURIComponent(r.query_id)}`}>${r.query_id}<//>` : ''}</span>
      ${
        m.role === 'assistant'
          ? html`<${Markdown} text=${text(m.content)} />`
          : m.role === 'tool'
            ? html`<details><summary>tool result</summary><pre>${text(m.content)}</pre></details>`
            : html`<div class="content">${text(m.content)}</div>`
      }
    </li>`;
  })}</ol>`;
}
