// Traces, newest first (the broker's order=desc, a page at a time), each summarised by its root
// span; a trace opens as a waterfall of its span tree on a time axis.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { DataTable } from '../components/table.js';
import { Empty, ErrorBox, KeyValue, ObjLink, PageHead, Status } from '../components/ui.js';
import { traceSummary, Waterfall } from '../components/waterfall.js';
import { api } from '../lib/api.js';
import { ago, ms } from '../lib/format.js';
import { useAsync, useLive, useReady, useThrottled } from '../lib/hooks.js';
import { html } from '../lib/html.js';
import { Link } from '../lib/router.js';

const PAGE = 50;

const COLUMNS = [
  {
    label: 'Root span',
    value: (t) => html`<${Link} to=${`/traces/${t.traceId}`}>${t.s.root?.name ?? t.traceId}<//>`,
    sortKey: (t) => t.s.root?.name ?? '',
  },
  {
    label: 'Query',
    value: (t) => html`<${ObjLink} section="queries" name=${t.s.query} />`,
    sortKey: (t) => t.s.query ?? '',
  },
  { label: 'Duration', value: (t) => ms(t.s.duration), sortKey: (t) => t.s.duration ?? 0 },
  { label: 'Spans', value: (t) => t.s.spans, sortKey: (t) => t.s.spans },
  {
    label: 'Errors',
    value: (t) => (t.s.errors ? html`<span class="phase error">${t.s.errors}</span>` : '0'),
    sortKey: (t) => t.s.errors,
  },
  {
    label: 'Session',
    value: (t) => html`<${ObjLink} section="sessions" name=${t.s.session} />`,
    sortKey: (t) => t.s.session ?? '',
  },
  {
    label: 'Started',
    value: (t) => (t.s.start ? ago(new Date(t.s.start).toISOString()) : ''),
    sortKey: (t) => t.s.start ?? 0,
  },
];

export function TraceList() {
  const [session, setSession] = useState('');
  const [typed, setTyped] = useState('');
  const [cursors, setCursors] = useState([0]);
  const cursor = cursors.at(-1);
  useEffect(() => {
    const t = setTimeout(() => setSession(typed.trim()), 250);
    return () => clearTimeout(t);
  }, [typed]);
  useEffect(() => setCursors([0]), [session]);
  const page = useAsync(async () => {
    const p = new URLSearchParams({ order: 'desc', limit: String(PAGE) });
    if (cursor) p.set('cursor', String(cursor));
    if (session) p.set('session_id', session);
    return api(`/v1/broker/traces?${p}`);
  }, [cursor, session]);
  const refresh = useThrottled(() => cursors.length === 1 && void page.reload(true), 1000);
  const status = useLive('/v1/broker/traces?watch=true', refresh);
  useReady(!page.loading);
  const rows = (page.data?.items ?? []).map((t) => ({ traceId: t.traceId, s: traceSummary(t.spans) }));
  return html`<${PageHead} title="Traces" />
    <${Status} id="live-status" kind=${status === 'live' ? 'ok' : status ? 'warn' : ''}>${status === 'live' ? 'Live' : status ? 'Reconnecting…' : 'Connecting…'}<//>
    <div class="controls">
      <label class="filter">Session <input type="search" name="session" placeholder="session id" value=${typed} onInput=${(e) => setTyped(e.currentTarget.value)} /></label>
      <span class="pager">
        <button type="button" class="prev" disabled=${cursors.length < 2} onClick=${() => setCursors((c) => c.slice(0, -1))}>← Newer</button>
        <span class="muted">${page.data ? `${page.data.total} traces` : ''}</span>
        <button type="button" class="next" disabled=${!page.data?.hasMore} onClick=${() => setCursors((c) => [...c, page.data.nextCursor])}>Older →</button>
      </span>
    </div>
    <${ErrorBox} error=${page.error} what="Traces" />
    ${
      !page.loading && !rows.length && !page.error
        ? html`<${Empty} title=${session ? `No trace in session ${session}.` : 'No traces yet.'}>Every query records one: run a query, or open <${Link} to="/chat">Chat<//>.<//>`
        : html`<${DataTable} id="traces" columns=${COLUMNS} rows=${rows} rowAttrs=${(t) => ({ 'data-trace': t.traceId })} />`
    }`;
}

export function TraceDetail({ id }) {
  const trace = useAsync(() => api(`/v1/broker/traces/${encodeURIComponent(id)}`), [id]);
  const [extra, setExtra] = useState([]);
  const onSpan = useCallback((s) => s?.spanId && setExtra((l) => [...l, s]), []);
  useLive(`/v1/broker/traces/${encodeURIComponent(id)}?watch=true`, onSpan);
  useReady(!trace.loading);
  if (trace.error)
    return html`<${PageHead} title="Trace" /><${ErrorBox} error=${trace.error} what="Trace" />`;
  if (!trace.data) return html`<${PageHead} title="Trace" /><p class="muted">Loading…</p>`;
  const known = new Set(trace.data.spans.map((s) => s.spanId));
  const spans = [...trace.data.spans, ...extra.filter((s) => !known.has(s.spanId))];
  const s = traceSummary(spans);
  return html`<${PageHead} title=${s.root?.name ?? 'Trace'} sub=${`trace ${id}`} />
    <${KeyValue} entries=${[
      ['Query', s.query ? html`<${ObjLink} section="queries" name=${s.query} />` : ''],
      ['Session', s.session ? html`<${ObjLink} section="sessions" name=${s.session} />` : ''],
      ['Duration', ms(s.duration)],
      ['Spans', String(s.spans)],
      ['Errors', String(s.errors)],
      ['Started', s.start ? new Date(s.start).toLocaleString() : ''],
    ]} />
    <p class="muted">Select a span to see its attributes.</p>
    <${Waterfall} spans=${spans} />`;
}
