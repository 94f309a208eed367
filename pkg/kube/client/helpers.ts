import { KubeError } from '../errors.ts';
import type { KindRef } from '../kinds.ts';
import type { Client, ObjectLike } from './types.ts';

export const isNotFound = (err: unknown) => err instanceof KubeError && err.reason === 'NotFound';
export const isConflict = (err: unknown) => err instanceof KubeError && err.reason === 'Conflict';
export const isAlreadyExists = (err: unknown) => err instanceof KubeError && err.reason === 'AlreadyExists';

/** The call's result, or undefined when the object does not exist (other failures still throw). */
export async function ignoreNotFound<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

export const hasFinalizer = (obj: ObjectLike, f: string) => !!obj.metadata?.finalizers?.includes(f);

const keyOf = (o: ObjectLike) => ({ namespace: o.metadata?.namespace, name: o.metadata?.name ?? '' });

/**
 * Replaces the finalizer list. The whole list is written, so the patch is conditional on the
 * version it was computed from (409 when the object changed since it was read).
 */
function setFinalizers<T extends ObjectLike>(
  client: Client,
  ref: KindRef<T>,
  obj: T,
  finalizers: string[],
  signal?: AbortSignal,
): Promise<T> {
  const patch = { metadata: { finalizers, resourceVersion: obj.metadata?.resourceVersion } };
  return client.patch(ref, keyOf(obj), { type: 'merge', patch }, { signal });
}

/** Adds a finalizer (no-op when present); 409 when the object changed since it was read. */
export function addFinalizer<T extends ObjectLike>(
  client: Client,
  ref: KindRef<T>,
  obj: T,
  finalizer: string,
  signal?: AbortSignal,
): Promise<T> {
  if (hasFinalizer(obj, finalizer)) return Promise.resolve(obj);
  return setFinalizers(client, ref, obj, [...(obj.metadata?.finalizers ?? []), finalizer], signal);
}

/** Removes a finalizer (no-op when absent); a vanished object counts as done (undefined). */
export function removeFinalizer<T extends ObjectLike>(
  client: Client,
  ref: KindRef<T>,
  obj: T,
  finalizer: string,
  signal?: AbortSignal,
): Promise<T | undefined> {
  if (!hasFinalizer(obj, finalizer)) return Promise.resolve(obj);
  const rest = (obj.metadata?.finalizers ?? []).filter((f) => f !== finalizer);
  return ignoreNotFound(setFinalizers(client, ref, obj, rest, signal));
}

/** Merge patch of `status`; with `resourceVersion` the write fails (409) if the object changed since. */
export function patchStatus<T extends ObjectLike>(
  client: Client,
  ref: KindRef<T>,
  obj: ObjectLike,
  status: Record<string, unknown>,
  opts: { resourceVersion?: string; signal?: AbortSignal } = {},
): Promise<T> {
  const meta = opts.resourceVersion ? { metadata: { resourceVersion: opts.resourceVersion } } : {};
  return client
    .status()
    .patch(ref, keyOf(obj), { type: 'merge', patch: { ...meta, status } }, { signal: opts.signal });
}
