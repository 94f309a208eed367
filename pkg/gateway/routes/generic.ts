import type { KubernetesObject } from '@kubernetes/client-node';
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { stringify } from 'yaml';
import type { AnyOpenAPIHono } from '../../http/index.ts';
import { KubeError, type KubeStatus } from '../../kube/errors.ts';
import type { KindRef } from '../../kube/kinds.ts';
import type { GatewayDeps } from '../deps.ts';
import { presentable } from './resources.ts';
import { isSecretResource, secretMetadataOnly } from './secret-view.ts';

interface Target {
  group: string;
  version: string;
  kind: string;
  name?: string;
  namespace: string;
}

/**
 * `/v1/resources/api/{version}/{kind}[/{name}]` and `/v1/resources/apis/{group}/{version}/{kind}[/{name}]`:
 * any kind the scheme or discovery knows (CRDs included), read in its own scope; the API server's
 * own `Status` is passed through when the read fails. `{kind}` is the Kind (`Pod`), the plural
 * (`pods`) or the singular (`pod`), in any case; any other name is a 404 Status.
 */
export function mountGenericRoutes(app: AnyOpenAPIHono, deps: GatewayDeps) {
  const handle = (c: Context, t: Omit<Target, 'namespace'>) =>
    read(c, deps, { ...t, namespace: c.req.query('namespace') || deps.namespace });
  app.get('/v1/resources/api/:version/:kind/:name?', (c) =>
    handle(c, {
      group: '',
      version: c.req.param('version'),
      kind: c.req.param('kind'),
      name: c.req.param('name'),
    }),
  );
  app.get('/v1/resources/apis/:group/:version/:kind/:name?', (c) =>
    handle(c, {
      group: c.req.param('group'),
      version: c.req.param('version'),
      kind: c.req.param('kind'),
      name: c.req.param('name'),
    }),
  );
}

async function read(c: Context, deps: GatewayDeps, t: Target): Promise<Response> {
  // Segments become API server paths: anything but plain names is refused before any request.
  const invalid = invalidSegment({ ...t });
  if (invalid) return send(c, failure(400, 'BadRequest', invalid), 400);
  const apiVersion = t.group ? `${t.group}/${t.version}` : t.version;
  let ref: KindRef | undefined;
  try {
    ref = await deps.client.resolve(apiVersion, t.kind);
  } catch (err) {
    return send(c, failure(503, 'ServiceUnavailable', String(err)), 503);
  }
  // An unknown kind is not guessed at (a guessed plural could name a resource the checks below
  // would not recognise): no request reaches the API server.
  if (!ref) {
    const message = `the server doesn't have a resource type "${t.kind}" in ${apiVersion}`;
    return send(c, failure(404, 'NotFound', message), 404);
  }
  // The kind's own scope only: falling back to the cluster scope after a failed namespaced read (a
  // timeout, a refusal) would list a namespaced kind across every namespace — other tenants' too.
  try {
    return send(c, await fetchObject(c, deps, ref, t), 200);
  } catch (err) {
    if (!(err instanceof KubeError)) throw err;
    return send(c, err.status, err.code);
  }
}

/**
 * One object or a list, in the target's namespace when `ref` is namespaced. Lists come in the API
 * server's order (namespace, then name) even when the informer cache answers. Whatever resolves to
 * core Secrets is shown as metadata and key names, as the Secrets API shows it.
 */
async function fetchObject(c: Context, deps: GatewayDeps, ref: KindRef, t: Target): Promise<object> {
  const signal = c.req.raw.signal;
  const namespace = ref.namespaced ? t.namespace : undefined;
  const show: (o: KubernetesObject) => object = isSecretResource(ref) ? secretMetadataOnly : presentable;
  if (t.name) return show(await deps.client.get(ref, { namespace, name: t.name }, { signal }));
  const list = await deps.client.list(ref, { namespace, signal });
  return { ...list, items: [...list.items].sort(byKey).map(show) };
}

const keyOf = (o: KubernetesObject) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
const byKey = (a: KubernetesObject, b: KubernetesObject) =>
  keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0;

const failure = (code: number, reason: string, message: string): KubeStatus => ({
  kind: 'Status',
  apiVersion: 'v1',
  status: 'Failure',
  reason,
  code,
  message,
});

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

/** JSON, or YAML when the client asks for it (kubectl-style tooling). */
function send(c: Context, body: object, code: number): Response {
  const status = (code >= 400 && code < 600 ? code : code === 200 ? 200 : 502) as ContentfulStatusCode;
  if (/application\/(x-)?yaml|text\/yaml/.test(c.req.header('accept') ?? ''))
    return c.body(stringify(body), status, { 'content-type': 'application/yaml' });
  return c.json(body, status);
}
