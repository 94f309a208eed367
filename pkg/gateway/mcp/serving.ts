/**
 * Both revisions behind one entry, loaded at the first `/mcp` request (index.ts): the SDKs add
 * ~40 MB and most of a second of start-up that an API service nobody calls over MCP need not pay.
 * The revision is chosen per request by the SDK's own classifier, `isLegacyRequest`: a request
 * carrying the 2026-07-28 envelope (a `_meta` protocol version, or that revision's
 * `MCP-Protocol-Version` header) goes to modern.ts; everything else — `initialize`, requests with
 * an `Mcp-Session-Id`, session DELETEs — is 2025-11-25 and goes to the sessions of sessions.ts.
 */
import { isLegacyRequest } from '@modelcontextprotocol/server';
import { httpError } from '../../http/index.ts';
import type { GatewayDeps } from '../deps.ts';
import type { McpOptions, McpServing } from './index.ts';
import { legacyServer, unknownMethod } from './legacy.ts';
import { modernHandler } from './modern.ts';
import { LegacySessions, sessionNotFound } from './sessions.ts';

const isInitialize = (body: unknown) =>
  !!body && typeof body === 'object' && (body as { method?: unknown }).method === 'initialize';

export function createServing(deps: GatewayDeps, opts: McpOptions): McpServing {
  const modern = modernHandler(deps, opts);
  const sessions = new LegacySessions(
    opts.sessions,
    () => legacyServer(deps, opts.waitTimeoutMs),
    deps.logger,
  );
  return {
    sessions,
    close: async () => void (await Promise.all([sessions.close(), modern.close()])),
    async serve(req, body, caller) {
      if (!(await isLegacyRequest(req, body, { maxRequestBodySize: opts.maxBodyBytes })))
        return modern.fetch(req, { parsedBody: body });
      const id = req.headers.get('mcp-session-id') ?? undefined;
      if (id === undefined && !(req.method === 'POST' && isInitialize(body)))
        throw httpError(
          'mcp_session_required',
          '2025-11-25 requests need the Mcp-Session-Id that initialize answered: send initialize first (2026-07-28 needs no session)',
        );
      if (id !== undefined && !sessions.owns(id, caller)) throw sessionNotFound();
      return unknownMethod(body) ?? sessions.handle(req, body, caller, id);
    },
  };
}
