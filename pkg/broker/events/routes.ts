import { createRoute } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { z } from 'zod';
import { type AnyOpenAPIHono, jsonBodyRoute, route } from '../../http/index.ts';
import { type RouteDeps, watchDeps } from '../core/domain.ts';
import { jsonOnly } from '../core/json-body.ts';
import { DEFAULT_LIMIT, idParam, jsonResponse, listQueryShape, pageResponse } from '../core/list.ts';
import { type DomainRoutes, listRoute, mountPurgeAll } from '../core/routes.ts';
import { replayOf, serveWatch, watchHead, watchStart } from '../core/watch-route.ts';
import { EVENTS_TOPIC, type EventMeta, eventMeta } from './topics.ts';
import { type EventFilter, type EventStore, eventPost, MAX_EVENT_BATCH } from './types.ts';

const tags = ['Events'];
const eventsQuery = z.object({ session_id: z.string().min(1).optional(), ...listQueryShape });

// The Query finalizer's purge of a query's events.
const PURGE_QUERY_EVENTS = '/events/{queryId}';

type EventRouteDeps = RouteDeps<{ events: EventStore }>;

export function mountEventRoutes(app: AnyOpenAPIHono, deps: EventRouteDeps): void {
  const store = deps.stores.events;

  const list = async (c: Context, f: EventFilter, q: z.output<typeof eventsQuery>) => {
    if (q.watch) {
      const after = watchStart(c, q);
      return serveWatch(c, watchDeps(deps), {
        topic: EVENTS_TOPIC,
        after,
        head: await watchHead(after, store),
        filter: (m: EventMeta) =>
          (f.queryId === undefined || m.q === f.queryId) &&
          (f.sessionId === undefined || m.s === f.sessionId),
        replay: replayOf(async (after, n) => (await store.page(f, after, n)).items, eventMeta),
      });
    }
    const cursor = q.cursor ?? 0;
    const p = await store.page(f, cursor, q.limit ?? DEFAULT_LIMIT);
    return pageResponse(p, (e) => e.json, cursor);
  };

  route(
    app,
    listRoute({
      path: '/events',
      tags,
      summary: 'List operation events (filter session_id), or watch them',
      query: eventsQuery,
      description: '{items,total,hasMore,nextCursor} or SSE',
    }),
    (c) => {
      const q = c.req.valid('query');
      return list(c, { sessionId: q.session_id }, q);
    },
  );

  route(
    app,
    createRoute({
      method: 'get',
      path: '/events/{queryId}',
      tags,
      summary: "A query's events (an unknown query has none), or watch them",
      request: { params: idParam('queryId'), query: eventsQuery },
      responses: { 200: { description: '{items,total,hasMore,nextCursor} or SSE' } },
    }),
    (c) => {
      const q = c.req.valid('query');
      return list(c, { queryId: c.req.valid('param').queryId, sessionId: q.session_id }, q);
    },
  );

  jsonBodyRoute(
    app,
    {
      method: 'post',
      path: '/events',
      tags,
      summary: 'Record an operation event, or a batch of them (an array, stored in order)',
      description: `One event object → the stored event. An array of 1–${MAX_EVENT_BATCH} events (what the engine sends to save a round trip per event) → the stored events in order; the whole batch is validated before any is stored.`,
      responses: { 201: { description: 'The stored event (or events) with sequences' } },
    },
    eventPost,
    async (_c, body) => {
      if (!Array.isArray(body)) return jsonResponse((await store.append(body)).json, 201);
      const stored = await store.appendMany(body);
      return jsonResponse(`[${stored.map((e) => e.json).join(',')}]`, 201);
    },
    [jsonOnly()],
  );

  mountPurgeAll(app, {
    path: '/events',
    tags,
    summary: 'Purge every event (sessions stay)',
    purge: () => store.delete(),
  });

  route(
    app,
    createRoute({
      method: 'delete',
      path: PURGE_QUERY_EVENTS,
      tags,
      summary: "Delete a query's events (the Query finalizer); idempotent, sessions stay",
      description:
        "`namespace` keeps the purge to the events of that namespace's Query (`data.queryNamespace`): in a broker several namespaces share, same-named Queries have the same query id.",
      request: {
        params: idParam('queryId'),
        query: z.object({
          namespace: z
            .string()
            .regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'must be a namespace name')
            .optional()
            .describe('Only the events whose data.queryNamespace is this namespace'),
        }),
      },
      responses: { 200: { description: '{query_id, deleted}' } },
    }),
    async (c) => {
      const { queryId } = c.req.valid('param');
      const { namespace } = c.req.valid('query');
      return c.json({ query_id: queryId, deleted: await store.delete(queryId, namespace) }, 200);
    },
  );
}

export const eventRoutes: DomainRoutes<EventRouteDeps> = {
  mount: mountEventRoutes,
  purges: [PURGE_QUERY_EVENTS],
};
