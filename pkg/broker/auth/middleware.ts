import type { Context, MiddlewareHandler } from 'hono';
import { httpError } from '../../http/index.ts';
import type { Logger } from '../../log/index.ts';
import { tokenKey, VerdictCache } from './cache.ts';
import type { BrokerAuthConfig } from './config.ts';
import { BROKER_AUDIENCE, type ReviewResult, type TokenReviewer } from './reviewer.ts';

/** Paths anyone may call: probes, metrics and the API description (exact, or under `/api-docs/`). */
const OPEN = new Set(['/health', '/healthz', '/readyz', '/metrics', '/api-docs', '/openapi.json']);
const isOpen = (path: string) => OPEN.has(path) || path.startsWith('/api-docs/');
const READ_METHODS = new Set(['GET', 'HEAD']);
/** Longer than any service-account JWT: refused before it costs a review. */
const MAX_TOKEN_CHARS = 16 * 1024;

export type Right = 'write' | 'read' | 'memory';

/**
 * The memory contract's writes (create a conversation, delete one, append messages): what a caller
 * the namespace allows (BROKER_MEMORY_SUBJECTS) may do besides reading. Matched on the raw path, so
 * `/conversations/x/queries/q/messages` or an encoded variant is not one of them.
 */
const MEMORY_WRITES: Array<[string, RegExp]> = [
  ['POST', /^\/conversations$/],
  ['DELETE', /^\/conversations\/[^/]+$/],
  ['POST', /^\/messages$/],
];
const isMemoryWrite = (method: string, path: string) =>
  MEMORY_WRITES.some(([m, re]) => m === method && re.test(path));

/**
 * Who may do what: writers everything, service accounts of the served namespace reads, and those
 * of them the namespace names as memory callers the memory contract too.
 */
export function rightsOf(
  username: string,
  cfg: Pick<BrokerAuthConfig, 'writers' | 'namespace' | 'memoryCallers'>,
): Right[] {
  if (cfg.writers.includes(username)) return ['write', 'read', 'memory'];
  const prefix = `system:serviceaccount:${cfg.namespace}:`;
  if (!cfg.namespace || !username.startsWith(prefix)) return [];
  const callers = cfg.memoryCallers ?? [];
  return callers.includes(username) || callers.includes(`${prefix}*`) ? ['read', 'memory'] : ['read'];
}

const unauthorized = (message: string) =>
  httpError('unauthorized', message, undefined, {
    headers: { 'www-authenticate': 'Bearer realm="berth-broker"' },
  });

function bearerOf(c: Context): string {
  const header = c.req.header('authorization');
  if (!header) throw unauthorized('a service-account token is required: Authorization: Bearer <token>');
  const m = /^Bearer[ \t]+([^\s]+)[ \t]*$/i.exec(header);
  if (!m?.[1]) throw unauthorized('the Authorization header is not a bearer token');
  if (m[1].length > MAX_TOKEN_CHARS) throw unauthorized('the bearer token is not valid');
  return m[1];
}

export interface BrokerAuthOptions {
  config: BrokerAuthConfig;
  reviewer: TokenReviewer;
  logger: Logger;
  now?: () => number;
}

/**
 * BROKER_AUTH=serviceaccount: every request but the open paths carries a service-account token
 * whose audience is `berth-broker`, checked by a TokenReview (verdicts cached by token hash);
 * no or a refused token is 401, no verdict to be had is 503, an identity without the right is 403.
 */
export function brokerAuth(opts: BrokerAuthOptions): MiddlewareHandler {
  const { config, reviewer, logger } = opts;
  const cache = new VerdictCache(config.cacheTtlMs, config.cacheSize, opts.now);
  // `berth-broker`, and `berth-broker:<namespace>`: the controller's token minted for this tenant's
  // broker alone (no other broker accepts it, so a tenant's own Service capturing it gains nothing).
  const audiences = config.namespace
    ? [BROKER_AUDIENCE, `${BROKER_AUDIENCE}:${config.namespace}`]
    : [BROKER_AUDIENCE];
  const verdict = async (token: string): Promise<ReviewResult> => {
    const key = tokenKey(token);
    const hit = cache.get(key);
    if (hit) return hit;
    let result: ReviewResult;
    try {
      result = await reviewer.review(token, audiences);
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      logger.warn({ reason }, 'token review failed: answering 503');
      throw httpError(
        'auth_unavailable',
        'the token could not be checked: the Kubernetes API server gave no verdict (unreachable or refused the review); retry',
        undefined,
        { headers: { 'retry-after': '1' } },
      );
    }
    cache.set(key, result);
    return result;
  };
  return async (c, next) => {
    if (c.req.method === 'OPTIONS' || isOpen(c.req.path)) return next();
    const token = bearerOf(c);
    const r = await verdict(token);
    const valid =
      r.authenticated &&
      !!r.username &&
      (r.audiences ?? [BROKER_AUDIENCE]).some((a) => audiences.includes(a));
    if (!valid) {
      logger.info({ reason: r.error ?? 'not authenticated', path: c.req.path }, 'broker token refused');
      throw unauthorized(
        `the bearer token is not valid for the broker (expired, revoked, or not of audience ${audiences.join(' or ')})`,
      );
    }
    const username = r.username as string;
    const need: Right = READ_METHODS.has(c.req.method)
      ? 'read'
      : isMemoryWrite(c.req.method, c.req.path)
        ? 'memory'
        : 'write';
    if (!rightsOf(username, config).includes(need)) {
      logger.info({ user: username, method: c.req.method, path: c.req.path }, 'broker request forbidden');
      throw httpError(
        'forbidden',
        need === 'read'
          ? `${username} may not read this broker (only service accounts of namespace ${config.namespace} and the controller may)`
          : need === 'memory'
            ? `${username} may not call the memory contract of this broker (only the controller and the accounts BROKER_MEMORY_SUBJECTS names may)`
            : `${username} may not write to this broker (only the controller may)`,
      );
    }
    c.set('brokerCaller' as never, username as never);
    return next();
  };
}
