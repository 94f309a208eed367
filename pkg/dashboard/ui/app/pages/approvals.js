// Approvals (issue "A human in the loop"): queries in phase `input-required` list their
// `status.pendingApprovals` (a tool call to approve, or a question to answer). Deciding posts to
// `/v1/namespaces/{ns}/queries/{name}/approvals`; the buttons show only when the permissions probe
// allows approving, and disappear if this API has no such endpoint (404 not_found).
import { useState } from 'preact/hooks';
import { Empty, ErrorBox, ObjLink, PageHead, TargetLink } from '../components/ui.js';
import { api, nsPath } from '../lib/api.js';
import { ago, when } from '../lib/format.js';
import { useAsync, useLive, usePermissions, useReady, useThrottled } from '../lib/hooks.js';
import { html } from '../lib/html.js';
import { Link } from '../lib/router.js';

let endpointMissing = false;

function Decide({ query, pending, onDecided }) {
  const [reason, setReason] = useState('');
  const [args, setArgs] = useState(() => JSON.stringify(pending.arguments ?? {}, null, 2));
  const [answer, setAnswer] = useState('');
  const [error, setError] = useState();
  const [busy, setBusy] = useState(false);
  const [missing, setMissing] = useState(endpointMissing);
  if (missing) return html`<p class="muted">This API service takes no decisions (no approvals endpoint).</p>`;
  const question = pending.type === 'question' || pending.question !== undefined;
  const send = async (decision) => {
    setBusy(true);
    setError(undefined);
    const body = { id: pending.id, decision };
    if (reason) body.reason = reason;
    try {
      if (question && decision === 'approve') body.answer = answer;
      if (
        !question &&
        decision === 'approve' &&
        args.trim() !== JSON.stringify(pending.arguments ?? {}, null, 2)
      )
        body.arguments = JSON.parse(args);
      await api(`${await nsPath(`queries/${encodeURIComponent(query.metadata.name)}`)}/approvals`, {
        method: 'POST',
        body,
      });
      onDecided?.();
    } catch (err) {
      if (err.status === 404 && err.code === 'not_found') {
        endpointMissing = true;
        setMissing(true);
      } else setError(err instanceof SyntaxError ? new Error(`arguments are not JSON: ${err.message}`) : err);
    } finally {
      setBusy(false);
    }
  };
  return html`<form class="decide" onSubmit=${(e) => e.preventDefault()}>
    ${
      question
        ? html`<label>Answer <input name="answer" value=${answer} onInput=${(e) => setAnswer(e.currentTarget.value)} /></label>`
        : html`<label>Arguments (edit to approve with changes)<textarea name="arguments" rows="4" value=${args} onInput=${(e) => setArgs(e.currentTarget.value)}></textarea></label>`
    }
    <label>Reason <input name="reason" value=${reason} onInput=${(e) => setReason(e.currentTarget.value)} /></label>
    <p><button type="button" class="approve" disabled=${busy} onClick=${() => send('approve')}>${question ? 'Answer' : 'Approve'}</button>
    <button type="button" class="reject danger" disabled=${busy} onClick=${() => send('reject')}>Reject</button></p>
    <${ErrorBox} error=${error} what="Decision" />
  </form>`;
}

/**
 * A query's pending approvals that have no decision recorded yet. The API records a decision in
 * `status.approvals` before it answers; the controller removes the pending entry only when the run
 * resumes, so a page reloaded in between (or whose last live event came before that) would still
 * offer the decided one.
 */
export function undecided(query) {
  const decided = new Set((query.status?.approvals ?? []).map((a) => a.id));
  return (query.status?.pendingApprovals ?? []).filter((p) => !decided.has(p.id));
}

/** The pending approvals of one query, each with its decision form (when allowed). */
export function PendingApprovals({ query, onDecided }) {
  const perms = usePermissions();
  const pending = undecided(query);
  return html`<ul class="approvals">${pending.map(
    (p) => html`<li class="approval" data-id=${p.id} data-query=${query.metadata.name}>
      <p><strong>${p.type === 'question' ? 'Question' : html`Tool <code>${p.tool}</code>`}</strong>${p.agent ? html` <span class="muted">asked by ${p.agent}</span>` : ''}
        ${p.deadline ? html` <span class="muted">· decide by ${when(p.deadline)}</span>` : ''}</p>
      ${p.type === 'question' ? html`<p class="question">${p.question ?? ''}</p>` : html`<pre class="args">${JSON.stringify(p.arguments ?? {}, null, 2)}</pre>`}
      ${perms?.approve ? html`<${Decide} query=${query} pending=${p} onDecided=${onDecided} />` : html`<p class="muted">You may not decide here.</p>`}
    </li>`,
  )}</ul>`;
}

export function Approvals() {
  const waiting = useAsync(async () => {
    const { items = [] } = (await api(`${await nsPath('queries')}?limit=1000&sort=-created`)) ?? {};
    return items.filter((q) => undecided(q).length);
  }, []);
  const refresh = useThrottled(() => void waiting.reload(true), 500);
  useLive('/v1/broker/events?watch=true', refresh);
  useReady(!waiting.loading);
  const items = waiting.data ?? [];
  return html`<${PageHead} title="Approvals" sub="tool calls and questions waiting for a person, live" />
    <${ErrorBox} error=${waiting.error} what="Queries" />
    ${
      !waiting.loading && !items.length
        ? html`<${Empty} title="Nothing is waiting.">A query pauses here when its agent calls a tool that needs approval (an Agent's <code>tools[].approval.required</code>) or asks the user a question.<//>`
        : html`<ul class="waiting" id="approvals">${items.map(
            (q) => html`<li data-query=${q.metadata.name}>
              <h2><${ObjLink} section="queries" name=${q.metadata.name} /> <span class="muted">· <${TargetLink} target=${q.spec?.target} /> · ${ago(q.metadata.creationTimestamp)}</span></h2>
              <${PendingApprovals} query=${q} onDecided=${() => waiting.reload(true)} />
              <p><${Link} to=${`/queries/${encodeURIComponent(q.metadata.name)}`}>The conversation so far and its events →<//></p>
            </li>`,
          )}</ul>`
    }`;
}
