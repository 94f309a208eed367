import type { KubernetesObject } from '@kubernetes/client-node';
import type { GatewayDeps } from '../deps.ts';
import type { AnyOpenAPIHono } from '../openapi-route.ts';
import { sendOpenAIError } from './errors.ts';

export const TARGET_PLURALS = { agent: 'agents', team: 'teams', model: 'models', tool: 'tools' } as const;
export type TargetPrefix = keyof typeof TARGET_PLURALS;
export const OWNER = 'berth';

export function modelItemOf(type: string, obj: KubernetesObject) {
  const created = Date.parse(String(obj.metadata?.creationTimestamp ?? '')) || 0;
  return {
    id: `${type}/${obj.metadata?.name}`,
    object: 'model' as const,
    created: Math.floor(created / 1000),
    owned_by: OWNER,
  };
}

/** `GET /compat/v1/models[/{id}]`: every agent, team, model and tool of the instance's namespace. */
export function mountModelRoutes(app: AnyOpenAPIHono, deps: GatewayDeps) {
  app.get('/compat/v1/models', (c) => {
    const data = Object.entries(TARGET_PLURALS).flatMap(([type, plural]) =>
      (deps.cache.list(plural, deps.namespace) ?? []).map((o) => modelItemOf(type, o)),
    );
    data.sort((a, b) => a.id.localeCompare(b.id));
    return c.json({ object: 'list', data });
  });
  // SDKs URL-encode the slash of "agent/x"; some clients do not: accept both.
  app.get('/compat/v1/models/:id{.+}', (c) => {
    const id = decodeURIComponent(c.req.param('id'));
    const [type, name] = id.split('/', 2) as [string, string | undefined];
    const plural = TARGET_PLURALS[type as TargetPrefix];
    const obj = plural && name ? deps.cache.get(plural, deps.namespace, name) : undefined;
    if (!obj)
      return sendOpenAIError(
        c,
        404,
        `The model '${id}' does not exist`,
        'not_found_error',
        'model_not_found',
        'model',
      );
    return c.json(modelItemOf(type, obj));
  });
}
