import { createRoute } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { z } from 'zod';
import { type AnyOpenAPIHono, errorEnvelopeSchema, route } from '../openapi/index.ts';

let processRegistry: Registry | undefined;

/**
 * The standard `process_*` and `nodejs_*` metrics, without a prefix so stock Node.js dashboards find
 * them. Collected once per process: `berth up` runs the API service, broker and controller in one
 * process, and each collector set starts its own GC observer and event-loop monitor.
 */
export function defaultMetricsRegistry(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/** The text exposition of the process's default metrics followed by each component registry's. */
export async function exposition(registries: Registry[]): Promise<string> {
  const parts = await Promise.all([defaultMetricsRegistry(), ...registries].map((r) => r.metrics()));
  return parts.filter(Boolean).join('\n');
}

/** `GET /metrics` in the Prometheus text format. */
export function metricsHandler(...registries: Registry[]): (c: Context) => Promise<Response> {
  return async (c) =>
    c.body(await exposition(registries), 200, { 'content-type': defaultMetricsRegistry().contentType });
}

/**
 * `GET /metrics`, documented in the service's OpenAPI description like its other routes; with
 * `authenticated`, the 401 of a scrape without acceptable credentials too.
 */
export function mountMetricsRoute(
  app: AnyOpenAPIHono,
  registries: Registry[],
  opts: { authenticated?: boolean } = {},
): void {
  // Start collecting now: the first scrape then already has GC and event-loop figures.
  defaultMetricsRegistry();
  route(
    app,
    createRoute({
      method: 'get',
      path: '/metrics',
      tags: ['Health'],
      summary: 'Prometheus metrics (text exposition format): process_*, nodejs_* and this service’s own',
      responses: {
        200: {
          description: 'The Prometheus text format, version 0.0.4',
          content: { 'text/plain': { schema: z.string() } },
        },
        ...(opts.authenticated
          ? {
              401: {
                description: 'No acceptable credentials for the AUTH_MODE',
                content: { 'application/json': { schema: errorEnvelopeSchema() } },
              },
            }
          : {}),
      },
    }),
    metricsHandler(...registries),
  );
}
