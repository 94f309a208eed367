// An object as YAML, and its YAML edited: the `yaml` package is loaded only when a YAML view opens.
import { useEffect, useState } from 'preact/hooks';
import { assetUrl } from '../lib/api.js';
import { html } from '../lib/html.js';
import { ErrorBox } from './ui.js';

const load = () => import(assetUrl('yaml'));

/** What a user edits: no status, no server-managed metadata. */
export function editable(obj) {
  const {
    uid: _u,
    creationTimestamp: _c,
    generation: _g,
    managedFields: _m,
    finalizers: _f,
    ...meta
  } = obj.metadata ?? {};
  return { apiVersion: obj.apiVersion, kind: obj.kind, metadata: meta, spec: obj.spec };
}

export function YamlView({ obj, canEdit, onSave }) {
  // The view's text and the editor's are two states: the view follows the object (the controller
  // writes its status under an open editor), and a view update that lands just after Edit was
  // clicked must not replace the editor's text, nor a later one what the user typed.
  const [view, setView] = useState('');
  const [text, setText] = useState('');
  const [editing, setEditing] = useState(false);
  const [error, setError] = useState();
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    let live = true;
    void load().then((Y) => live && setView(Y.stringify(obj)));
    return () => {
      live = false;
    };
  }, [obj]);
  // The editor opens once its text is ready, so it never shows the view's text first.
  const edit = async () => {
    const Y = await load();
    setText(Y.stringify(editable(obj)));
    setEditing(true);
  };
  const save = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const Y = await load();
      const parsed = Y.parse(text);
      if (!parsed || typeof parsed !== 'object' || typeof parsed.spec !== 'object')
        throw new Error('the YAML must be an object with a spec');
      await onSave(parsed);
      setEditing(false);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return html`<div class="yaml">
    ${
      editing
        ? html`<textarea id="yaml-text" name="yaml" rows="24" spellcheck="false" value=${text} onInput=${(e) => setText(e.currentTarget.value)}></textarea>
          <p><button type="button" id="yaml-save" disabled=${busy} onClick=${save}>Save</button> <button type="button" onClick=${() => setEditing(false)}>Cancel</button></p>`
        : html`<pre id="yaml-text">${view}</pre>${canEdit ? html`<p><button type="button" id="yaml-edit" onClick=${edit}>Edit YAML</button></p>` : ''}`
    }
    <${ErrorBox} error=${error} what="Save" />
  </div>`;
}
