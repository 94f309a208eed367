// A query's events as a timeline, and its tool calls paired from ToolCallStart/Complete events.
import { ms } from '../lib/format.js';
import { html } from '../lib/html.js';

const HIDDEN = new Set(['queryId', 'queryName', 'queryNamespace', 'queryUid', 'sessionId']);

export function Timeline({ events }) {
  if (!events.length) return html`<p class="muted">No events yet.</p>`;
  const t0 = Date.parse(events[0].timestamp);
  return html`<ol class="timeline" id="events">${events.map((e) => {
    const data = Object.entries(e.data ?? {}).filter(([k]) => !HIDDEN.has(k));
    return html`<li class=${`ev ${e.eventType === 'Warning' ? 'warn' : ''}`} data-reason=${e.reason}>
      <span class="ev-time muted">+${ms(Date.parse(e.timestamp) - t0)}</span>
      <span class="ev-reason">${e.reason}</span>
      <span class="ev-message">${e.message}</span>
      ${data.length ? html`<span class="ev-data muted">${data.map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(' · ')}</span>` : ''}
    </li>`;
  })}</ol>`;
}

/** Tool calls in order: name, who called it, arguments, result (or error), duration. */
export function toolCalls(events) {
  const calls = [];
  const open = [];
  for (const e of events) {
    const d = e.data ?? {};
    if (e.reason === 'ToolCallStart') {
      const call = { tool: d.tool, agent: d.agent, input: d.input, at: e.timestamp };
      calls.push(call);
      open.push(call);
    } else if (e.reason === 'ToolCallComplete' || e.reason === 'ToolCallError') {
      const i = open.findIndex((c) => c.tool === d.tool);
      const call = i >= 0 ? open.splice(i, 1)[0] : { tool: d.tool, agent: d.agent };
      if (i < 0) calls.push(call);
      call.output = d.output ?? d.error ?? e.message;
      call.failed = e.reason === 'ToolCallError';
      call.durationMs = d.durationMs !== undefined ? Number(d.durationMs) : undefined;
    }
  }
  return calls;
}

const pretty = (s) => {
  if (typeof s !== 'string') return JSON.stringify(s, null, 2);
  try {
    return JSON.stringify(JSON.parse(s), null, 2);
  } catch {
    return s;
  }
};

export function ToolCalls({ calls }) {
  if (!calls.length) return html`<p class="muted">No tool calls.</p>`;
  return html`<ol class="tool-calls" id="tool-calls">${calls.map(
    (c) => html`<li class=${c.failed ? 'failed' : ''} data-tool=${c.tool}>
      <p><strong>${c.tool}</strong>${c.agent ? html` <span class="muted">by ${c.agent}</span>` : ''}${c.durationMs !== undefined ? html` <span class="muted">· ${ms(c.durationMs)}</span>` : ''}</p>
      <div class="io"><div><p class="muted">arguments</p><pre class="args">${pretty(c.input ?? '')}</pre></div>
      <div><p class="muted">${c.failed ? 'error' : 'result'}</p><pre class="result">${c.output === undefined ? '(running)' : pretty(c.output)}</pre></div></div>
    </li>`,
  )}</ol>`;
}
