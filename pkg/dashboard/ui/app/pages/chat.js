// Chat that remembers: each conversation lives in the namespace's Memory under its conversation
// id (the broker's in `berth up` and the tenant overlay); the page's URL carries it, so a reload
// or a link reopens it, and the sidebar lists earlier ones. Answers stream in with a Stop button
// (which cancels the Query); tool calls and approvals show inline as they happen.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ToolCalls, toolCalls } from '../components/timeline.js';
import { Empty, Markdown, Status } from '../components/ui.js';
import { api, nsPath } from '../lib/api.js';
import { cancelQuery, conversationOf, sendTurn } from '../lib/chat-stream.js';
import { ago } from '../lib/format.js';
import { useAsync, useLive, useReady } from '../lib/hooks.js';
import { html } from '../lib/html.js';
import { Link, navigate, searchParams } from '../lib/router.js';
import { PendingApprovals, undecided } from './approvals.js';

const SESSION_PREFIX = 'chat-';
/** What this browser remembers of a conversation: its target and session (the Memory keeps the rest). */
const remembered = () => {
  try {
    return JSON.parse(localStorage.getItem('berth.chat') ?? '{}');
  } catch {
    return {};
  }
};
const remember = (conversation, value) =>
  localStorage.setItem('berth.chat', JSON.stringify({ ...remembered(), [conversation]: value }));

/** Earlier chats: sessions this page started (`chat-…`), newest first. */
function Conversations({ current }) {
  const list = useAsync(
    () => api(`/v1/broker/sessions?search=${SESSION_PREFIX}&sort=date&order=desc&limit=30`),
    [current],
  );
  // One entry per conversation (another browser may have continued it in a session of its own).
  const seen = new Set();
  const items = (list.data?.items ?? []).filter((s) => {
    const id = s.conversations?.[0];
    if (!s.sessionId.startsWith(SESSION_PREFIX) || !id || seen.has(id)) return false;
    seen.add(id);
    return true;
  });
  return html`<aside class="conversations"><h2>Conversations</h2>
    <p><${Link} class="button" id="new-chat" to="/chat">New chat<//></p>
    ${items.length ? '' : html`<p class="muted">None yet: your conversations are kept and listed here.</p>`}
    <ul id="conversations">${items.map((s) => {
      const id = s.conversations[0];
      return html`<li class=${id === current ? 'on' : ''} data-conversation=${id}><${Link} to=${`/chat/${encodeURIComponent(id)}`}>${s.name && s.name !== s.sessionId ? s.name : `Chat ${ago(s.firstActivity)}`}<//><span class="muted">${s.counts?.messages ?? 0} messages · ${ago(s.lastActivity)}</span></li>`;
    })}</ul></aside>`;
}

/**
 * A turn's tool calls and pending approvals: live from its events while it streams, read once
 * after (a browser holds six connections per origin: finished turns must not keep one open).
 */
function TurnActivity({ query, live }) {
  const [events, setEvents] = useState([]);
  useEffect(() => {
    if (live) return;
    void api(`/v1/broker/events/${encodeURIComponent(query)}?limit=1000`).then(
      (p) => setEvents(p?.items ?? []),
      () => {},
    );
  }, [live, query]);
  const [waiting, setWaiting] = useState();
  const onEvent = useCallback(
    (e) => {
      if (!e?.reason) return;
      setEvents((l) => (l.some((x) => x.sequence === e.sequence) ? l : [...l, e]));
      if (/Approval|InputRequired|Question/i.test(e.reason))
        void nsPath(`queries/${encodeURIComponent(query)}`)
          .then((p) => api(p))
          .then(setWaiting, () => {});
    },
    [query],
  );
  useLive(
    live ? `/v1/broker/events/${encodeURIComponent(query)}?watch=true&from-beginning=true` : undefined,
    onEvent,
  );
  const calls = toolCalls(events);
  return html`${calls.length ? html`<li class="tool"><${ToolCalls} calls=${calls} /></li>` : ''}
    ${waiting && undecided(waiting).length ? html`<li class="approval-inline"><${PendingApprovals} query=${waiting} onDecided=${() => setWaiting(undefined)} /></li>` : ''}`;
}

export function Chat({ conversation }) {
  const models = useAsync(() => api('/compat/v1/models'), []);
  const [target, setTarget] = useState(
    () => searchParams().target ?? (conversation ? remembered()[conversation]?.target : undefined) ?? '',
  );
  const [messages, setMessages] = useState([]);
  const [turn, setTurn] = useState(); // {query, controller} while an answer streams
  const [status, setStatus] = useState({ text: '', kind: '' });
  const sessionId = useRef(
    (conversation && remembered()[conversation]?.session) ||
      `${SESSION_PREFIX}${crypto.randomUUID().slice(0, 12)}`,
  );
  const history = useAsync(async () => {
    if (!conversation) return [];
    const page = await api(
      `/v1/broker/messages?conversation_id=${encodeURIComponent(conversation)}&limit=1000&offset=0`,
    );
    return (page?.messages ?? page?.items ?? []).map((r) => ({
      role: r.message?.role,
      content: r.message?.content,
      query: r.query_id,
    }));
  }, [conversation]);
  useEffect(() => {
    if (history.data && !turn)
      setMessages(history.data.filter((m) => m.role === 'user' || m.role === 'assistant'));
  }, [history.data]);
  useEffect(() => {
    const ids = models.data?.data?.map((m) => m.id) ?? [];
    if (ids.length && !ids.includes(target)) setTarget(ids[0]);
  }, [models.data]);
  useReady(!models.loading && !history.loading);
  const log = useRef();
  useEffect(() => log.current?.lastElementChild?.scrollIntoView?.({ block: 'nearest' }), [messages]);

  const send = async (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    const content = form.elements.content.value.trim();
    if (!content || !target || turn) return;
    form.reset();
    const controller = new AbortController();
    setMessages((m) => [
      ...m,
      { role: 'user', content },
      { role: 'assistant', content: '', streaming: true, live: true },
    ]);
    setTurn({ controller });
    setStatus({ text: 'Thinking…', kind: '' });
    const update = (f) => setMessages((m) => [...m.slice(0, -1), f(m.at(-1))]);
    let query;
    try {
      query = await sendTurn(
        {
          target,
          content,
          conversationId: conversation,
          sessionId: sessionId.current,
          signal: controller.signal,
        },
        {
          query: (q) => {
            query = q;
            setTurn({ controller, query: q });
            update((a) => ({ ...a, query: q }));
          },
          delta: (d) => update((a) => ({ ...a, content: a.content + d })),
        },
      );
      update((a) => ({ ...a, streaming: false }));
      setStatus({ text: '', kind: '' });
      if (!conversation && query) {
        const found = await conversationOf(query);
        if (found) {
          remember(found.id, { target, session: sessionId.current });
          navigate(`/chat/${encodeURIComponent(found.id)}`, { replace: true });
        }
      }
    } catch (err) {
      const stopped = controller.signal.aborted;
      update((a) => ({ ...a, streaming: false, failed: !stopped, stopped }));
      setStatus({ text: stopped ? 'Stopped.' : err.message, kind: stopped ? 'warn' : 'error' });
    } finally {
      setTurn(undefined);
    }
  };

  const stop = async () => {
    const t = turn;
    t?.controller.abort();
    if (t?.query) await cancelQuery(t.query).catch(() => {});
  };

  const ids = models.data?.data?.map((m) => m.id) ?? [];
  return html`<div class="chat">
    <${Conversations} current=${conversation} />
    <section class="chat-main">
      <h1>Chat</h1>
      <label class="field inline">Target <select id="target" name="target" value=${target} disabled=${!!turn} onChange=${(e) => setTarget(e.currentTarget.value)}>
        ${ids.map((id) => html`<option value=${id}>${id}</option>`)}
      </select></label>
      ${models.data && !ids.length ? html`<${Empty} title="Nothing to talk to yet.">Create an <${Link} to="/agents/new">agent<//> (or a model, team or tool) in this namespace.<//>` : ''}
      ${conversation ? html`<p class="muted">Conversation <code id="conversation-id">${conversation}</code>, kept in the namespace’s Memory.</p>` : ''}
      <ol id="messages" class="messages" ref=${log} aria-live="polite">
        ${!messages.length && !history.loading ? html`<li class="hint muted">Ask something: the answer streams in, tool calls and approvals show here.</li>` : ''}
        ${messages.map(
          (
            m,
          ) => html`<li class=${`${m.role}${m.failed ? ' failed' : ''}${m.stopped ? ' stopped' : ''}`} data-role=${m.role} data-query=${m.query}>${
            m.role === 'assistant' && !m.streaming ? html`<${Markdown} text=${m.content} />` : m.content
          }</li>
          ${m.role === 'assistant' && m.query && m.live ? html`<${TurnActivity} query=${m.query} live=${!!m.streaming} />` : ''}`,
        )}
      </ol>
      <form id="chat-form" onSubmit=${send}>
        <textarea name="content" rows="3" placeholder="Message" aria-label="Message" required onKeyDown=${(
          e,
        ) => {
          if (e.key === 'Enter' && !e.shiftKey) {
            e.preventDefault();
            e.currentTarget.form.requestSubmit();
          }
        }}></textarea>
        <p>${turn ? html`<button type="button" id="stop" class="danger" onClick=${stop}>Stop</button>` : html`<button type="submit">Send</button>`}
        <span class="muted">Enter sends, Shift+Enter adds a line</span></p>
      </form>
      <${Status} id="chat-status" kind=${status.kind}>${status.text}<//>
    </section>
  </div>`;
}
