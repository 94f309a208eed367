import { createRoute } from '@hono/zod-openapi';
import { z } from 'zod';
import { type AnyOpenAPIHono, eventFrame, httpError, route } from '../../http/index.ts';
import { watchDeps } from '../core/domain.ts';
import { jsonOnly, optionalJsonBody } from '../core/json-body.ts';
import { DEFAULT_LIMIT, idParam, jsonResponse, listJson, listQueryShape } from '../core/list.ts';
import { type DomainRoutes, listRoute } from '../core/routes.ts';
import { serveWatch, watchHead, watchStart } from '../core/watch-route.ts';
import type { MessageRouteDeps } from './routes.ts';
import { conversationInfo, deleted } from './schemas.ts';
import { CONVERSATIONS_TOPIC } from './topics.ts';
import { conversationBody } from './types.ts';

const tags = ['Conversations'];
const listQuery = z.object(listQueryShape);

// The Query finalizer's purges of a query's messages: everywhere, or in one conversation.
const PURGE_QUERY_MESSAGES = '/queries/{queryId}/messages';
const PURGE_QUERY_MESSAGES_IN_CONVERSATION = '/conversations/{conversationId}/queries/{queryId}/messages';

export function mountConversationRoutes(app: AnyOpenAPIHono, deps: MessageRouteDeps): void {
  const store = deps.stores.messages;

  route(
    app,
    listRoute({
      path: '/conversations',
      tags,
      summary: 'List conversations: the broker envelope plus `conversations` (ids) of the memory contract',
      query: listQuery,
      description: '{items,total,hasMore,nextCursor,conversations}',
    }),
    async (c) => {
      const q = c.req.valid('query');
      if (q.watch) {
        const after = watchStart(c, q);
        return serveWatch(c, watchDeps(deps), {
          topic: CONVERSATIONS_TOPIC,
          after,
          head: await watchHead(after, {
            head: () => store.conversationHead(),
            committedHead: store.conversationCommittedHead?.bind(store),
          }),
          replay: async (after, n) => {
            const head = store.conversationHead(); // as for messages: the rest arrives live
            return (await store.conversations(after, n)).items
              .filter((i) => i.sequence <= head)
              .map((i) => ({
                seq: i.sequence,
                frame: eventFrame(i.sequence, JSON.stringify(i)),
                meta: undefined,
              }));
          },
        });
      }
      const paged = q.limit !== undefined || q.cursor !== undefined;
      const p = await store.conversations(q.cursor ?? 0, q.limit ?? DEFAULT_LIMIT);
      // The memory contract has no paging: without limit/cursor `conversations` lists every id.
      const ids = paged ? p.items.map((i) => i.conversation_id) : await store.conversationIds();
      const items = p.items.map((i) => JSON.stringify(i));
      const next = p.items.at(-1)?.sequence ?? q.cursor ?? 0;
      return jsonResponse(
        listJson(items, p.total, p.hasMore, next, `,"conversations":${JSON.stringify(ids)}`),
      );
    },
  );

  route(
    app,
    createRoute({
      method: 'post',
      path: '/conversations',
      tags,
      summary: 'Create a conversation (optional body {conversation_id}); an existing id is returned as is',
      middleware: [jsonOnly(true)] as const,
      description: 'Body optional: none, empty, or `{"conversation_id": "<id>"}`.',
      responses: {
        201: { description: 'Created', content: { 'application/json': { schema: conversationInfo } } },
        200: { description: 'Already existed' },
      },
    }),
    async (c) => {
      const body = await optionalJsonBody(c, conversationBody);
      const r = await store.createConversation(body?.conversation_id);
      return c.json(r.conversation, r.created ? 201 : 200);
    },
  );

  route(
    app,
    createRoute({
      method: 'get',
      path: '/conversations/{conversationId}',
      tags,
      summary: 'A conversation with its messages (records with sequence), paged by cursor',
      request: {
        params: idParam('conversationId'),
        query: z.object({ limit: listQueryShape.limit, cursor: listQueryShape.cursor }),
      },
      responses: {
        200: { description: '{conversation_id, messages, total, hasMore, nextCursor, ...}' },
        404: { description: 'Unknown' },
      },
    }),
    async (c) => {
      const { conversationId } = c.req.valid('param');
      const q = c.req.valid('query');
      const info = await store.conversation(conversationId);
      if (!info)
        throw httpError('not_found', `conversation ${JSON.stringify(conversationId)} does not exist`);
      const cursor = q.cursor ?? 0;
      const p = await store.page({ conversationId }, cursor, q.limit ?? 1000);
      const head = JSON.stringify(info).slice(0, -1);
      return jsonResponse(
        `${head},"messages":[${p.items.map((e) => e.json).join(',')}],"total":${p.total},"hasMore":${p.hasMore},"nextCursor":${p.items.at(-1)?.seq ?? cursor}}`,
      );
    },
  );

  route(
    app,
    createRoute({
      method: 'delete',
      path: '/conversations/{conversationId}',
      tags,
      summary: 'Delete a conversation and its messages',
      request: { params: idParam('conversationId') },
      responses: {
        200: { description: 'Deleted', content: { 'application/json': { schema: deleted } } },
        404: { description: 'Unknown' },
      },
    }),
    async (c) => {
      const { conversationId } = c.req.valid('param');
      const r = await store.deleteConversation(conversationId);
      if (!r) throw httpError('not_found', `conversation ${JSON.stringify(conversationId)} does not exist`);
      return c.json({ conversation_id: conversationId, deleted: r.messages }, 200);
    },
  );

  route(
    app,
    createRoute({
      method: 'delete',
      path: '/conversations',
      tags,
      summary: 'Delete every conversation and message',
      responses: { 200: { description: '{deleted: conversations, messages}' } },
    }),
    async (c) => {
      const r = await store.deleteConversations();
      return c.json({ deleted: r.conversations, messages: r.messages }, 200);
    },
  );

  route(
    app,
    createRoute({
      method: 'delete',
      path: PURGE_QUERY_MESSAGES,
      tags,
      summary: "Delete a query's messages in every conversation (the Query finalizer's purge); idempotent",
      request: { params: idParam('queryId') },
      responses: { 200: { description: 'Deleted', content: { 'application/json': { schema: deleted } } } },
    }),
    async (c) => {
      const { queryId } = c.req.valid('param');
      return c.json({ query_id: queryId, deleted: await store.deleteMessages({ queryId }) }, 200);
    },
  );

  route(
    app,
    createRoute({
      method: 'delete',
      path: PURGE_QUERY_MESSAGES_IN_CONVERSATION,
      tags,
      summary: "Delete a query's messages in one conversation",
      request: { params: z.object({ conversationId: z.string().min(1), queryId: z.string().min(1) }) },
      responses: {
        200: { description: 'Deleted', content: { 'application/json': { schema: deleted } } },
        404: { description: 'Unknown conversation' },
      },
    }),
    async (c) => {
      const { conversationId, queryId } = c.req.valid('param');
      if (!(await store.conversation(conversationId)))
        throw httpError('not_found', `conversation ${JSON.stringify(conversationId)} does not exist`);
      const n = await store.deleteMessages({ conversationId, queryId });
      return c.json({ conversation_id: conversationId, query_id: queryId, deleted: n }, 200);
    },
  );
}

/** Conversations and the memory contract's per-query purges (messages live in the same store). */
export const conversationRoutes: DomainRoutes<MessageRouteDeps> = {
  mount: mountConversationRoutes,
  purges: [PURGE_QUERY_MESSAGES, PURGE_QUERY_MESSAGES_IN_CONVERSATION],
  writes: ['/conversations'],
};
