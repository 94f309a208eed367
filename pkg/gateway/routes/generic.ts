import type { KubernetesObject } from '@kubernetes/client-node';
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { stringify } from 'yaml';
import type { AnyOpenAPIHono } from '../../http/index.ts';
import { KubeError, type KubeStatus } from '../../kube/errors.ts';
import { type KindRef, kindRef } from '../../kube/kinds.ts';
import type { GatewayDeps } from '../deps.ts';
import { presentable } from './resources.ts';

interface Target {
  group: string;
  version: string;
  kind: string;
  name?: string;
  namespace: string;
}

/**
 * `/v1/resources/api/{version}/{kind}[/{name}]` and `/v1/resources/apis/{group}/{version}/{kind}[/{name}]`:
 * any kind the scheme or discovery knows (CRDs included), namespaced access first, then
 * cluster-scoped; the API server's own `Status` is passed through when both fail. `{kind}` may be
 * the Kind (`Pod`), its lower case, or the resource plural (`pods`).
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
  let known: KindRef | undefined;
  try {
    known = await deps.client.resolve(t.group ? `${t.group}/${t.version}` : t.version, t.kind);
  } catch (err) {
    return send(c, failure(503, 'ServiceUnavailable', String(err)), 503);
  }
  // An unknown kind is still tried, as a plural, so the API server's own 404 is what the caller sees.
  const ref = known ?? kindRef({ ...t, plural: t.kind.toLowerCase(), namespaced: true });
  // A kind of known scope is read in that scope only: falling back to the cluster scope after a
  // failed namespaced read (a timeout, a refusal) would list a namespaced kind across every
  // namespace — other tenants' objects included.
  const scopes = known ? [known.namespaced] : [true, false];
  const failures: KubeError[] = [];
  for (const namespaced of scopes) {
    try {
      return send(c, await fetchObject(c, deps, { ...ref, namespaced }, t), 200);
    } catch (err) {
      if (!(err instanceof KubeError)) throw err;
      failures.push(err);
    }
  }
  // Every attempt failed: the first (the kind's real scope when known) carries the meaningful error.
  const chosen = failures[0] as KubeError;
  return send(c, chosen.status, chosen.code);
}

/**
 * One object or a list, in the target's namespace when `ref` is namespaced. Lists come in the API
 * server's order (namespace, then name) even when the informer cache answers.
 */
async function fetchObject(c: Context, deps: GatewayDeps, ref: KindRef, t: Target): Promise<object> {
  const signal = c.req.raw.signal;
  const namespace = ref.namespaced ? t.namespace : undefined;
  const show = ref.group === '' && ref.kind === 'Secret' ? secretMetadata : presentable;
  if (t.name) return show(await deps.client.get(ref, { namespace, name: t.name }, { signal }));
  const list = await deps.client.list(ref, { namespace, signal });
  return { ...list, items: list.items.map(show).sort(byKey) };
}

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * A Secret through the generic API is its metadata and key names only: values (model keys, API-key
 * hashes) never leave through it, nor kubectl's last-applied annotation that repeats them.
 */
function secretMetadata(obj: KubernetesObject): KubernetesObject {
  const {
    data,
    stringData: _s,
    ...rest
  } = presentable(obj) as KubernetesObject & {
    data?: Record<string, string>;
    stringData?: unknown;
  };
  const { [LAST_APPLIED]: _l, ...annotations } = rest.metadata?.annotations ?? {};
  const metadata = { ...rest.metadata, ...(rest.metadata?.annotations ? { annotations } : {}) };
  return { ...rest, metadata, keys: Object.keys(data ?? {}).sort() } as KubernetesObject;
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
