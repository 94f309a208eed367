import { z } from '@hono/zod-openapi';
import type { AnyOpenAPIHono } from '../../http/index.ts';

/**
 * OpenAPI entries of the routes whose handlers are plain Hono routes because they pass bodies
 * through (generic resources, broker proxy): documented here so /openapi.json covers every route.
 */
const kubeObject = z.record(z.string(), z.unknown()).openapi('KubeObject', {
  description:
    'The raw resource (apiVersion, kind, metadata, spec, status); managedFields removed. Core Secrets: metadata, type and key names only',
});
const kubeStatus = z
  .object({
    kind: z.literal('Status'),
    apiVersion: z.string(),
    status: z.string(),
    reason: z.string().optional(),
    message: z.string(),
    code: z.number().int(),
  })
  .openapi('KubeStatus', { description: "The API server's own Status, passed through" });
const both = <T extends z.ZodType>(schema: T) => ({
  'application/json': { schema },
  'application/yaml': { schema },
});
const pathString = (name: string, description: string) =>
  z.string().openapi({ param: { name, in: 'path' }, description });

export function documentGenericRoutes(app: AnyOpenAPIHono) {
  const query = z.object({
    namespace: z.string().optional().openapi({ description: "default: the instance's namespace" }),
  });
  const responses = {
    200: {
      description: 'The object or the list (JSON, or YAML on Accept: application/yaml)',
      content: both(kubeObject),
    },
    404: { description: 'Not found as namespaced nor as cluster-scoped', content: both(kubeStatus) },
    403: { description: 'The service account may not read it', content: both(kubeStatus) },
  };
  const version = pathString('version', 'e.g. v1');
  const kind = pathString(
    'kind',
    'Kind (Pod), plural (pods) or singular (pod), in any case; anything else is a 404',
  );
  const group = pathString('group', 'API group, e.g. berth.dev');
  const name = pathString('resource_name', 'object name');
  for (const [path, params] of [
    ['/v1/resources/api/{version}/{kind}', z.object({ version, kind })],
    ['/v1/resources/api/{version}/{kind}/{resource_name}', z.object({ version, kind, resource_name: name })],
    ['/v1/resources/apis/{group}/{version}/{kind}', z.object({ group, version, kind })],
    [
      '/v1/resources/apis/{group}/{version}/{kind}/{resource_name}',
      z.object({ group, version, kind, resource_name: name }),
    ],
  ] as const)
    app.openAPIRegistry.registerPath({
      method: 'get',
      path,
      tags: ['Generic resources'],
      request: { params, query },
      responses,
    });
}

const brokerPaths: Array<[string, string]> = [
  ['messages', 'Message records, paged'],
  ['conversations', 'Conversations, paged'],
  ['memory-status', 'Counts per conversation; no message bodies'],
  ['stream', 'Chunk streams (watch=true: SSE)'],
  ['stream/{query}', "One query's chunk stream (SSE)"],
  ['traces', 'Spans, paged'],
  ['events', 'Operation events, paged'],
  ['events/{query}', "One query's events"],
  ['sessions', 'Sessions, paged'],
];

export function documentBrokerProxy(app: AnyOpenAPIHono) {
  const paging = z.object({
    limit: z.string().optional().openapi({ description: 'page size (default 100, max 1000)' }),
    cursor: z.string().optional().openapi({ description: 'exclusive sequence number to continue after' }),
    watch: z.string().optional().openapi({ description: 'true: Server-Sent Events' }),
    'from-beginning': z.string().optional().openapi({ description: 'with watch: replay first' }),
  });
  const page = z.object({
    items: z.array(z.record(z.string(), z.unknown())),
    total: z.number().int(),
    hasMore: z.boolean(),
    nextCursor: z.number().int().nullable(),
  });
  const error = z.object({ error: z.object({ code: z.string(), message: z.string() }) });
  for (const [rest, description] of brokerPaths) {
    const param = /\{query\}/.test(rest)
      ? z.object({ query: pathString('query', 'the Query name') })
      : undefined;
    app.openAPIRegistry.registerPath({
      method: 'get',
      path: `/v1/broker/${rest}`,
      tags: ['Broker (read-only proxy)'],
      description: `${description}. Passed through from the broker unchanged and unbuffered.`,
      request: { query: paging, ...(param ? { params: param } : {}) },
      responses: {
        200: {
          description: 'The broker answer',
          content: {
            'application/json': { schema: page },
            'text/event-stream': { schema: z.string().openapi({ description: 'SSE `data:` lines' }) },
          },
        },
        400: { description: 'Invalid paging parameters (from the broker)' },
        405: { description: 'Only GET is allowed', content: { 'application/json': { schema: error } } },
        503: {
          description: 'No broker configured or reachable',
          content: { 'application/json': { schema: error } },
        },
      },
    });
  }
}
