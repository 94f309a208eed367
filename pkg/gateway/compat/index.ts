import type { GatewayDeps } from '../deps.ts';
import type { AnyOpenAPIHono } from '../openapi-route.ts';
import { type CompletionOptions, mountCompletionRoutes } from './completions.ts';
import { mountModelRoutes } from './models.ts';

/** The chat-compatible API at /compat/v1 (OpenAI SDKs work by changing their base URL). */
export function compatRoutes(deps: GatewayDeps, opts: Partial<CompletionOptions> = {}) {
  return (app: AnyOpenAPIHono) => {
    mountModelRoutes(app, deps);
    mountCompletionRoutes(app, deps, { waitTimeoutMs: opts.waitTimeoutMs ?? 330_000 });
  };
}
