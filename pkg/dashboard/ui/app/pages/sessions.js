// Sessions as the broker rolls them up, live; a session opens as the transcript of its
// conversations (live while it is active) with its queries.
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { DataTable } from '../components/table.js';
import { Transcript } from '../components/transcript.js';
import { Empty, ErrorBox, KeyValue, ObjLink, PageHead, Phase, Status } from '../components/ui.js';
import { api } from '../lib/api.js';
import { ago, when } from '../lib/format.js';
import { useAsync, useLive, useReady } from '../lib/hooks.js';
import { html } from '../lib/html.js';

const liveText = (s) => (s === 'live' ? 'Live' : s === 'reconnecting' ? 'Reconnecting…' : 'Connecting…');
const liveKind = (s) => (s === 'live' ? 'ok' : s === 'reconnecting' ? 'warn' : '');

const COLUMNS = [
  {
    label: 'Session',
    value: (s) => html`<${ObjLink} section="sessions" name=${s.sessionId} />`,
    sortKey: (s) => s.sessionId,
  },
  { label: 'Status', value: (s) => html`<${Phase} phase=${s.status} />`, sortKey: (s) => s.status },
  { label: 'Queries', value: (s) => s.counts?.queries ?? 0, sortKey: (s) => s.counts?.queries ?? 0 },
  { label: 'Messages', value: (s) => s.counts?.messages ?? 0, sortKey: (s) => s.counts?.messages ?? 0 },
  { label: 'Errors', value: (s) => s.counts?.errors ?? 0, sortKey: (s) => s.counts?.errors ?? 0 },
  { label: 'Last activity', value: (s) => ago(s.lastActivity), sortKey: (s) => s.lastActivity ?? '' },
];

export function SessionList() {
  const [rows, setRows] = useState(() => new Map());
  const [filter, setFilter] = useState('');
  // A replay brings thousands of frames at once: they are gathered and drawn once per frame.
  const pending = useRef(new Map());
  const frame = useRef(0);
  const onItem = useCallback((s) => {
    if (!s?.sessionId) return;
    pending.current.set(s.sessionId, s);
    frame.current ||= requestAnimationFrame(() => {
      frame.current = 0;
      const batch = pending.current;
      pending.current = new Map();
      setRows((m) => {
        const next = new Map(m);
        for (const [k, v] of batch) next.set(k, v);
        return next;
      });
    });
  }, []);
  const status = useLive('/v1/broker/sessions?watch=true&from-beginning=true', onItem);
  useReady(status === 'live');
  const sorted = useMemo(
    () =>
      [...rows.values()]
        .filter((s) => !filter || s.sessionId.includes(filter) || s.name?.includes(filter))
        .sort((a, b) => String(b.lastActivity).localeCompare(String(a.lastActivity))),
    [rows, filter],
  );
  return html`<${PageHead} title="Sessions" />
    <${Status} id="live-status" kind=${liveKind(status)}>${liveText(status)}<//>
    <div class="controls"><label class="filter">Filter <input type="search" name="q" placeholder="session contains…" value=${filter} onInput=${(e) => setFilter(e.currentTarget.value)} /></label></div>
    ${
      status === 'live' && !rows.size
        ? html`<${Empty} title="No sessions yet.">A session appears with its first query; every query has one (its sessionId, else its name).<//>`
        : html`<${DataTable} id="sessions" columns=${COLUMNS} rows=${sorted} rowAttrs=${(s) => ({ 'data-session': s.sessionId })} />`
    }`;
}

/**
 * The messages of one conversation from the broker: live (replayed first) for the newest one, read
 * once for older ones — a browser holds six connections per origin, and a page must leave room.
 */
function Conversation({ id, live }) {
  const [records, setRecords] = useState([]);
  const onItem = useCallback((r) => {
    if (r?.message) setRecords((list) => (list.some((x) => x.sequence === r.sequence) ? list : [...list, r]));
  }, []);
  const once = useAsync(
    async () =>
      live
        ? undefined
        : api(`/v1/broker/messages?conversation_id=${encodeURIComponent(id)}&cursor=0&limit=1000`),
    [id, live],
  );
  useLive(
    live
      ? `/v1/broker/messages?watch=true&from-beginning=true&conversation_id=${encodeURIComponent(id)}`
      : undefined,
    onItem,
  );
  return html`<${Transcript} records=${live ? records : (once.data?.items ?? [])} id=${`transcript-${id}`} />`;
}

export function SessionDetail({ id }) {
  const session = useAsync(() => api(`/v1/broker/sessions/${encodeURIComponent(id)}`), [id]);
  // Refreshed while active (its counts and queries); the transcript streams by itself.
  useEffect(() => {
    if (session.data?.status !== 'active') return undefined;
    const timer = setInterval(() => void session.reload(true), 3000);
    return () => clearInterval(timer);
  }, [session.data?.status]);
  useReady(!session.loading);
  const s = session.data;
  if (session.error)
    return html`<${PageHead} title=${id} /><${ErrorBox} error=${session.error} what="Session" />`;
  if (!s) return html`<${PageHead} title=${id} /><p class="muted">Loading…</p>`;
  return html`<${PageHead} title=${id} sub=${html`<${Phase} phase=${s.status} />${s.status === 'active' ? ' · live' : ''}`} />
    <${KeyValue} entries=${[
      ['Name', s.name !== s.sessionId ? s.name : ''],
      ['First activity', when(s.firstActivity)],
      ['Last activity', when(s.lastActivity)],
      [
        'Counts',
        `${s.counts?.queries ?? 0} queries · ${s.counts?.messages ?? 0} messages · ${s.counts?.events ?? 0} events · ${s.counts?.errors ?? 0} errors`,
      ],
    ]} />
    <h2>Conversation</h2>
    ${
      s.conversations?.length
        ? s.conversations
            .slice(-20)
            .map((c, i, all) => html`<${Conversation} key=${c} id=${c} live=${i === all.length - 1} />`)
        : html`<p class="muted">No conversation kept for this session.</p>`
    }
    <h2>Queries</h2>
    <${DataTable} id="session-queries" columns=${[
      {
        label: 'Query',
        value: (q) => html`<${ObjLink} section="queries" name=${q.queryName ?? q.queryId} />`,
      },
      { label: 'Status', value: (q) => html`<${Phase} phase=${q.status} />` },
      { label: 'Started', value: (q) => when(q.startedAt) },
      { label: 'Ended', value: (q) => when(q.endedAt) },
    ]} rows=${s.queries ?? []} rowAttrs=${(q) => ({ 'data-query': q.queryId })} />`;
}
