// Evaluations: a page at a time, a detail view (score, verdict, reasoning, metrics, conditions,
// its events), create (direct: input and output; query: a finished Query), rerun (an evaluation
// runs once, so a rerun is a new one with the same spec), cancel and delete.
import { useCallback, useState } from 'preact/hooks';
import { errorsOf } from '../components/schema-form.js';
import { DataTable, ListControls, usePagedList } from '../components/table.js';
import { Timeline } from '../components/timeline.js';
import {
  Conditions,
  ConfirmButton,
  Empty,
  ErrorBox,
  KeyValue,
  ObjLink,
  PageHead,
  Phase,
} from '../components/ui.js';
import { api, can, nsPath } from '../lib/api.js';
import { ago, when } from '../lib/format.js';
import { useAsync, useLive, usePermissions, useReady, useThrottled } from '../lib/hooks.js';
import { html } from '../lib/html.js';
import { Link, navigate, searchParams } from '../lib/router.js';

const score = (e) => (e.status?.score === undefined ? '' : e.status.score.toFixed(2));
const verdict = (e) => (e.status?.passed === undefined ? '' : e.status.passed ? 'passed' : 'failed');
const COLUMNS = [
  {
    label: 'Name',
    value: (e) => html`<${ObjLink} section="evaluations" name=${e.metadata.name} />`,
    sortKey: (e) => e.metadata.name,
  },
  { label: 'Type', value: (e) => e.spec?.type ?? 'direct', sortKey: (e) => e.spec?.type ?? '' },
  {
    label: 'Evaluator',
    value: (e) => html`<${ObjLink} section="evaluators" name=${e.spec?.evaluator?.name} />`,
    sortKey: (e) => e.spec?.evaluator?.name ?? '',
  },
  {
    label: 'Query',
    value: (e) => html`<${ObjLink} section="queries" name=${e.spec?.config?.queryRef?.name} />`,
    sortKey: (e) => e.spec?.config?.queryRef?.name ?? '',
  },
  {
    label: 'Phase',
    value: (e) => html`<${Phase} phase=${e.status?.phase} />`,
    sortKey: (e) => e.status?.phase ?? '',
  },
  { label: 'Score', value: score, sortKey: (e) => e.status?.score ?? -1 },
  {
    label: 'Passed',
    value: (e) => html`<span class=${`verdict ${verdict(e)}`}>${verdict(e)}</span>`,
    sortKey: verdict,
  },
  {
    label: 'Created',
    value: (e) => ago(e.metadata.creationTimestamp),
    sortKey: (e) => e.metadata.creationTimestamp ?? '',
  },
];

export const EvaluationTable = ({ items, id = 'evaluations' }) =>
  html`<${DataTable} id=${id} columns=${COLUMNS} rows=${items} rowAttrs=${(e) => ({ 'data-name': e.metadata.name })} />`;

export function EvaluationList() {
  const list = usePagedList('evaluations', { sort: '-created' });
  const perms = usePermissions();
  const refresh = useThrottled(() => void list.reload(true), 1000);
  useLive('/v1/broker/events?watch=true', refresh);
  useReady(!list.loading);
  return html`<${PageHead} title="Evaluations">
      ${can(perms, 'evaluations', 'create') ? html`<${Link} class="button" id="new" to="/evaluations/new">New evaluation<//>` : ''}
    <//>
    <${ListControls} list=${list} />
    <${ErrorBox} error=${list.error} what="Evaluations" />
    ${
      !list.loading && !list.items.length && !list.error
        ? html`<${Empty} title="No evaluations yet.">Score an answer: create one here, or from a query’s page (“Evaluate”). The samples add three.<//>`
        : html`<${EvaluationTable} items=${list.items} id="resources" />`
    }`;
}

/** Another evaluation with the same spec (`<name>-<suffix>`): an Evaluation runs once. */
async function rerun(e) {
  const suffix = Date.now().toString(36).slice(-5);
  const name = `${e.metadata.name.slice(0, 240)}-${suffix}`;
  const s = e.spec;
  const body = { name, type: s.type, evaluator: s.evaluator, config: s.config, timeout: s.timeout };
  const created = await api(await nsPath('evaluations'), { method: 'POST', body });
  navigate(`/evaluations/${encodeURIComponent(created.metadata.name)}`);
}

export function EvaluationDetail({ name }) {
  const perms = usePermissions();
  const ev = useAsync(async () => api(await nsPath(`evaluations/${encodeURIComponent(name)}`)), [name]);
  const [events, setEvents] = useState([]);
  const [error, setError] = useState();
  const refresh = useThrottled(() => void ev.reload(true), 300);
  const onEvent = useCallback(
    (item) => {
      if (!item?.reason) return;
      setEvents((l) => (l.some((x) => x.sequence === item.sequence) ? l : [...l, item]));
      refresh();
    },
    [refresh],
  );
  useLive(`/v1/broker/events/${encodeURIComponent(name)}?watch=true&from-beginning=true`, onEvent);
  useReady(!ev.loading);
  if (ev.error) return html`<${PageHead} title=${name} /><${ErrorBox} error=${ev.error} what="Evaluation" />`;
  const e = ev.data;
  if (!e) return html`<${PageHead} title=${name} /><p class="muted">Loading…</p>`;
  const st = e.status ?? {};
  const running = !['done', 'error', 'canceled'].includes(st.phase ?? 'pending');
  const act = (f) => async () => {
    setError(undefined);
    try {
      await f();
    } catch (err) {
      setError(err);
    }
  };
  return html`<${PageHead} title=${name} sub=${html`<${Phase} phase=${st.phase} />`}>
      ${can(perms, 'evaluations', 'create') ? html`<button type="button" id="rerun" onClick=${act(() => rerun(e))}>Rerun</button>` : ''}
      ${
        running && can(perms, 'evaluations', 'update')
          ? html`<button type="button" id="cancel" onClick=${act(async () => {
              await api(`${await nsPath(`evaluations/${encodeURIComponent(name)}`)}/cancel`, {
                method: 'PATCH',
              });
              await ev.reload(true);
            })}>Cancel</button>`
          : ''
      }
      ${
        can(perms, 'evaluations', 'delete')
          ? html`<${ConfirmButton} class="danger" id="delete" question=${`Delete the evaluation ${name}?`} onConfirm=${act(
              async () => {
                await api(await nsPath(`evaluations/${encodeURIComponent(name)}`), { method: 'DELETE' });
                navigate('/evaluations');
              },
            )}>Delete<//>`
          : ''
      }
    <//>
    <${ErrorBox} error=${error} />
    <div class="score-card">
      <p class="score" id="score">${st.score === undefined ? '–' : st.score.toFixed(2)}</p>
      <p class=${`verdict ${verdict(e)}`} id="passed">${verdict(e) || (running ? 'scoring…' : '')}</p>
    </div>
    <${KeyValue} entries=${[
      ['Type', e.spec?.type],
      ['Evaluator', html`<${ObjLink} section="evaluators" name=${e.spec?.evaluator?.name} />`],
      [
        'Parameters',
        e.spec?.evaluator?.parameters
          ? Object.entries(e.spec.evaluator.parameters)
              .map(([k, v]) => `${k}=${v}`)
              .join(', ')
          : '',
      ],
      [
        'Query',
        e.spec?.config?.queryRef
          ? html`<${ObjLink} section="queries" name=${e.spec.config.queryRef.name} />`
          : '',
      ],
      ['Input', e.spec?.config?.input],
      ['Output', e.spec?.config?.output],
      ['Reasoning', html`<span id="reasoning">${st.reasoning ?? ''}</span>`],
      [
        'Metrics',
        st.metrics
          ? Object.entries(st.metrics)
              .map(([k, v]) => `${k}: ${v}`)
              .join(' · ')
          : '',
      ],
      ['Message', st.message],
      ['Duration', st.duration],
      ['Completed', when(st.completionTime)],
    ]} />
    <h2>Conditions</h2><${Conditions} conditions=${st.conditions} />
    <h2>Events</h2><${Timeline} events=${events} />`;
}

/** `mode=contains` lines ⇄ a parameters object. */
const parseParams = (text) =>
  Object.fromEntries(
    text
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean)
      .map((l) => [
        l.slice(0, l.indexOf('=') < 0 ? l.length : l.indexOf('=')).trim(),
        l.indexOf('=') < 0 ? '' : l.slice(l.indexOf('=') + 1).trim(),
      ]),
  );

export function EvaluationCreate() {
  const p = searchParams();
  const [form, setForm] = useState({
    name: p.query ? `${p.query}-eval` : '',
    type: p.type === 'query' ? 'query' : 'direct',
    evaluator: '',
    params: '',
    input: '',
    output: '',
    query: p.query ?? '',
    timeout: '',
  });
  const [error, setError] = useState();
  const [busy, setBusy] = useState(false);
  const options = useAsync(async () => {
    const [evaluators, queries] = await Promise.all([
      api(await nsPath('evaluators')),
      api(`${await nsPath('queries')}?limit=200&sort=-created`),
    ]);
    return { evaluators: evaluators?.items ?? [], queries: queries?.items ?? [] };
  }, []);
  useReady(!options.loading);
  const set = (k) => (e) => setForm({ ...form, [k]: e.currentTarget.value });
  const errors = errorsOf(error);
  const err = (path) =>
    errors
      .filter((x) => x.path === path)
      .map((x) => html`<span class="field-error" data-for=${path} role="alert">${x.message}</span>`);
  const evaluator = form.evaluator || options.data?.evaluators[0]?.metadata.name || '';
  const submit = async (event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    const params = parseParams(form.params);
    const body = {
      name: form.name,
      type: form.type,
      evaluator: { name: evaluator, ...(Object.keys(params).length ? { parameters: params } : {}) },
      // Empty fields are left out: the server names what is missing.
      config:
        form.type === 'query'
          ? form.query
            ? { queryRef: { name: form.query } }
            : {}
          : { input: form.input || undefined, output: form.output || undefined },
      ...(form.timeout ? { timeout: form.timeout } : {}),
    };
    try {
      const created = await api(await nsPath('evaluations'), { method: 'POST', body });
      navigate(`/evaluations/${encodeURIComponent(created.metadata.name)}`);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const known = new Set([
    'name',
    'type',
    'evaluator.name',
    'config.input',
    'config.output',
    'config.queryRef',
    'config.queryRef.name',
    'timeout',
  ]);
  const other = errors.filter((x) => !known.has(x.path));
  return html`<${PageHead} title="New evaluation" />
    ${options.data && !options.data.evaluators.length ? html`<${Empty} title="No evaluator yet.">Create an Evaluator first (<${Link} to="/evaluators/new">new evaluator<//>); <code>berth up</code> serves one at http://127.0.0.1:9100.<//>` : ''}
    <form id="evaluation-form" class="schema-form" onSubmit=${submit} novalidate>
      <label class="field"><span class="label">name *</span><input name="name" value=${form.name} onInput=${set('name')} />${err('name')}</label>
      <fieldset class="group"><legend>type</legend>
        <label class="check"><input type="radio" name="type" value="direct" checked=${form.type === 'direct'} onChange=${set('type')} /> direct: an input and an output</label>
        <label class="check"><input type="radio" name="type" value="query" checked=${form.type === 'query'} onChange=${set('type')} /> query: a finished Query’s input and answer</label>
      </fieldset>
      <label class="field"><span class="label">evaluator *</span><select name="evaluator" value=${evaluator} onChange=${set('evaluator')}>
        ${(options.data?.evaluators ?? []).map((e) => html`<option value=${e.metadata.name}>${e.metadata.name}</option>`)}
      </select>${err('evaluator.name')}</label>
      <label class="field"><span class="label">parameters</span><textarea name="parameters" rows="3" placeholder="mode=contains\nexpected=Paris" value=${form.params} onInput=${set('params')}></textarea><span class="hint">one name=value a line, over the Evaluator’s own (mode: exact, contains, regex or llm)</span></label>
      ${
        form.type === 'query'
          ? html`<label class="field"><span class="label">query *</span><select name="query" value=${form.query} onChange=${set('query')}>
              <option value="">—</option>
              ${(options.data?.queries ?? []).map((q) => html`<option value=${q.metadata.name}>${q.metadata.name} (${q.status?.phase ?? 'pending'})</option>`)}
            </select>${err('config.queryRef')}${err('config.queryRef.name')}</label>`
          : html`<label class="field"><span class="label">input *</span><textarea name="input" rows="3" value=${form.input} onInput=${set('input')}></textarea>${err('config.input')}</label>
            <label class="field"><span class="label">output *</span><textarea name="output" rows="3" value=${form.output} onInput=${set('output')}></textarea>${err('config.output')}</label>`
      }
      <label class="field"><span class="label">timeout</span><input name="timeout" placeholder="default: 5m" value=${form.timeout} onInput=${set('timeout')} />${err('timeout')}</label>
      ${other.length ? html`<ul class="form-errors" role="alert">${other.map((x) => html`<li>${x.path ? `${x.path}: ` : ''}${x.message}</li>`)}</ul>` : ''}
      <p><button type="submit" id="save" disabled=${busy}>Evaluate</button></p>
    </form>`;
}
