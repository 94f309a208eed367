import { createRoute } from '@hono/zod-openapi';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Context } from 'hono';
import type { z } from 'zod';
import { API_VERSION, GROUP, type KindDef, VERSION } from '../../api/index.ts';
import type { ApiResourceInfo } from '../../kube/discovery.ts';
import type { GatewayDeps } from '../deps.ts';
import { sendError, sendKubeError } from '../errors.ts';
import { byName, type ListBody, ListBodyCache, listBody } from '../list-body-cache.ts';
import { type AnyOpenAPIHono, route } from '../openapi-route.ts';
import { cached, getObject, listObjects, settle } from '../reads.ts';
import {
  createBody,
  errorResponses,
  itemParams,
  listResponse,
  nsParams,
  objectResponse,
  patchBody,
  replaceBody,
} from './resource-schemas.ts';

const json = <T extends z.ZodType>(schema: T) => ({ 'application/json': { schema } });

export function infoOf(def: KindDef): ApiResourceInfo {
  return { group: GROUP, version: VERSION, kind: def.kind, plural: def.plural, namespaced: true };
}

/** Strips server-managed noise so list/get responses stay readable and small. */
export function presentable(obj: KubernetesObject): KubernetesObject {
  const { managedFields: _m, ...metadata } = (obj.metadata ?? {}) as Record<string, unknown>;
  return { ...obj, metadata } as KubernetesObject;
}

/** GET/POST on the collection and GET/PUT/PATCH/DELETE on items of one berth.dev kind. */
export function mountResourceRoutes(
  app: AnyOpenAPIHono,
  deps: GatewayDeps,
  def: KindDef,
  opts: { createBody?: z.ZodType; toObject?: (body: never) => KubernetesObject } = {},
) {
  const info = infoOf(def);
  const lists = new ListBodyCache();
  const base = `/v1/namespaces/{namespace}/${def.plural}`;
  const tags = [def.kind];
  const toObject =
    opts.toObject ??
    ((b: { name?: string; metadata?: Record<string, unknown>; spec: unknown }) => ({
      apiVersion: API_VERSION,
      kind: def.kind,
      metadata: { ...b.metadata, ...(b.name ? { name: b.name } : {}) },
      spec: b.spec,
    }));

  route(
    app,
    createRoute({
      method: 'get',
      path: base,
      tags,
      request: { params: nsParams },
      responses: {
        200: { description: `${def.kind} list, sorted by name`, content: json(listResponse) },
        400: errorResponses[400],
      },
    }),
    async (c) => {
      const { namespace } = c.req.valid('param');
      try {
        const objects = await listObjects(deps, info, namespace);
        const render = (objs: KubernetesObject[]) => renderList([...objs].sort(byName));
        // Only cache-backed lists keep their references between requests.
        const body = cached(deps, def.plural, namespace)
          ? lists.body(namespace, objects, render)
          : listBody(render(objects));
        return sendListBody(c, body);
      } catch (err) {
        return sendKubeError(c, err, `list ${def.kind}`);
      }
    },
  );

  route(
    app,
    createRoute({
      method: 'post',
      path: base,
      tags,
      request: {
        params: nsParams,
        body: { required: true, content: json(opts.createBody ?? createBody(def.spec)) },
      },
      responses: { 201: { description: 'Created', content: json(objectResponse) }, ...errorResponses },
    }),
    async (c) => {
      const { namespace } = c.req.valid('param');
      const obj = toObject(c.req.valid('json') as never);
      try {
        const created = await deps.writer.create(info, namespace, {
          ...obj,
          metadata: { ...obj.metadata, namespace },
        });
        await settle(deps, def.plural, namespace, created);
        return c.json(presentable(created), 201);
      } catch (err) {
        return sendKubeError(c, err, `create ${def.kind}`);
      }
    },
  );

  route(
    app,
    createRoute({
      method: 'get',
      path: `${base}/{name}`,
      tags,
      request: { params: itemParams },
      responses: {
        200: { description: def.kind, content: json(objectResponse) },
        400: errorResponses[400],
        404: errorResponses[404],
      },
    }),
    async (c) => {
      const { namespace, name } = c.req.valid('param');
      try {
        const obj = await getObject(deps, info, namespace, name);
        if (!obj) return sendError(c, 404, 'not_found', `${def.kind} ${namespace}/${name} not found`);
        return c.json(presentable(obj), 200);
      } catch (err) {
        return sendKubeError(c, err, `get ${def.kind}`);
      }
    },
  );

  route(
    app,
    createRoute({
      method: 'put',
      path: `${base}/{name}`,
      tags,
      request: { params: itemParams, body: { required: true, content: json(replaceBody(def.spec)) } },
      responses: { 200: { description: 'Replaced', content: json(objectResponse) }, ...errorResponses },
    }),
    async (c) => {
      const { namespace, name } = c.req.valid('param');
      const body = c.req.valid('json') as { metadata?: Record<string, unknown>; spec: unknown };
      try {
        const current = await getObject(deps, info, namespace, name);
        if (!current) return sendError(c, 404, 'not_found', `${def.kind} ${namespace}/${name} not found`);
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
        const updated = await deps.writer.replace(info, namespace, name, {
          apiVersion: API_VERSION,
          kind: def.kind,
          metadata,
          spec: body.spec,
        } as KubernetesObject);
        await settle(deps, def.plural, namespace, updated);
        return c.json(presentable(updated), 200);
      } catch (err) {
        return sendKubeError(c, err, `replace ${def.kind}`);
      }
    },
  );

  route(
    app,
    createRoute({
      method: 'patch',
      path: `${base}/{name}`,
      tags,
      request: { params: itemParams, body: { required: true, content: json(patchBody) } },
      responses: { 200: { description: 'Patched', content: json(objectResponse) }, ...errorResponses },
    }),
    async (c) => {
      const { namespace, name } = c.req.valid('param');
      try {
        const updated = await deps.writer.mergePatch(info, namespace, name, c.req.valid('json'));
        await settle(deps, def.plural, namespace, updated);
        return c.json(presentable(updated), 200);
      } catch (err) {
        return sendKubeError(c, err, `patch ${def.kind}`);
      }
    },
  );

  route(
    app,
    createRoute({
      method: 'delete',
      path: `${base}/{name}`,
      tags,
      request: { params: itemParams },
      responses: {
        200: { description: 'Deletion accepted', content: json(objectResponse) },
        400: errorResponses[400],
        404: errorResponses[404],
      },
    }),
    async (c) => {
      const { namespace, name } = c.req.valid('param');
      try {
        const res = await deps.writer.remove(info, namespace, name);
        await settle(deps, def.plural, namespace, res, { deleted: true, name });
        return c.json(presentable(res), 200);
      } catch (err) {
        return sendKubeError(c, err, `delete ${def.kind}`);
      }
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
