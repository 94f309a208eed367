/**
 * `/mcp`: Berth as an MCP server (docs/mcp.md, "Berth as an MCP server"), both protocol revisions
 * on one route (serving.ts chooses per request). Authentication is the app's (app.ts puts
 * AUTH_MODE's middleware on `/mcp`). What is refused here, before either SDK sees the request —
 * method, media type, body size and depth, batches, `__proto__` keys, a foreign `Origin` — is
 * answered in the error envelope with a code of the registry; the SDKs answer JSON-RPC errors.
 */

import type { Context } from 'hono';
import type { Principal } from '../../auth/principal.ts';
import { type AnyOpenAPIHono, HttpError, httpError, mediaTypeOf, parseJsonBody } from '../../http/index.ts';
import type { GatewayDeps } from '../deps.ts';
import { documentMcpRoute } from './docs.ts';
import type { SessionLimits } from './settings.ts';

export interface McpOptions {
  /** How long invoke_target waits for its Query (the /compat/v1 wait). */
  waitTimeoutMs: number;
  /** The app's body limit (the SDKs never read the body themselves: it is parsed here). */
  maxBodyBytes: number;
  sessions: SessionLimits;
}

export interface McpServing {
  /** The 2025-11-25 sessions (tests look at their count). */
  readonly sessions: { readonly size: number };
  /** Answers one checked request: `body` is the parsed message (POST), `caller` whose it is. */
  serve(req: Request, body: unknown, caller: string): Promise<Response>;
  close(): Promise<void>;
}

/** What `/mcp` serves with, built at its first request; `loaded` once it is. */
export interface McpMount {
  loaded(): McpServing | undefined;
}

/** Mounts `/mcp` on the API service's app (docs/mcp.md, "Berth as an MCP server"). */
export function mountMcp(app: AnyOpenAPIHono, deps: GatewayDeps, opts: McpOptions): McpMount {
  let serving: McpServing | undefined;
  let loading: Promise<McpServing> | undefined;
  const load = () => {
    loading ??= import('./serving.ts').then((m) => {
      serving = m.createServing(deps, opts);
      return serving;
    });
    return loading;
  };
  // At the end of the grace period the calls still waiting answer first (a tool error naming their
  // Query, which goes on: targets.ts), then their sessions and transports close.
  deps.shutdown?.addEventListener('abort', () => setImmediate(() => void serving?.close()), { once: true });

  app.all('/mcp', async (c) => {
    refuseCrossOrigin(c);
    const method = c.req.method;
    if (method !== 'POST' && method !== 'DELETE')
      throw httpError(
        'method_not_allowed',
        `${method} /mcp: this server sends nothing outside an answer (no standalone SSE stream); POST messages, DELETE a session`,
        undefined,
        { headers: { allow: 'POST, DELETE' } },
      );
    const body = method === 'POST' ? await readMessage(c) : undefined;
    return (await load()).serve(c.req.raw, body, callerOf(c.get('principal')));
  });
  documentMcpRoute(app);
  return { loaded: () => serving };
}

/** The `/mcp` extension of startGatewayServer (its sessions close with the drain's deadline). */
export function mcpRoutes(deps: GatewayDeps, opts: McpOptions) {
  return (app: AnyOpenAPIHono) => void mountMcp(app, deps, opts);
}

/** Whose session it is: the API key, the token's issuer and subject, or everyone in `open` mode. */
export function callerOf(p: Principal | undefined): string {
  if (p?.kind === 'api-key') return `key:${p.publicKey}`;
  if (p?.kind === 'user') return `user:${String(p.claims.iss ?? '')}:${p.subject ?? p.name}`;
  return 'anonymous';
}

/**
 * The MCP spec asks servers to check `Origin`: a browser page of another origin is refused (403).
 * Clients outside a browser send none.
 */
function refuseCrossOrigin(c: Context): void {
  const origin = c.req.header('origin');
  if (origin === undefined) return;
  let host: string | undefined;
  try {
    host = new URL(origin).host;
  } catch {
    host = undefined;
  }
  if (!host || host !== c.req.header('host'))
    throw httpError(
      'forbidden',
      `requests from origin ${JSON.stringify(origin.slice(0, 200))} are not accepted`,
    );
}

/** One JSON-RPC message: JSON, within the depth limit, not a batch, no `__proto__` key. */
async function readMessage(c: Context): Promise<unknown> {
  if (mediaTypeOf(c) !== 'application/json')
    throw httpError('unsupported_media_type', 'MCP messages are JSON: send Content-Type application/json');
  const text = await c.req.text(); // 413 and json_too_deep are thrown here (app middleware)
  let body: unknown;
  try {
    body = parseJsonBody(c, text);
  } catch (err) {
    if (err instanceof HttpError) throw err;
    throw httpError('invalid_json', `the body is not JSON: ${(err as Error).message}`);
  }
  if (body === null || typeof body !== 'object')
    throw httpError('invalid_request', 'a JSON-RPC message is a JSON object');
  if (Array.isArray(body))
    throw httpError(
      'invalid_request',
      'JSON-RPC batches are not accepted (neither 2025-11-25 nor 2026-07-28 has them): one message per request',
    );
  if (hasProtoKey(body))
    throw httpError('invalid_request', 'a "__proto__" key is not accepted anywhere in the body');
  return body;
}

/** Whether any object in `value` has an own `__proto__` key (JSON.parse makes one; a merge would not). */
function hasProtoKey(value: unknown): boolean {
  if (!value || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some(hasProtoKey);
  if (Object.hasOwn(value, '__proto__')) return true;
  return Object.values(value).some(hasProtoKey);
}
