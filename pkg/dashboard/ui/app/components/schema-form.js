// Forms generated from a kind's JSON Schema — made at build time from the same zod schemas the CRDs
// come from (schemas.json). Each field is named by its path (`spec.prompt`, `spec.tools.0.name`);
// the server's validation messages (details.issues / details.causes) are shown beside the field
// of that path. Unions and free-form objects are edited as JSON.
import { useState } from 'preact/hooks';
import { base } from '../lib/api.js';
import { html } from '../lib/html.js';

let schemas;
/** The JSON Schemas of every kind's spec, by plural (fetched once). */
export function kindSchemas() {
  schemas ??= fetch(`${base}/static/app/schemas.json`, { credentials: 'same-origin' }).then((r) => {
    if (!r.ok) throw new Error(`schemas.json: HTTP ${r.status}`);
    return r.json();
  });
  return schemas;
}

const LONG = new Set(['prompt', 'description', 'input', 'criteria', 'output']);
const isObj = (v) => v && typeof v === 'object' && !Array.isArray(v);

/** Immutably sets `path` (array of keys) in `value`; undefined removes it. */
export function setIn(value, path, v) {
  if (!path.length) return v;
  const [k, ...rest] = path;
  const copy = Array.isArray(value) ? [...value] : { ...(isObj(value) ? value : {}) };
  const next = setIn(copy[k], rest, v);
  if (next === undefined || next === '') {
    if (Array.isArray(copy)) copy[k] = next;
    else delete copy[k];
  } else copy[k] = next;
  return copy;
}

/** A schema that is edited as one JSON textarea: unions, maps, free-form objects. */
const asJson = (s) =>
  !!(
    s.anyOf ||
    s.oneOf ||
    s['x-kubernetes-preserve-unknown-fields'] ||
    (s.type === 'object' && !s.properties)
  );

function FieldError({ path, errors }) {
  const mine = errors.filter((e) => e.path === path);
  return mine.length
    ? html`<span class="field-error" data-for=${path} role="alert">${mine.map((e) => e.message).join('; ')}</span>`
    : null;
}

function JsonField({ path, schema, value, onChange, label, errors }) {
  const [text, setText] = useState(() =>
    value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value, null, 2),
  );
  const [bad, setBad] = useState('');
  const stringy = schema.anyOf?.some((s) => s.type === 'string');
  return html`<label class="field json">${label}<textarea name=${path} rows="4" value=${text} onInput=${(
    e,
  ) => {
    const t = e.currentTarget.value;
    setText(t);
    if (!t.trim()) {
      setBad('');
      return onChange(undefined);
    }
    try {
      onChange(JSON.parse(t));
      setBad('');
    } catch {
      // A union with a string form takes plain text as that string.
      if (stringy) {
        setBad('');
        onChange(t);
      } else setBad('not JSON yet');
    }
  }}></textarea><span class="hint">${schema.description ?? ''}${stringy ? ' (text, or JSON for the other forms)' : ' (JSON)'}</span>${bad ? html`<span class="field-error">${bad}</span>` : ''}<${FieldError} path=${path} errors=${errors} /></label>`;
}

export function Field({ path, schema, value, onChange, required, errors, name }) {
  const label = html`<span class="label">${name}${required ? html`<abbr title="required"> *</abbr>` : ''}</span>`;
  if (asJson(schema)) return html`<${JsonField} ...${{ path, schema, value, onChange, label, errors }} />`;
  const hint = schema.description ? html`<span class="hint">${schema.description}</span>` : '';
  if (schema.type === 'object') {
    const req = new Set(schema.required ?? []);
    return html`<fieldset class="group" data-path=${path}><legend>${name}${required ? ' *' : ''}</legend>${hint}
      ${Object.entries(schema.properties).map(
        ([k, s]) =>
          html`<${Field} path=${`${path}.${k}`} name=${k} schema=${s} value=${value?.[k]} required=${req.has(k)} errors=${errors} onChange=${(v) => onChange(setIn(value, [k], v))} />`,
      )}<${FieldError} path=${path} errors=${errors} /></fieldset>`;
  }
  if (schema.type === 'array' && schema.items?.type === 'object' && !asJson(schema.items)) {
    const items = Array.isArray(value) ? value : [];
    return html`<fieldset class="group array" data-path=${path}><legend>${name}${required ? ' *' : ''}</legend>${hint}
      ${items.map(
        (item, i) => html`<div class="array-item">
          <${Field} path=${`${path}.${i}`} name=${`${name} ${i + 1}`} schema=${schema.items} value=${item} errors=${errors} onChange=${(v) => onChange(setIn(items, [i], v ?? {}))} />
          <button type="button" class="remove" onClick=${() => onChange(items.filter((_, j) => j !== i))}>Remove</button>
        </div>`,
      )}
      <button type="button" class="add" data-path=${path} onClick=${() => onChange([...items, {}])}>Add ${name}</button>
      <${FieldError} path=${path} errors=${errors} /></fieldset>`;
  }
  if (schema.type === 'array') {
    const items = Array.isArray(value) ? value : [];
    return html`<label class="field">${label}<textarea name=${path} rows="3" value=${items.join('\n')} onInput=${(
      e,
    ) => {
      const lines = e.currentTarget.value
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean);
      onChange(lines.length ? lines : undefined);
    }}></textarea><span class="hint">one per line${schema.description ? ` — ${schema.description}` : ''}</span><${FieldError} path=${path} errors=${errors} /></label>`;
  }
  if (schema.type === 'boolean')
    return html`<label class="field check"><input type="checkbox" name=${path} checked=${value === true} onChange=${(e) => onChange(e.currentTarget.checked ? true : undefined)} />${label}${hint}<${FieldError} path=${path} errors=${errors} /></label>`;
  if (schema.enum)
    return html`<label class="field">${label}<select name=${path} value=${value ?? ''} onChange=${(e) => onChange(e.currentTarget.value || undefined)}>
      <option value="">${schema.default !== undefined ? `(default: ${schema.default})` : '—'}</option>
      ${schema.enum.map((v) => html`<option value=${v}>${v}</option>`)}
    </select>${hint}<${FieldError} path=${path} errors=${errors} /></label>`;
  if (schema.type === 'integer' || schema.type === 'number')
    return html`<label class="field">${label}<input type="number" name=${path} value=${value ?? ''} min=${schema.minimum} max=${schema.maximum} step=${schema.type === 'integer' ? 1 : 'any'} onInput=${(
      e,
    ) => {
      const t = e.currentTarget.value;
      onChange(t === '' ? undefined : Number(t));
    }} />${hint}<${FieldError} path=${path} errors=${errors} /></label>`;
  const long = LONG.has(path.split('.').at(-1));
  const placeholder = schema.default !== undefined ? `default: ${schema.default}` : '';
  return html`<label class="field">${label}${
    long
      ? html`<textarea name=${path} rows="4" value=${value ?? ''} placeholder=${placeholder} onInput=${(e) => onChange(e.currentTarget.value || undefined)}></textarea>`
      : html`<input name=${path} value=${value ?? ''} placeholder=${placeholder} onInput=${(e) => onChange(e.currentTarget.value || undefined)} />`
  }${hint}<${FieldError} path=${path} errors=${errors} /></label>`;
}

/**
 * Where the server said each problem is: the API's zod issues (`spec.prompt`), the API server's
 * causes (`spec.prompt` too); anything else under the form.
 */
export function errorsOf(err) {
  if (!err) return [];
  const issues = err.details?.issues ?? [];
  const causes = (err.details?.causes ?? []).map((c) => ({
    path: (c.field ?? '').replace(/\[(\d+)\]/g, '.$1'),
    message: c.message ?? c.reason,
  }));
  const all = [...issues, ...causes].filter((e) => e.message);
  return all.length ? all : [{ path: '', message: err.message }];
}
