import { createRoute } from '@hono/zod-openapi';
import { z } from 'zod';
import { type AnyOpenAPIHono, route } from '../../http/index.ts';
import { CoreKinds, type KindRef } from '../../kube/kinds.ts';
import { otherNamespace } from '../confine/index.ts';
import type { GatewayDeps } from '../deps.ts';
import { errorResponses } from './resource-schemas.ts';

/** Namespaces as the API server sends them (raw JSON: timestamps are strings). */
interface Namespace {
  metadata?: { name?: string; creationTimestamp?: string };
  status?: { phase?: string };
}
const NAMESPACE = CoreKinds.Namespace as KindRef<Namespace>;
const json = <T extends z.ZodType>(schema: T) => ({ 'application/json': { schema } });

export function mountNamespaceRoutes(app: AnyOpenAPIHono, deps: GatewayDeps) {
  route(
    app,
    createRoute({
      method: 'get',
      path: '/v1/namespaces',
      tags: ['Namespace'],
      responses: {
        200: {
          description: 'Namespaces',
          content: json(
            z.object({
              items: z.array(
                z.object({
                  name: z.string(),
                  phase: z.string().optional(),
                  creationTimestamp: z.string().optional(),
                }),
              ),
              count: z.number(),
            }),
          ),
        },
        403: errorResponses[403],
      },
    }),
    async (c) => {
      // A confined instance serves one namespace, and its Role cannot list the others anyway.
      if (deps.confinedTo) return c.json({ items: [{ name: deps.confinedTo }], count: 1 }, 200);
      const list = await deps.client.list(NAMESPACE);
      const items = list.items.map((n) => ({
        name: n.metadata?.name ?? '',
        phase: n.status?.phase,
        creationTimestamp: n.metadata?.creationTimestamp,
      }));
      return c.json({ items, count: items.length }, 200);
    },
  );

  route(
    app,
    createRoute({
      method: 'post',
      path: '/v1/namespaces',
      tags: ['Namespace'],
      request: {
        body: {
          required: true,
          content: json(
            z.object({
              name: z
                .string()
                .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a DNS label')
                .max(63),
            }),
          ),
        },
      },
      responses: {
        201: { description: 'Created', content: json(z.object({ name: z.string() })) },
        400: errorResponses[400],
        403: errorResponses[403],
        409: errorResponses[409],
      },
    }),
    async (c) => {
      if (deps.confinedTo) throw otherNamespace(c.req.valid('json').name, deps.confinedTo);
      const created = await deps.client.create(NAMESPACE, {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: c.req.valid('json').name },
      });
      return c.json({ name: created.metadata?.name ?? '' }, 201);
    },
  );

  route(
    app,
    createRoute({
      method: 'get',
      path: '/v1/context',
      tags: ['Namespace'],
      request: { query: z.object({ namespace: z.string().optional() }) },
      responses: {
        200: {
          description: 'Where this API instance points',
          content: json(
            z.object({
              namespace: z.string(),
              instanceNamespace: z.string(),
              cluster: z.string().optional(),
              version: z.string(),
              broker: z.boolean(),
            }),
          ),
        },
        400: errorResponses[400],
      },
    }),
    (c) => {
      const { namespace } = c.req.valid('query');
      return c.json(
        {
          namespace: namespace ?? deps.namespace,
          instanceNamespace: deps.namespace,
          cluster: deps.cluster,
          version: deps.version,
          broker: !!deps.brokerUrl,
        },
        200,
      );
    },
  );
}
