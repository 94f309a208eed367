import { createRoute } from '@hono/zod-openapi';
import { type AnyOpenAPIHono, jsonBodyRoute, route } from '../../http/index.ts';
import { type RouteDeps, watchDeps } from '../core/domain.ts';
import { jsonOnly } from '../core/json-body.ts';
import { DEFAULT_LIMIT, jsonResponse, listJson } from '../core/list.ts';
import type { DomainRoutes } from '../core/routes.ts';
import { replayOf, serveWatch, watchHead, watchStart } from '../core/watch-route.ts';
import { deleted, messagesList, messagesQuery } from './schemas.ts';
import { MESSAGES_TOPIC, type MessageMeta, messageMeta } from './topics.ts';
import { type MessageFilter, type MessageStore, messagesBody, withoutSequence } from './types.ts';

const tags = ['Messages'];

export type MessageRouteDeps = RouteDeps<{ messages: MessageStore }>;

export function mountMessageRoutes(app: AnyOpenAPIHono, deps: MessageRouteDeps): void {
  const store = deps.stores.messages;

  route(
    app,
    createRoute({
      method: 'get',
      path: '/messages',
      tags,
      summary: 'List messages (broker cursor envelope and/or the memory contract envelope), or watch them',
      description:
        'With `cursor` (or `watch=true`) the broker envelope `{items,total,hasMore,nextCursor}`; with `offset` the memory contract `{messages,total,limit,offset}` (+hasMore, nextCursor); with neither, both (first page).',
      request: { query: messagesQuery },
      responses: {
        200: {
          description: 'A page of messages, or an SSE stream with watch=true',
          content: { 'application/json': { schema: messagesList } },
        },
      },
    }),
    async (c) => {
      const q = c.req.valid('query');
      const f: MessageFilter = { conversationId: q.conversation_id, queryId: q.query_id };
      const limit = q.limit ?? DEFAULT_LIMIT;
      if (q.watch) {
        const matches = (m: MessageMeta) =>
          (f.conversationId === undefined || m.c === f.conversationId) &&
          (f.queryId === undefined || m.q === f.queryId);
        const after = watchStart(c, q);
        return serveWatch(c, watchDeps(deps), {
          topic: MESSAGES_TOPIC,
          after,
          head: await watchHead(after, store),
          filter: matches,
          // Replay stops at what the change feed delivered: a row committed beyond it (another
          // replica's, or out of order) reaches this watcher live, in order, instead of being
          // replayed ahead of a lower sequence still in flight.
          replay: replayOf(async (after, n) => {
            const head = store.head();
            return (await store.page(f, after, n)).items.filter((e) => e.seq <= head);
          }, messageMeta),
        });
      }
      if (q.cursor !== undefined) {
        const p = await store.page(f, q.cursor, limit);
        const jsons = p.items.map((e) => e.json);
        return jsonResponse(listJson(jsons, p.total, p.hasMore, p.items.at(-1)?.seq ?? q.cursor));
      }
      const offset = q.offset ?? 0;
      const s = await store.slice(f, offset, limit);
      const hasMore = offset + s.items.length < s.total;
      const next = s.items.at(-1)?.seq ?? 0;
      const contract = `"messages":[${s.items.map((e) => withoutSequence(e.json)).join(',')}],"total":${s.total},"limit":${limit},"offset":${offset},"hasMore":${hasMore},"nextCursor":${next}`;
      // No cursor and no offset: the caller may be either kind of client, so both envelopes are sent.
      const items = q.offset === undefined ? `"items":[${s.items.map((e) => e.json).join(',')}],` : '';
      return jsonResponse(`{${items}${contract}}`);
    },
  );

  jsonBodyRoute(
    app,
    {
      method: 'post',
      path: '/messages',
      tags,
      summary: 'Store messages of a query in a conversation (created on first use)',
      responses: { 201: { description: 'Stored; the sequences assigned' } },
    },
    messagesBody,
    async (c, body) => {
      const stored = await store.append(body);
      return c.json(
        {
          conversation_id: body.conversation_id,
          query_id: body.query_id,
          stored: stored.length,
          firstSequence: stored[0]?.seq ?? null,
          lastSequence: stored.at(-1)?.seq ?? null,
        },
        201,
      );
    },
    [jsonOnly()],
  );

  route(
    app,
    createRoute({
      method: 'delete',
      path: '/messages',
      tags,
      summary: 'Purge every message (conversations stay; sequences are never reused)',
      responses: { 200: { description: 'Purged', content: { 'application/json': { schema: deleted } } } },
    }),
    async (c) => c.json({ deleted: await store.deleteMessages({}) }, 200),
  );

  route(
    app,
    createRoute({
      method: 'get',
      path: '/memory-status',
      tags,
      summary: 'Counts per conversation (no message bodies)',
      responses: { 200: { description: '{total_conversations, total_messages, conversations}' } },
    }),
    async (c) => c.json(await store.status(), 200),
  );
}

/** Messages: `/messages` (POST: the engine's memory writes) and `/memory-status`. */
export const messageRoutes: DomainRoutes<MessageRouteDeps> = {
  mount: mountMessageRoutes,
  writes: ['/messages'],
};
