import type { KubernetesObject } from '@kubernetes/client-node';
import type { Hono } from 'hono';
import { agentKind, modelKind, refOf, teamKind, toolKind } from '../../api/index.ts';
import { ignoreNotFound } from '../../kube/client/helpers.ts';
import type { KindRef } from '../../kube/kinds.ts';
import type { GatewayDeps } from '../deps.ts';
import { CompatError } from './errors.ts';

export const TARGET_PLURALS = { agent: 'agents', team: 'teams', model: 'models', tool: 'tools' } as const;
export type TargetPrefix = keyof typeof TARGET_PLURALS;
/** The kind each model id prefix names. */
export const TARGET_KINDS = {
  agent: refOf<KubernetesObject>(agentKind),
  team: refOf<KubernetesObject>(teamKind),
  model: refOf<KubernetesObject>(modelKind),
  tool: refOf<KubernetesObject>(toolKind),
} as const;
export const OWNER = 'berth';

/**
 * The kind a model id prefix names, or undefined. An own-property check: a bare index would find
 * `constructor`, `__proto__` or `toString` on the object's prototype and hand a function on to the
 * Kubernetes client (a 500 for `constructor/x`).
 */
export function targetKindOf(type: string): KindRef<KubernetesObject> | undefined {
  return Object.hasOwn(TARGET_KINDS, type) ? TARGET_KINDS[type as TargetPrefix] : undefined;
}

export const isTargetPrefix = (type: string): type is TargetPrefix => targetKindOf(type) !== undefined;

export function modelItemOf(type: string, obj: KubernetesObject) {
  const created = Date.parse(String(obj.metadata?.creationTimestamp ?? '')) || 0;
  return {
    id: `${type}/${obj.metadata?.name}`,
    object: 'model' as const,
    created: Math.floor(created / 1000),
    owned_by: OWNER,
  };
}

/** Every agent, team, model and tool of the instance's namespace as a model item, sorted by id (also `/mcp`'s list_targets). */
export async function listTargetItems(deps: GatewayDeps) {
  const lists = Object.entries(TARGET_KINDS).map(async ([type, ref]) =>
    (await deps.client.list(ref, { namespace: deps.namespace })).items.map((o) => modelItemOf(type, o)),
  );
  const data = (await Promise.all(lists)).flat();
  data.sort((a, b) => a.id.localeCompare(b.id));
  return data;
}

/** `GET /models[/{id}]` (under /compat/v1): every agent, team, model and tool of the instance's namespace. */
export function mountModelRoutes(app: Hono, deps: GatewayDeps) {
  app.get('/models', async (c) => c.json({ object: 'list', data: await listTargetItems(deps) }));
  // SDKs URL-encode the slash of "agent/x"; some clients do not: accept both. Hono has decoded the
  // parameter already (leaving malformed escapes as they are): decoding again would throw on them.
  app.get('/models/:id{.+}', async (c) => {
    const id = c.req.param('id');
    const [type, name] = id.split('/', 2) as [string, string | undefined];
    const ref = targetKindOf(type);
    const key = { namespace: deps.namespace, name: name ?? '' };
    const obj = ref && name ? await ignoreNotFound(deps.client.get(ref, key)) : undefined;
    if (!obj)
      throw new CompatError('model_not_found', `The model '${id}' does not exist`, { param: 'model' });
    return c.json(modelItemOf(type, obj));
  });
}
