import type { KubernetesObject } from '@kubernetes/client-node';
import type { Context } from 'hono';
import type { z } from 'zod';
import { API_VERSION, type KindDef, QUERY_FINALIZER, refOf } from '../../api/index.ts';
import { type AnyOpenAPIHono, httpError, route } from '../../http/index.ts';
import { ignoreNotFound } from '../../kube/client/helpers.ts';
import type { GatewayDeps } from '../deps.ts';
import { byName, type ListBody, ListBodyCache, listBody } from '../list-body-cache.ts';
import { cached, settle } from '../reads.ts';
import { itemRoutes } from './item-routes.ts';
import { isPaged, pagedListResponse, pageOf, pageQuery } from './list-page.ts';
import {
  createBody,
  createInRoute,
  listResponse,
  listRoute,
  objectResponse,
  patchBody,
  replaceBody,
} from './resource-schemas.ts';

/** Strips server-managed noise so list/get responses stay readable and small. */
export function presentable(obj: KubernetesObject): KubernetesObject {
  const { managedFields: _m, ...metadata } = (obj.metadata ?? {}) as Record<string, unknown>;
  return { ...obj, metadata } as KubernetesObject;
}

/** The 404 of an object that is not there (or not shown here). */
export const notFound = (kind: string, namespace: string, name: string) =>
  httpError('not_found', `${kind} ${namespace}/${name} not found`);

/** How a kind's POST body becomes the object to create. */
export interface CreateStep<B> {
  body: z.ZodType<B>;
  toObject: (body: B) => KubernetesObject;
}

type DefaultBody = { name?: string; metadata?: Record<string, unknown>; spec: unknown };

/**
 * Finalizers a kind's objects are created with. A Query created here carries the controller's
 * cleanup finalizer from the start, so the controller does not spend an API write (and a watch
 * event on every informer) adding it: creation → done is two writes, create and final status.
 */
const CREATE_FINALIZERS: Record<string, string[]> = { Query: [QUERY_FINALIZER] };

/** `{name?, metadata?, spec}`: a Kubernetes-shaped body, name flat or in metadata. */
function defaultCreate(def: KindDef): CreateStep<DefaultBody> {
  const ours = CREATE_FINALIZERS[def.kind] ?? [];
  return {
    body: createBody(def.spec),
    toObject: (b) => {
      const given = Array.isArray(b.metadata?.finalizers) ? (b.metadata.finalizers as string[]) : [];
      const finalizers = [...new Set([...given, ...ours])];
      return {
        apiVersion: API_VERSION,
        kind: def.kind,
        metadata: {
          ...b.metadata,
          ...(b.name ? { name: b.name } : {}),
          ...(finalizers.length ? { finalizers } : {}),
        },
        spec: b.spec,
      };
    },
  };
}

/**
 * GET/POST on the collection and GET/PUT/PATCH/DELETE on items of one berth.dev kind; `readOnly`:
 * the two GETs only (a kind written with kubectl, e.g. MCPServer). Kubernetes failures propagate
 * as KubeErrors to the app's error handler (kube-error-mapper.ts).
 */
export function mountResourceRoutes<B>(
  app: AnyOpenAPIHono,
  deps: GatewayDeps,
  def: KindDef,
  opts: { create?: CreateStep<B>; readOnly?: boolean } = {},
) {
  const ref = refOf<KubernetesObject>(def);
  const lists = new ListBodyCache();
  const base = `/v1/namespaces/{namespace}/${def.plural}`;
  const tags = [def.kind];
  const item = itemRoutes(app, `${base}/{name}`, tags);

  route(
    app,
    listRoute({
      path: base,
      tags,
      description: `${def.kind} list, sorted by name; a page of it with limit, continue, sort or q`,
      schema: listResponse.or(pagedListResponse),
      query: pageQuery,
    }),
    async (c) => {
      const { namespace } = c.req.valid('param');
      const query = c.req.valid('query');
      const { items: objects } = await deps.client.list(ref, { namespace });
      if (isPaged(query)) {
        const p = pageOf(objects, query);
        const items = p.items.map(presentable);
        return c.json({ items, count: items.length, total: p.total, continue: p.continue }, 200);
      }
      const render = (objs: KubernetesObject[]) => renderList([...objs].sort(byName));
      // Only cache-backed lists keep their references between requests.
      const body = cached(deps, ref, namespace)
        ? lists.body(namespace, objects, render)
        : listBody(render(objects));
      return sendListBody(c, body);
    },
  );

  if (opts.create) mountCreateRoute(app, deps, def, opts.create);
  else if (!opts.readOnly) mountCreateRoute(app, deps, def, defaultCreate(def));

  item.read(
    'get',
    { status: 200, description: def.kind, schema: objectResponse },
    async (c, { namespace, name }) => {
      const obj = await ignoreNotFound(deps.client.get(ref, { namespace, name }));
      if (!obj) throw notFound(def.kind, namespace, name);
      return c.json(presentable(obj), 200);
    },
  );
  if (opts.readOnly) return;

  item.write(
    'put',
    replaceBody(def.spec),
    { status: 200, description: 'Replaced', schema: objectResponse },
    async (c, { namespace, name }, body) => {
      const current = await ignoreNotFound(deps.client.get(ref, { namespace, name }));
      if (!current) throw notFound(def.kind, namespace, name);
      // PUT replaces the spec; labels/annotations come from the body when given, else are kept.
      // A resourceVersion in the body makes it a compare-and-swap (409 when stale).
      const { managedFields: _m, ...kept } = current.metadata ?? {};
      const metadata = {
        ...kept,
        ...body.metadata,
        name,
        namespace,
        resourceVersion:
          (body.metadata?.resourceVersion as string | undefined) ?? current.metadata?.resourceVersion,
      };
      const updated = await deps.client.replace(ref, {
        apiVersion: API_VERSION,
        kind: def.kind,
        metadata,
        spec: body.spec,
      } as KubernetesObject);
      await settle(deps, ref, namespace, updated);
      return c.json(presentable(updated), 200);
    },
  );

  item.write(
    'patch',
    patchBody,
    { status: 200, description: 'Patched', schema: objectResponse },
    async (c, { namespace, name }, body) => {
      const patch = { type: 'merge' as const, patch: body };
      const updated = await deps.client.patch(ref, { namespace, name }, patch);
      await settle(deps, ref, namespace, updated);
      return c.json(presentable(updated), 200);
    },
  );

  item.read(
    'delete',
    { status: 200, description: 'Deletion accepted', schema: objectResponse },
    async (c, { namespace, name }) => {
      const res = await deps.client.delete(ref, { namespace, name });
      await settle(deps, ref, namespace, res, { deleted: true, name });
      return c.json(presentable(res), 200);
    },
  );
}

function mountCreateRoute<B>(app: AnyOpenAPIHono, deps: GatewayDeps, def: KindDef, step: CreateStep<B>) {
  const ref = refOf<KubernetesObject>(def);
  route(
    app,
    createInRoute({
      path: `/v1/namespaces/{namespace}/${def.plural}`,
      tags: [def.kind],
      body: step.body,
      created: objectResponse,
    }),
    async (c) => {
      const { namespace } = c.req.valid('param');
      const obj = step.toObject(c.req.valid('json'));
      const created = await deps.client.create(ref, { ...obj, metadata: { ...obj.metadata, namespace } });
      await settle(deps, ref, namespace, created);
      return c.json(presentable(created), 201);
    },
  );
}

/**
 * A list answer from its cached bytes: 304 on a matching If-None-Match, the gzip bytes when the
 * client accepts them (every HTTP client library and browser does; a 1,000-agent list shrinks ~20×),
 * else the JSON bytes.
 */
function sendListBody(c: Context, body: ListBody): Response {
  const headers: Record<string, string> = { etag: body.etag, vary: 'accept-encoding' };
  if (c.req.header('if-none-match') === body.etag) return c.body(null, 304, headers);
  headers['content-type'] = 'application/json';
  if (acceptsGzip(c.req.header('accept-encoding'))) {
    headers['content-encoding'] = 'gzip';
    return c.body(body.gzip() as Uint8Array<ArrayBuffer>, 200, headers);
  }
  return c.body(body.json as Uint8Array<ArrayBuffer>, 200, headers);
}

function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  return header.split(',').some((part) => {
    const [coding, ...params] = part.trim().split(';');
    if (coding?.trim().toLowerCase() !== 'gzip') return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return !q || Number(q.slice(2)) > 0;
  });
}

function renderList(items: KubernetesObject[]): string {
  return JSON.stringify({ items: items.map(presentable), count: items.length });
}
