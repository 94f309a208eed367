import { createRoute } from '@hono/zod-openapi';
import { z } from 'zod';
import { type AnyOpenAPIHono, httpError, route } from '../../http/index.ts';
import { watchDeps } from '../core/domain.ts';
import { DEFAULT_LIMIT, idParam, jsonResponse, listQueryShape, pageResponse } from '../core/list.ts';
import { type DomainRoutes, mountPurgeAll } from '../core/routes.ts';
import { replayOf, serveWatch, watchStart } from '../core/watch-route.ts';
import { ingestTraces, type TraceDeps } from './ingest.ts';
import { type SpanMeta, spanMeta, TRACES_TOPIC } from './topics.ts';
import { traceJson } from './types.ts';

const tags = ['Traces'];
export const OTLP_TRACES_PATH = '/v1/traces';

export function mountTraceRoutes(app: AnyOpenAPIHono, deps: TraceDeps): void {
  const store = deps.stores.traces;

  route(
    app,
    createRoute({
      method: 'post',
      path: OTLP_TRACES_PATH,
      tags,
      summary: 'OTLP/HTTP trace ingest (JSON or protobuf, optionally gzip)',
      description:
        'Success: `{}` (JSON) or an empty ExportTraceServiceResponse (protobuf); invalid spans → 200 with partialSuccess {rejectedSpans, errorMessage}; 400 undecodable, 413 too large, 415 other media types.',
      responses: { 200: { description: '{} or partialSuccess' } },
    }),
    (c) => ingestTraces(c, deps),
  );

  route(
    app,
    createRoute({
      method: 'get',
      path: '/traces',
      tags,
      summary: 'Traces grouped by trace id, ordered by their latest span; or watch spans',
      description: 'With watch=true the stream carries spans. from-beginning overrides cursor here.',
      request: {
        query: z.object({
          session_id: z.string().min(1).optional(),
          // Ours: the dashboard lists the newest traces first; cursor is then "before".
          order: z.enum(['asc', 'desc']).optional(),
          ...listQueryShape,
        }),
      },
      responses: {
        200: { description: '{items: [{traceId, sequence, spans}], total, hasMore, nextCursor} or SSE' },
      },
    }),
    async (c) => {
      const q = c.req.valid('query');
      const sid = q.session_id;
      if (q.watch)
        return serveWatch(c, watchDeps(deps), {
          topic: TRACES_TOPIC,
          after: watchStart(c, q, true),
          head: store.head(),
          filter: sid === undefined ? undefined : (m: SpanMeta) => m.s === sid || store.inSession(m.t, sid),
          replay: replayOf((after, n) => store.spans({ sessionId: sid }, after, n), spanMeta),
        });
      const cursor = q.cursor ?? 0;
      const p = await store.list(sid, cursor, q.limit ?? DEFAULT_LIMIT, q.order);
      return pageResponse(p, traceJson, cursor);
    },
  );

  route(
    app,
    createRoute({
      method: 'get',
      path: '/traces/{traceId}',
      tags,
      summary: 'One trace {traceId, spans}; with watch=true its spans as SSE (from-beginning replays them)',
      request: {
        params: idParam('traceId'),
        query: z.object(listQueryShape).pick({ watch: true, cursor: true, 'from-beginning': true }),
      },
      responses: { 200: { description: '{traceId, spans}' }, 404: { description: 'Unknown trace' } },
    }),
    async (c) => {
      const traceId = c.req.valid('param').traceId.toLowerCase();
      const q = c.req.valid('query');
      if (q.watch)
        return serveWatch(c, watchDeps(deps), {
          topic: TRACES_TOPIC,
          after: watchStart(c, q, true),
          head: store.head(),
          filter: (m: SpanMeta) => m.t === traceId,
          replay: replayOf((after, n) => store.spans({ traceId }, after, n), spanMeta),
        });
      const spans = await store.trace(traceId);
      if (!spans) throw httpError('not_found', `trace ${JSON.stringify(traceId)} does not exist`);
      return jsonResponse(`{"traceId":"${traceId}","spans":[${spans.map((s) => s.json).join(',')}]}`);
    },
  );

  mountPurgeAll(app, {
    path: '/traces',
    tags,
    summary: 'Clear all trace data (sequences are not reused)',
    purge: () => store.purge(),
  });
}

export const traceRoutes: DomainRoutes<TraceDeps> = { mount: mountTraceRoutes };
