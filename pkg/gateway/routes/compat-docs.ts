import { z } from '@hono/zod-openapi';
import type { AnyOpenAPIHono } from '../../http/index.ts';
import { chatRequest, modelItem, modelList } from '../compat/schemas.ts';

/**
 * OpenAPI entries of the chat-compatible API (its handlers are plain Hono routes in compat/), so
 * /openapi.json covers it too. Skipped for any path compat/ documents itself.
 */
export function documentCompatRoutes(app: AnyOpenAPIHono) {
  const documented = new Set(
    app.openAPIRegistry.definitions.flatMap((d) =>
      d.type === 'route' ? [`${d.route.method} ${d.route.path}`] : [],
    ),
  );
  const openAIError = z.object({
    error: z.object({
      message: z.string(),
      type: z.string(),
      param: z.string().nullable().optional(),
      code: z.string().nullable().optional(),
    }),
  });
  const errors = (codes: number[]) =>
    Object.fromEntries(
      codes.map((s) => [
        s,
        { description: 'OpenAI-shaped error', content: { 'application/json': { schema: openAIError } } },
      ]),
    );
  const completion = z.object({
    id: z.string(),
    object: z.literal('chat.completion'),
    created: z.number().int(),
    model: z.string(),
    choices: z.array(
      z.object({
        index: z.number().int(),
        message: z.object({ role: z.literal('assistant'), content: z.string().nullable() }),
        finish_reason: z.string().nullable(),
      }),
    ),
    usage: z
      .object({ prompt_tokens: z.number(), completion_tokens: z.number(), total_tokens: z.number() })
      .optional(),
    svc: z
      .record(z.string(), z.unknown())
      .optional()
      .openapi({ description: 'Berth extension: query, session' }),
  });
  const tags = ['Chat-compatible API'];
  const add = (method: 'get' | 'post', path: string, def: Record<string, unknown>) => {
    if (!documented.has(`${method} ${path}`))
      app.openAPIRegistry.registerPath({ method, path, tags, ...def } as Parameters<
        typeof app.openAPIRegistry.registerPath
      >[0]);
  };
  add('get', '/compat/v1/models', {
    responses: {
      200: {
        description: 'Every agent, team, model and tool as <type>/<name>',
        content: { 'application/json': { schema: modelList } },
      },
      ...errors([401]),
    },
  });
  add('get', '/compat/v1/models/{id}', {
    request: {
      params: z.object({
        id: z.string().openapi({ param: { name: 'id', in: 'path' }, example: 'agent/helper' }),
      }),
    },
    responses: {
      200: { description: 'One target', content: { 'application/json': { schema: modelItem } } },
      ...errors([401, 404]),
    },
  });
  add('post', '/compat/v1/chat/completions', {
    request: { body: { required: true, content: { 'application/json': { schema: chatRequest } } } },
    responses: {
      200: {
        description: 'The completion; with stream: true, chat.completion.chunk SSE frames ending with [DONE]',
        content: {
          'application/json': { schema: completion },
          'text/event-stream': { schema: z.string() },
        },
      },
      ...errors([400, 401, 404, 415, 500, 504]),
    },
  });
}
