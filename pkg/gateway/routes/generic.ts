import type { Context } from 'hono';
import { stringify } from 'yaml';
import { Discovery, resourcePath } from '../../kube/discovery.ts';
import { rawRequest } from '../../kube/raw.ts';
import type { GatewayDeps } from '../deps.ts';
import type { AnyOpenAPIHono } from '../openapi-route.ts';

/**
 * `/v1/resources/api/{version}/{kind}[/{name}]` and `/v1/resources/apis/{group}/{version}/{kind}[/{name}]`:
 * any kind found by discovery (CRDs included), namespaced access first, then cluster-scoped; the
 * API server's own `Status` is passed through when both fail. `{kind}` may be the Kind (`Pod`),
 * its lower case, or the resource plural (`pods`).
 */
export function mountGenericRoutes(app: AnyOpenAPIHono, deps: GatewayDeps) {
  const discovery = new Discovery(deps.kc);
  const handle = async (c: Context, group: string, version: string, kind: string, name?: string) => {
    const apiVersion = group ? `${group}/${version}` : version;
    const namespace = c.req.query('namespace') || deps.namespace;
    // Segments become API server paths: anything but plain names is refused before any request.
    const invalid = invalidSegment({ group, version, kind, name, namespace });
    if (invalid)
      return passThroughStatus(c, {
        status: 400,
        body: JSON.stringify({
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          reason: 'BadRequest',
          code: 400,
          message: invalid,
        }),
      });
    let info: Awaited<ReturnType<Discovery['resource']>>;
    try {
      info = await discovery.resource(apiVersion, kind);
    } catch (err) {
      return c.json(
        {
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          reason: 'ServiceUnavailable',
          code: 503,
          message: String(err),
        },
        503,
      );
    }
    const guess = info ?? { group, version, kind, plural: kind.toLowerCase(), namespaced: true };
    const attempts = [
      resourcePath({ ...guess, namespaced: true }, namespace, name),
      resourcePath({ ...guess, namespaced: false }, undefined, name),
    ];
    let last: { status: number; body: string } | undefined;
    let first: { status: number; body: string } | undefined;
    for (const path of attempts) {
      const res = await rawRequest(deps.kc, { path, signal: c.req.raw.signal });
      if (res.status < 300) return respond(c, res.json<Record<string, unknown>>());
      first ??= res;
      last = res;
    }
    // Both failed: the attempt that matches the kind's real scope carries the meaningful error.
    const chosen = info && !info.namespaced ? last : first;
    return passThroughStatus(c, chosen ?? { status: 404, body: '' });
  };

  app.get('/v1/resources/api/:version/:kind/:name?', (c) =>
    handle(c, '', c.req.param('version'), c.req.param('kind'), c.req.param('name')),
  );
  app.get('/v1/resources/apis/:group/:version/:kind/:name?', (c) =>
    handle(c, c.req.param('group'), c.req.param('version'), c.req.param('kind'), c.req.param('name')),
  );
}

const SEGMENT: Record<string, RegExp> = {
  group: /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/,
  version: /^v[0-9]+[a-z0-9]*$/,
  kind: /^[A-Za-z][A-Za-z0-9]*$/,
  // Object names of some kinds (RBAC) may hold ':' and '@'.
  name: /^[A-Za-z0-9]([A-Za-z0-9._:@-]*[A-Za-z0-9])?$/,
  namespace: /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/,
};

function invalidSegment(parts: Record<string, string | undefined>): string | undefined {
  for (const [key, value] of Object.entries(parts)) {
    if (value === undefined || (key === 'group' && value === '')) continue;
    const re = SEGMENT[key];
    if (re && (value.length > 253 || !re.test(value)))
      return `invalid ${key} ${JSON.stringify(value.slice(0, 80))}: must match ${re.source}`;
  }
  return undefined;
}

function wantsYaml(c: Context): boolean {
  const accept = c.req.header('accept') ?? '';
  return /application\/(x-)?yaml|text\/yaml/.test(accept);
}

function respond(c: Context, obj: Record<string, unknown>, status: 200 | 404 | 403 | 500 = 200) {
  const meta = obj.metadata as Record<string, unknown> | undefined;
  if (meta) delete meta.managedFields;
  if (Array.isArray(obj.items))
    for (const i of obj.items) delete (i as { metadata?: Record<string, unknown> }).metadata?.managedFields;
  if (wantsYaml(c)) return c.body(stringify(obj), status, { 'content-type': 'application/yaml' });
  return c.json(obj, status);
}

function passThroughStatus(c: Context, res: { status: number; body: string }) {
  let status: Record<string, unknown>;
  try {
    status = JSON.parse(res.body) as Record<string, unknown>;
  } catch {
    status = {
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      code: res.status,
      message: res.body || `HTTP ${res.status}`,
    };
  }
  const code = res.status >= 400 && res.status < 600 ? res.status : 502;
  if (wantsYaml(c)) return c.body(stringify(status), code as 404, { 'content-type': 'application/yaml' });
  return c.json(status, code as 404);
}

export { resourcePath };
