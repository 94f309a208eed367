import { createRoute } from '@hono/zod-openapi';
import { type AnyOpenAPIHono, eventFrame, httpError, route } from '../../http/index.ts';
import { type RouteDeps, watchDeps } from '../core/domain.ts';
import { jsonOnly, optionalJsonBody } from '../core/json-body.ts';
import { DEFAULT_LIMIT, idParam, jsonResponse, listQueryShape } from '../core/list.ts';
import { type DomainRoutes, mountPurgeAll } from '../core/routes.ts';
import { serveWatch, watchHead, watchStart } from '../core/watch-route.ts';
import { SESSIONS_TOPIC } from './topics.ts';
import { type SessionStore, type SessionView, sessionBody, sessionsQuery } from './types.ts';

const tags = ['Sessions'];
const listQuery = sessionsQuery.extend(listQueryShape);

type SessionRouteDeps = RouteDeps<{ sessions: SessionStore }>;

export function mountSessionRoutes(app: AnyOpenAPIHono, deps: SessionRouteDeps): void {
  const store = deps.stores.sessions;

  route(
    app,
    createRoute({
      method: 'get',
      path: '/sessions',
      tags,
      summary: 'Sessions with statusCounts; filters always apply (also to watch)',
      description:
        'Without `sort`: sequence order, paged by `cursor`. With `sort`: sorted, paged by `offset`; `cursor` then keeps sessions changed after it and `nextCursor` is the change watermark. statusCounts count the filtered sessions before the status filter.',
      request: { query: listQuery },
      responses: { 200: { description: '{items,total,hasMore,nextCursor,statusCounts} or SSE' } },
    }),
    async (c) => {
      const q = c.req.valid('query');
      const { limit, cursor, watch, offset, 'from-beginning': _fb, ...filter } = q;
      if (watch) {
        const after = watchStart(c, q);
        return serveWatch(c, watchDeps(deps), {
          topic: SESSIONS_TOPIC,
          after,
          head: await watchHead(after, store),
          filter: (v: SessionView) => store.matches(v, filter),
          replay: async (after, n) =>
            (await store.changes(filter, after, n)).map((v) => ({
              seq: v.sequence,
              frame: eventFrame(v.sequence, JSON.stringify(v)),
              meta: v,
            })),
        });
      }
      const page = await store.list({ filter, cursor, offset, limit: limit ?? DEFAULT_LIMIT });
      return jsonResponse(JSON.stringify(page));
    },
  );

  route(
    app,
    createRoute({
      method: 'get',
      path: '/sessions/{sessionId}',
      tags,
      summary: 'One session',
      request: { params: idParam('sessionId') },
      responses: { 200: { description: 'The session' }, 404: { description: 'Unknown (or hidden by TTL)' } },
    }),
    async (c) => {
      const { sessionId } = c.req.valid('param');
      const s = await store.get(sessionId);
      if (!s) throw httpError('not_found', `session ${JSON.stringify(sessionId)} does not exist`);
      return c.json(s, 200);
    },
  );

  route(
    app,
    createRoute({
      method: 'post',
      path: '/sessions',
      tags,
      summary:
        'Create a session (optional {sessionId, name}); an existing id is returned (renamed if name given)',
      middleware: [jsonOnly(true)] as const,
      description: 'Body optional: none, empty, or `{"sessionId"?: string, "name"?: string}`.',
      responses: { 201: { description: 'Created' }, 200: { description: 'Existed' } },
    }),
    async (c) => {
      const body = await optionalJsonBody(c, sessionBody);
      const r = await store.create({ sessionId: body?.sessionId, name: body?.name });
      return c.json(r.session, r.created ? 201 : 200);
    },
  );

  mountPurgeAll(app, {
    path: '/sessions',
    tags,
    summary: 'Purge every session (sequences are not reused)',
    purge: () => store.purge(),
  });
}

export const sessionRoutes: DomainRoutes<SessionRouteDeps> = { mount: mountSessionRoutes };
