import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { ALL_KINDS, GROUP, VERSION } from '../api/index.ts';
import { type ApiResourceInfo, resourcePath } from './discovery.ts';
import { KubeError } from './errors.ts';
import { rawRequest } from './raw.ts';

const core = (kind: string, plural: string, namespaced = true): ApiResourceInfo => ({
  group: '',
  version: 'v1',
  kind,
  plural,
  namespaced,
});

/** Resources the controller and the API service know without discovery, keyed by plural. */
export const RESOURCES: Readonly<Record<string, ApiResourceInfo>> = {
  ...Object.fromEntries(
    ALL_KINDS.map((k) => [
      k.plural,
      { group: GROUP, version: VERSION, kind: k.kind, plural: k.plural, namespaced: true },
    ]),
  ),
  secrets: core('Secret', 'secrets'),
  services: core('Service', 'services'),
  configmaps: core('ConfigMap', 'configmaps'),
  events: core('Event', 'events'),
  namespaces: core('Namespace', 'namespaces', false),
};

/**
 * The part of an object the helpers need. Objects come from raw JSON (timestamps are strings), so
 * both client-node's types and the zod-derived Berth kinds fit.
 */
export interface ObjectLike {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    finalizers?: string[];
  };
}

export function resourceInfo(plural: string): ApiResourceInfo {
  const info = RESOURCES[plural];
  if (!info) throw new Error(`unknown resource ${plural}`);
  return info;
}

export interface PatchOptions {
  subresource?: 'status';
  signal?: AbortSignal;
}

/**
 * JSON merge patch (RFC 7386) of an object or its status subresource. Strategic merge patch is
 * answered 415 on custom resources, and merge patch needs no schema. Put
 * `metadata.resourceVersion` in the patch to make it conditional (409 when the object changed).
 */
export async function mergePatch<T extends ObjectLike = KubernetesObject>(
  kc: KubeConfig,
  plural: string,
  namespace: string | undefined,
  name: string,
  patch: unknown,
  opts: PatchOptions = {},
): Promise<T> {
  const path = resourcePath(resourceInfo(plural), namespace, name) + (opts.subresource ? '/status' : '');
  const res = await rawRequest(kc, {
    method: 'PATCH',
    path,
    body: patch,
    contentType: 'application/merge-patch+json',
    signal: opts.signal,
  });
  if (res.status >= 300) {
    throw KubeError.fromResponse(
      res.status,
      res.body,
      `patch ${plural}/${namespace}/${name}${opts.subresource ? '/status' : ''}`,
    );
  }
  return res.json<T>();
}

/** Merge patch of `status`; with `resourceVersion` the write fails (409) if the object changed since. */
export function patchStatus<T extends ObjectLike = KubernetesObject>(
  kc: KubeConfig,
  plural: string,
  obj: ObjectLike,
  status: Record<string, unknown>,
  opts: { resourceVersion?: string; signal?: AbortSignal } = {},
): Promise<T> {
  const meta = opts.resourceVersion ? { metadata: { resourceVersion: opts.resourceVersion } } : {};
  return mergePatch<T>(
    kc,
    plural,
    obj.metadata?.namespace,
    obj.metadata?.name ?? '',
    { ...meta, status },
    { subresource: 'status', signal: opts.signal },
  );
}

async function setFinalizers<T extends ObjectLike>(
  kc: KubeConfig,
  plural: string,
  obj: T,
  finalizers: string[],
  signal?: AbortSignal,
): Promise<T> {
  // The whole list is replaced, so the write is conditional on the version it was computed from.
  return mergePatch<T>(
    kc,
    plural,
    obj.metadata?.namespace,
    obj.metadata?.name ?? '',
    { metadata: { finalizers, resourceVersion: obj.metadata?.resourceVersion } },
    { signal },
  );
}

export const hasFinalizer = (obj: ObjectLike, f: string) => !!obj.metadata?.finalizers?.includes(f);

/** Adds a finalizer (no-op when present); 409 when the object changed since it was read. */
export async function addFinalizer<T extends ObjectLike>(
  kc: KubeConfig,
  plural: string,
  obj: T,
  finalizer: string,
  signal?: AbortSignal,
): Promise<T> {
  if (hasFinalizer(obj, finalizer)) return obj;
  return setFinalizers(kc, plural, obj, [...(obj.metadata?.finalizers ?? []), finalizer], signal);
}

/** Removes a finalizer (no-op when absent); a vanished object counts as done. */
export async function removeFinalizer<T extends ObjectLike>(
  kc: KubeConfig,
  plural: string,
  obj: T,
  finalizer: string,
  signal?: AbortSignal,
): Promise<T | undefined> {
  if (!hasFinalizer(obj, finalizer)) return obj;
  const rest = (obj.metadata?.finalizers ?? []).filter((f) => f !== finalizer);
  try {
    return await setFinalizers(kc, plural, obj, rest, signal);
  } catch (err) {
    if (err instanceof KubeError && err.reason === 'NotFound') return undefined;
    throw err;
  }
}

/** Deletes an object, only if it is still the one with `uid` (a same-name successor is spared). */
export async function deleteObject(
  kc: KubeConfig,
  plural: string,
  namespace: string | undefined,
  name: string,
  opts: { uid?: string; signal?: AbortSignal } = {},
): Promise<void> {
  const res = await rawRequest(kc, {
    method: 'DELETE',
    path: resourcePath(resourceInfo(plural), namespace, name),
    body: opts.uid
      ? { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: opts.uid } }
      : undefined,
    signal: opts.signal,
  });
  if (res.status === 404) return;
  if (res.status >= 300)
    throw KubeError.fromResponse(res.status, res.body, `delete ${plural}/${namespace}/${name}`);
}
