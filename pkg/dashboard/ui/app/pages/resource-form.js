// Create and edit forms of a kind, generated from its spec's JSON Schema (schemas.json, built
// from the zod schemas the CRDs come from). The server validates: its messages land beside the
// field they name; a stale edit (409) says so.
import { useState } from 'preact/hooks';
import { errorsOf, Field, kindSchemas } from '../components/schema-form.js';
import { ErrorBox } from '../components/ui.js';
import { api, nsPath } from '../lib/api.js';
import { useAsync } from '../lib/hooks.js';
import { html } from '../lib/html.js';
import { searchParams } from '../lib/router.js';

/** A useful start for a new object of a kind (the demo model exists on `berth up`). */
function starter(plural) {
  const p = searchParams();
  if (plural === 'agents') return { prompt: 'You are a helpful assistant.', modelRef: { name: 'demo' } };
  if (plural === 'queries') {
    const [type, name] = (p.target ?? '').split('/');
    return { input: '', target: type && name ? { type, name } : { type: 'agent', name: '' } };
  }
  if (plural === 'memories' || plural === 'evaluators') return { address: { value: '' } };
  if (plural === 'teams') return { strategy: 'sequential', members: [{ type: 'agent', name: '' }] };
  if (plural === 'tools') return { http: { url: '' } };
  if (plural === 'models') return { type: 'openai', model: '', baseUrl: 'https://' };
  return {};
}

export function ResourceForm({ plural, obj, onSaved }) {
  const schemas = useAsync(() => kindSchemas(), []);
  const [spec, setSpec] = useState(() => (obj ? structuredClone(obj.spec ?? {}) : starter(plural)));
  const [name, setName] = useState('');
  const [error, setError] = useState();
  const [busy, setBusy] = useState(false);
  if (schemas.error) return html`<${ErrorBox} error=${schemas.error} what="Form" />`;
  const schema = schemas.data?.[plural]?.spec;
  if (!schema) return html`<p class="muted">Loading…</p>`;
  const errors = errorsOf(error);
  // Beside its field: the name, and every spec.<field> (deeper paths land on their group).
  const beside = (p) =>
    p === 'name' ||
    p === 'metadata.name' ||
    (p.startsWith('spec.') && p.split('.')[1] in (schemas.data?.[plural]?.spec?.properties ?? {}));
  const unplaced = errors.filter((e) => !beside(e.path));
  const submit = async (event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const base = await nsPath(plural);
      const saved = obj
        ? await api(`${base}/${encodeURIComponent(obj.metadata.name)}`, {
            method: 'PUT',
            body: { metadata: { resourceVersion: obj.metadata.resourceVersion }, spec },
          })
        : await api(base, { method: 'POST', body: { name, spec } });
      onSaved(saved);
    } catch (err) {
      setError(
        err.status === 409 && obj
          ? Object.assign(err, { message: `${err.message} — reload to edit the current version` })
          : err,
      );
    } finally {
      setBusy(false);
    }
  };
  const req = new Set(schema.required ?? []);
  return html`<form id="resource-form" class="schema-form" onSubmit=${submit} novalidate>
    ${
      obj
        ? ''
        : html`<label class="field"><span class="label">name<abbr title="required"> *</abbr></span><input name="name" required value=${name} onInput=${(e) => setName(e.currentTarget.value)} autocomplete="off" /><span class="hint">lowercase letters, digits and -</span>
        ${errors.filter((e) => e.path === 'name' || e.path === 'metadata.name').map((e) => html`<span class="field-error" data-for="name" role="alert">${e.message}</span>`)}</label>`
    }
    ${Object.entries(schema.properties ?? {}).map(
      ([k, s]) =>
        html`<${Field} path=${`spec.${k}`} name=${k} schema=${s} value=${spec[k]} required=${req.has(k)} errors=${errors} onChange=${(
          v,
        ) =>
          setSpec((cur) => {
            const next = { ...cur };
            if (v === undefined) delete next[k];
            else next[k] = v;
            return next;
          })} />`,
    )}
    ${unplaced.length ? html`<ul class="form-errors" role="alert">${unplaced.map((e) => html`<li>${e.path ? `${e.path}: ` : ''}${e.message}</li>`)}</ul>` : ''}
    <p><button type="submit" id="save" disabled=${busy}>${obj ? 'Save' : 'Create'}</button></p>
  </form>`;
}
