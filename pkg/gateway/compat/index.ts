import { Hono } from 'hono';
import { type AnyOpenAPIHono, errorHandler } from '../../http/index.ts';
import type { GatewayDeps } from '../deps.ts';
import { type CompletionOptions, mountCompletionRoutes } from './completions.ts';
import { kubeErrorToCompat, renderOpenAIError } from './errors.ts';
import { mountModelRoutes } from './models.ts';

/**
 * The chat-compatible API at /compat/v1 (OpenAI SDKs work by changing their base URL). A sub-app so
 * that its own error handler answers its routes in the OpenAI shape: the same classification as
 * `/v1` (pkg/http's errorHandler), another renderer.
 */
export function compatRoutes(deps: GatewayDeps, opts: Partial<CompletionOptions> = {}) {
  return (app: AnyOpenAPIHono) => {
    const compat = new Hono();
    compat.onError(errorHandler(deps.logger, { mappers: [kubeErrorToCompat], render: renderOpenAIError }));
    mountModelRoutes(compat, deps);
    mountCompletionRoutes(compat, deps, { waitTimeoutMs: opts.waitTimeoutMs ?? 330_000 });
    app.route('/compat/v1', compat);
  };
}
