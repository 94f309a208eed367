import { createRoute } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { z } from 'zod';
import { type AnyOpenAPIHono, route } from '../../http/index.ts';
import type { Client } from '../../kube/client/types.ts';
import type { Logger } from '../../log/index.ts';
import { otherNamespace } from '../confine/index.ts';
import { errorEnvelope, nsParams } from '../routes/resource-schemas.ts';
import { type Acting, actingAs, EDIT_RIGHTS, missingRights } from './access.ts';
import type { ItemsAggregator } from './aggregator.ts';
import {
  createSourceBody,
  itemsView,
  patchSourceBody,
  permissionsView,
  sourceList,
  sourceView,
} from './schemas.ts';
import type { SourceService } from './sources.ts';
import { readMap } from './store.ts';

export interface MarketplaceHandlers {
  /** The instance's namespace: the only one whose sources it serves. */
  namespace: string;
  sources: SourceService;
  aggregator: ItemsAggregator;
  /** The API's own client: what `open` mode acts as, and what `as(user)` impersonates through. */
  own: Client;
  logger: Logger;
}

const json = <T extends z.ZodType>(schema: T) => ({ 'application/json': { schema } });
const err = (description: string) => ({ description, content: json(errorEnvelope) });
const errors = {
  400: err(
    'Invalid request; or a credential missing (credential_required) or rejected by the source (credential_rejected)',
  ),
  403: err('Another namespace, or the user lacks the rights of rule 8'),
};
const nameParams = nsParams.extend({
  name: z
    .string()
    .max(253)
    .regex(/^[-._a-zA-Z0-9]+$/, 'must be a source name (letters, digits, "-", "_", ".")'),
});

/**
 * The seven marketplace endpoints under `prefix` (`/api/v1` as the spec names them, and `/v1`,
 * which the dashboard proxy's `/api/v1/*` → `/v1/*` mapping reaches).
 */
export function mountMarketplaceRoutes(app: AnyOpenAPIHono, prefix: string, h: MarketplaceHandlers) {
  const base = `${prefix}/namespaces/{namespace}/marketplace-sources`;
  const tags = ['Marketplace'];
  const served = (namespace: string) => {
    if (namespace !== h.namespace) throw otherNamespace(namespace, h.namespace);
  };
  const acting = (c: Context, namespace: string): Promise<Acting> => {
    served(namespace);
    return actingAs(c, h.own);
  };

  route(
    app,
    createRoute({
      method: 'get',
      path: base,
      tags,
      summary: 'List the sources (empty when the map is absent)',
      request: { params: nsParams },
      responses: { 200: { description: 'Sources', content: json(sourceList) }, ...errors },
    }),
    async (c) => {
      const { namespace } = c.req.valid('param');
      return c.json({ items: await h.sources.list(await acting(c, namespace), namespace) }, 200);
    },
  );

  route(
    app,
    createRoute({
      method: 'post',
      path: base,
      tags,
      summary: 'Create a source; creates the map when absent',
      request: { params: nsParams, body: { required: true, content: json(createSourceBody) } },
      responses: {
        201: { description: 'Created', content: json(sourceView) },
        ...errors,
        409: err('A source of that name exists'),
        422: err(
          'Bad name, url not absolute https, address not allowed, or the manifest could not be fetched',
        ),
      },
    }),
    async (c) => {
      const { namespace } = c.req.valid('param');
      const created = await h.sources.create(await acting(c, namespace), namespace, c.req.valid('json'));
      return c.json(created, 201);
    },
  );

  // Before `{name}`: `permissions` is the probe, never a source name.
  route(
    app,
    createRoute({
      method: 'get',
      path: `${base}/permissions`,
      tags,
      summary: 'Whether the caller may edit sources (fail-closed)',
      request: { params: nsParams },
      responses: { 200: { description: 'The probe', content: json(permissionsView) }, ...errors },
    }),
    async (c) => {
      const { namespace } = c.req.valid('param');
      served(namespace);
      try {
        // Asked about the user, not as the user: the probe needs no impersonation (access.ts).
        const missing = await missingRights(await actingAs(c, h.own), namespace, EDIT_RIGHTS);
        return c.json({ canEdit: missing.length === 0 }, 200);
      } catch (e) {
        h.logger.warn(
          { err: e, namespace },
          'marketplace permissions probe failed; answering canEdit: false',
        );
        return c.json({ canEdit: false }, 200);
      }
    },
  );

  const item = (method: 'get' | 'delete', ok: 200 | 204) =>
    createRoute({
      method,
      path: `${base}/{name}`,
      tags,
      request: { params: nameParams },
      responses: {
        ...(ok === 200
          ? { 200: { description: 'The source', content: json(sourceView) } }
          : { 204: { description: 'Deleted, with its credential Secret' } }),
        ...errors,
        404: err('No such source'),
      },
    });

  route(app, item('get', 200), async (c) => {
    const { namespace, name } = c.req.valid('param');
    return c.json(await h.sources.get(await acting(c, namespace), namespace, name), 200);
  });

  route(
    app,
    createRoute({
      method: 'patch',
      path: `${base}/{name}`,
      tags,
      summary: 'Update a source (merge; auth: null removes the credential and its Secret)',
      request: { params: nameParams, body: { required: true, content: json(patchSourceBody) } },
      responses: {
        200: { description: 'The updated source', content: json(sourceView) },
        ...errors,
        404: err('No such source'),
        422: err('url not absolute https, address not allowed, or the manifest could not be fetched'),
      },
    }),
    async (c) => {
      const { namespace, name } = c.req.valid('param');
      const updated = await h.sources.update(
        await acting(c, namespace),
        namespace,
        name,
        c.req.valid('json'),
      );
      return c.json(updated, 200);
    },
  );

  route(app, item('delete', 204), async (c) => {
    const { namespace, name } = c.req.valid('param');
    await h.sources.remove(await acting(c, namespace), namespace, name);
    return c.body(null, 204);
  });

  route(
    app,
    createRoute({
      method: 'get',
      path: `${prefix}/namespaces/{namespace}/marketplace-items`,
      tags,
      summary: 'Items of every source, fetched concurrently; per-source failures inline (always 200)',
      request: { params: nsParams },
      responses: {
        200: { description: 'Items and per-source results', content: json(itemsView) },
        ...errors,
      },
    }),
    async (c) => {
      const { namespace } = c.req.valid('param');
      const who = await acting(c, namespace);
      const map = await readMap(who.client, namespace);
      return c.json(await h.aggregator.items(who.client, namespace, map), 200);
    },
  );
}
