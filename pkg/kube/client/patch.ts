import { KubeError } from '../errors.ts';
import type { JsonPatchOp } from './types.ts';

type Json = unknown;
const isObject = (v: Json): v is Record<string, Json> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** JSON merge patch (RFC 7386): objects merge recursively, `null` deletes, anything else replaces. */
export function mergePatch(target: Json, patch: Json): Json {
  if (!isObject(patch)) return structuredClone(patch);
  const out: Record<string, Json> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

const unescapeToken = (s: string) => s.replace(/~1/g, '/').replace(/~0/g, '~');

function parent(doc: Json, path: string): { container: Json; key: string } {
  const parts = path.split('/').slice(1).map(unescapeToken);
  const key = parts.pop();
  if (key === undefined) throw new KubeError(422, 'Invalid', `json patch: path "${path}" names the root`);
  let container = doc;
  for (const p of parts) {
    container = Array.isArray(container) ? container[Number(p)] : (container as Record<string, Json>)?.[p];
    if (container === undefined)
      throw new KubeError(422, 'Invalid', `json patch: path "${path}" does not exist`);
  }
  return { container, key };
}

function read(doc: Json, path: string): Json {
  const { container, key } = parent(doc, path);
  return Array.isArray(container) ? container[Number(key)] : (container as Record<string, Json>)[key];
}

function write(doc: Json, path: string, value: Json, insert: boolean): void {
  const { container, key } = parent(doc, path);
  if (Array.isArray(container)) {
    const i = key === '-' ? container.length : Number(key);
    container.splice(i, insert ? 0 : 1, value);
  } else (container as Record<string, Json>)[key] = value;
}

function remove(doc: Json, path: string): void {
  const { container, key } = parent(doc, path);
  if (Array.isArray(container)) container.splice(Number(key), 1);
  else if (isObject(container) && key in container) delete container[key];
  else throw new KubeError(422, 'Invalid', `json patch: cannot remove missing "${path}"`);
}

/** JSON patch (RFC 6902) on a copy of `doc`; a failed `test` is the API server's 422. */
export function jsonPatch(doc: Json, ops: JsonPatchOp[]): Json {
  const out = structuredClone(doc);
  for (const op of ops) {
    if (op.op === 'add') write(out, op.path, structuredClone(op.value), true);
    else if (op.op === 'replace') write(out, op.path, structuredClone(op.value), false);
    else if (op.op === 'remove') remove(out, op.path);
    else if (op.op === 'test') {
      if (JSON.stringify(read(out, op.path)) !== JSON.stringify(op.value))
        throw new KubeError(422, 'Invalid', `json patch: test of "${op.path}" failed`);
    } else {
      const value = structuredClone(read(out, op.from ?? ''));
      if (op.op === 'move') remove(out, op.from ?? '');
      write(out, op.path, value, true);
    }
  }
  return out;
}
