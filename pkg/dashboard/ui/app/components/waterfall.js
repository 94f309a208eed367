// A trace as a waterfall: the span tree (children under their parent, in start order) on a shared
// time axis, each bar placed by its start and length. A row opens to the span's attributes and
// events, as the broker stores them (already redacted there).
import { useMemo, useState } from 'preact/hooks';
import { ms } from '../lib/format.js';
import { html } from '../lib/html.js';

const nanos = (v) => (v === undefined || v === null ? undefined : Number(v) / 1e6);

/** An OTLP AnyValue as text. */
export function attrValue(v) {
  if (!v || typeof v !== 'object') return String(v ?? '');
  if ('stringValue' in v) return v.stringValue;
  if ('intValue' in v) return String(v.intValue);
  if ('doubleValue' in v) return String(v.doubleValue);
  if ('boolValue' in v) return String(v.boolValue);
  if ('arrayValue' in v) return (v.arrayValue?.values ?? []).map(attrValue).join(', ');
  if ('kvlistValue' in v) return JSON.stringify(v.kvlistValue);
  return JSON.stringify(v);
}

export const attrsOf = (span) =>
  Object.fromEntries((span.attributes ?? []).map((a) => [a.key, attrValue(a.value)]));

const isError = (s) => s.status?.code === 2 || s.status?.code === 'STATUS_CODE_ERROR';

/** Spans in tree order with depth: parents before children, siblings by start time. */
export function spanTree(spans) {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const children = new Map();
  const roots = [];
  for (const s of spans) {
    const parent = s.parentSpanId && byId.has(s.parentSpanId) ? s.parentSpanId : undefined;
    if (parent) {
      if (!children.has(parent)) children.set(parent, []);
      children.get(parent).push(s);
    } else roots.push(s);
  }
  const start = (s) => nanos(s.startTimeUnixNano) ?? 0;
  const out = [];
  const walk = (s, depth) => {
    out.push({ span: s, depth });
    for (const c of (children.get(s.spanId) ?? []).sort((a, b) => start(a) - start(b))) walk(c, depth + 1);
  };
  for (const r of roots.sort((a, b) => start(a) - start(b))) walk(r, 0);
  return out;
}

/** Summary of a trace: root span, duration, span count, errors, session. */
export function traceSummary(spans) {
  const rows = spanTree(spans);
  const root = rows[0]?.span;
  const starts = spans.map((s) => nanos(s.startTimeUnixNano)).filter((x) => x !== undefined);
  const ends = spans.map((s) => nanos(s.endTimeUnixNano)).filter((x) => x !== undefined);
  const t0 = Math.min(...starts);
  const t1 = Math.max(...ends);
  const session = spans.map((s) => attrsOf(s)['svc.session.id']).find(Boolean);
  return {
    root,
    start: Number.isFinite(t0) ? t0 : undefined,
    duration: Number.isFinite(t0) && Number.isFinite(t1) ? t1 - t0 : undefined,
    spans: spans.length,
    errors: spans.filter(isError).length,
    session,
    query: root ? attrsOf(root)['berth.query.name'] : undefined,
  };
}

export function Waterfall({ spans, id = 'waterfall' }) {
  const rows = useMemo(() => spanTree(spans), [spans]);
  const [open, setOpen] = useState(undefined);
  if (!rows.length) return html`<p class="muted">No spans.</p>`;
  const starts = spans.map((s) => nanos(s.startTimeUnixNano) ?? 0);
  const ends = spans.map((s) => nanos(s.endTimeUnixNano) ?? nanos(s.startTimeUnixNano) ?? 0);
  const t0 = Math.min(...starts);
  const total = Math.max(Math.max(...ends) - t0, 0.001);
  const ticks = [0, 0.25, 0.5, 0.75, 1];
  return html`<div class="waterfall" id=${id}>
    <div class="wf-axis" aria-hidden="true"><span></span><div class="wf-ticks">${ticks.map(
      (t) => html`<span style=${{ left: `${t * 100}%` }}>${ms(t * total)}</span>`,
    )}</div></div>
    <ol class="wf-rows">${rows.map(({ span, depth }) => {
      const s = (nanos(span.startTimeUnixNano) ?? t0) - t0;
      const d = Math.max((nanos(span.endTimeUnixNano) ?? t0 + s) - t0 - s, 0);
      const on = open === span.spanId;
      return html`<li class=${`wf-row${isError(span) ? ' error' : ''}${on ? ' open' : ''}`} data-span-id=${span.spanId} data-parent=${span.parentSpanId ?? ''} data-depth=${depth} data-name=${span.name}>
        <button type="button" class="wf-label" aria-expanded=${on} onClick=${() => setOpen(on ? undefined : span.spanId)} style=${{ paddingLeft: `${0.4 + depth * 1.1}rem` }}>
          <span class="wf-name">${span.name}</span><span class="muted wf-dur">${ms(d)}</span>
        </button>
        <div class="wf-track"><span class="wf-bar" style=${{ left: `${(s / total) * 100}%`, width: `${Math.max((d / total) * 100, 0.4)}%` }}></span></div>
        ${on ? html`<${SpanDetail} span=${span} offset=${s} duration=${d} />` : ''}
      </li>`;
    })}</ol>
  </div>`;
}

function SpanDetail({ span, offset, duration }) {
  const attrs = attrsOf(span);
  const resource = Object.fromEntries(
    (span.resource?.attributes ?? []).map((a) => [a.key, attrValue(a.value)]),
  );
  return html`<div class="wf-detail">
    <p class="muted">starts at +${ms(offset)}, lasts ${ms(duration)} · span ${span.spanId}${span.status?.message ? ` · ${span.status.message}` : ''}</p>
    <table class="attrs"><tbody>
      ${Object.entries(attrs).map(([k, v]) => html`<tr><th>${k}</th><td>${v}</td></tr>`)}
      ${Object.entries(resource).map(([k, v]) => html`<tr class="muted"><th>${k}</th><td>${v}</td></tr>`)}
    </tbody></table>
    ${
      span.events?.length
        ? html`<ul class="span-events">${span.events.map(
            (e) =>
              html`<li>${e.name} ${Object.entries(attrsOf(e))
                .map(([k, v]) => `${k}=${v}`)
                .join(' ')}</li>`,
          )}</ul>`
        : ''
    }
  </div>`;
}
