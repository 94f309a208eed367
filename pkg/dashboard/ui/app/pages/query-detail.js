// One query, everything about it: input, the answer as Markdown, phase and why, tokens, duration,
// target, session, the tool calls with arguments and results, its events as a live timeline, its
// trace as a waterfall, pending approvals and its evaluations.
import { useCallback, useState } from 'preact/hooks';
import { Timeline, ToolCalls, toolCalls } from '../components/timeline.js';
import {
  ConfirmButton,
  Empty,
  ErrorBox,
  KeyValue,
  Markdown,
  ObjLink,
  PageHead,
  Phase,
  TargetLink,
} from '../components/ui.js';
import { attrsOf, traceSummary, Waterfall } from '../components/waterfall.js';
import { api, can, nsPath } from '../lib/api.js';
import { inputText, ms, num, when } from '../lib/format.js';
import { useAsync, useLive, usePermissions, useReady, useThrottled } from '../lib/hooks.js';
import { html } from '../lib/html.js';
import { Link, navigate } from '../lib/router.js';
import { PendingApprovals, undecided } from './approvals.js';
import { EvaluationTable } from './evaluations.js';
import { durationOf } from './queries.js';

const TERMINAL = new Set(['done', 'error', 'canceled']);

/** The query's trace: its session's traces, the one whose root span names this query. */
async function traceOf(q) {
  const session = q.spec?.sessionId || q.metadata.name;
  const page = await api(`/v1/broker/traces?session_id=${encodeURIComponent(session)}&order=desc&limit=100`);
  const mine = (page?.items ?? []).filter((t) =>
    t.spans.some((s) => {
      const a = attrsOf(s);
      return a['berth.query.uid']
        ? a['berth.query.uid'] === q.metadata.uid
        : a['berth.query.name'] === q.metadata.name;
    }),
  );
  return mine[0];
}

function Input({ input }) {
  if (typeof input === 'string') return html`<pre class="input" id="query-input">${input}</pre>`;
  return html`<ol class="transcript" id="query-input">${(input ?? []).map(
    (m) =>
      html`<li class=${m.role}><span class="role">${m.role}</span><div>${typeof m.content === 'string' ? m.content : JSON.stringify(m.content)}</div></li>`,
  )}</ol>`;
}

export function QueryDetail({ name }) {
  const perms = usePermissions();
  const query = useAsync(async () => api(await nsPath(`queries/${encodeURIComponent(name)}`)), [name]);
  const [events, setEvents] = useState([]);
  const q = query.data;
  const trace = useAsync(
    async () => (q && TERMINAL.has(q.status?.phase) ? traceOf(q) : undefined),
    [q?.status?.phase, q?.metadata?.uid],
  );
  const evals = useAsync(async () => {
    const all = (await api(await nsPath('evaluations')))?.items ?? [];
    return all.filter((e) => e.spec?.config?.queryRef?.name === name);
  }, [name]);
  const refresh = useThrottled(() => void query.reload(true), 300);
  const onEvent = useCallback(
    (e) => {
      if (!e?.reason) return;
      setEvents((list) => (list.some((x) => x.sequence === e.sequence) ? list : [...list, e]));
      refresh();
    },
    [refresh],
  );
  const liveStatus = useLive(
    `/v1/broker/events/${encodeURIComponent(name)}?watch=true&from-beginning=true`,
    onEvent,
  );
  useReady(!query.loading);
  if (query.error)
    return html`<${PageHead} title=${name} /><${ErrorBox} error=${query.error} what="Query" />`;
  if (!q) return html`<${PageHead} title=${name} /><p class="muted">Loading…</p>`;
  const st = q.status ?? {};
  const completed = st.conditions?.find((c) => c.type === 'Completed');
  const usage = st.tokenUsage;
  const calls = toolCalls(events);
  const summary = trace.data ? traceSummary(trace.data.spans) : undefined;
  return html`<${PageHead} title=${name} sub=${html`<${Phase} phase=${st.phase} /> ${liveStatus === 'live' && !TERMINAL.has(st.phase) ? 'live' : ''}`}>
      <${Link} class="button" to=${`/evaluations/new?type=query&query=${encodeURIComponent(name)}`}>Evaluate<//>
      ${
        can(perms, 'queries', 'delete')
          ? html`<${ConfirmButton} class="danger" id="delete" question=${`Delete the query ${name}? Its messages and events are purged.`} onConfirm=${async () => {
              await api(await nsPath(`queries/${encodeURIComponent(name)}`), { method: 'DELETE' });
              navigate('/queries');
            }}>Delete<//>`
          : ''
      }
    <//>
    <section class="grid2">
      <div>
        <${KeyValue} entries=${[
          ['Target', html`<${TargetLink} target=${q.spec?.target} />`],
          [
            'Phase',
            html`<span id="phase"><${Phase} phase=${st.phase} />${completed?.reason ? ` · ${completed.reason}` : ''}</span>`,
          ],
          ['Message', st.message],
          ['Duration', st.duration ?? ms(durationOf(q))],
          [
            'Tokens',
            usage
              ? html`<span id="tokens">${num(usage.totalTokens)} (prompt ${num(usage.promptTokens)}, completion ${num(usage.completionTokens)})</span>`
              : '',
          ],
          [
            'Session',
            q.spec?.sessionId
              ? html`<${ObjLink} section="sessions" name=${q.spec.sessionId} />`
              : html`<${ObjLink} section="sessions" name=${name} />`,
          ],
          [
            'Conversation',
            st.conversationId
              ? html`<${Link} to=${`/chat/${encodeURIComponent(st.conversationId)}`}>${st.conversationId}<//>`
              : '',
          ],
          [
            'Memory',
            q.spec?.memory?.name ? html`<${ObjLink} section="memories" name=${q.spec.memory.name} />` : '',
          ],
          ['Created', when(q.metadata.creationTimestamp)],
          ['Started', when(st.startTime)],
          ['Completed', when(st.completionTime)],
        ]} />
      </div>
      <div>
        <h2>Input</h2>
        <${Input} input=${q.spec?.input} />
        <h2>Answer</h2>
        ${st.response?.content ? html`<${Markdown} id="answer" text=${st.response.content} />` : html`<p class="muted" id="answer">${TERMINAL.has(st.phase) ? 'No answer.' : 'Not answered yet.'}</p>`}
      </div>
    </section>
    ${undecided(q).length ? html`<h2>Waiting for a decision</h2><${PendingApprovals} query=${q} onDecided=${() => query.reload(true)} />` : ''}
    ${
      st.approvals?.length
        ? html`<h2>Decisions</h2><ul id="decisions">${st.approvals.map(
            (a) =>
              html`<li data-id=${a.id}><strong>${a.decision}</strong> by ${a.by} · ${when(a.at)}${a.reason ? ` · ${a.reason}` : ''}${a.answer ? ` · answer: ${a.answer}` : ''}</li>`,
          )}</ul>`
        : ''
    }
    <h2>Tool calls</h2>
    <${ToolCalls} calls=${calls} />
    <h2>Trace</h2>
    ${
      summary
        ? html`<p class="muted">${summary.spans} spans · ${ms(summary.duration)}${summary.errors ? ` · ${summary.errors} errors` : ''} · <${Link} to=${`/traces/${trace.data.traceId}`}>open the trace<//></p><${Waterfall} spans=${trace.data.spans} id="query-trace" />`
        : html`<p class="muted">${TERMINAL.has(st.phase) ? (trace.loading ? 'Loading…' : 'No trace recorded for this query.') : 'The trace appears when the query ends.'}</p>`
    }
    <h2>Events</h2>
    <${Timeline} events=${events} />
    <h2>Evaluations</h2>
    ${
      evals.data?.length
        ? html`<${EvaluationTable} items=${evals.data} />`
        : html`<${Empty} title="Not evaluated.">Score this answer: <${Link} to=${`/evaluations/new?type=query&query=${encodeURIComponent(name)}`}>evaluate it<//>.<//>`
    }`;
}
