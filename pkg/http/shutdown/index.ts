import type { Server, ServerResponse } from 'node:http';
import type { Env, MiddlewareHandler } from 'hono';
import { httpError, renderEnvelope } from '../errors/index.ts';

/** Default of SHUTDOWN_GRACE_SECONDS: inside Kubernetes' default 30 s terminationGracePeriodSeconds. */
export const DEFAULT_SHUTDOWN_GRACE_SECONDS = 25;
/** How long streams get to write their final error frame once the grace period is over. */
const FINAL_FRAME_MS = 2000;

/** SHUTDOWN_GRACE_SECONDS as a number of seconds (0 allowed); a RangeError naming the variable when invalid. */
export function shutdownGraceSeconds(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.SHUTDOWN_GRACE_SECONDS;
  if (raw === undefined || raw.trim() === '') return DEFAULT_SHUTDOWN_GRACE_SECONDS;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0)
    throw new RangeError(
      `SHUTDOWN_GRACE_SECONDS: must be a number of seconds >= 0, got ${JSON.stringify(raw)}`,
    );
  return n;
}

/**
 * Graceful shutdown of one HTTP server. It counts requests in flight at the socket level (a
 * streamed response counts until its last byte), so `shutdown(grace)` can wait for them: first
 * `draining` turns true (readiness answers 503), then in-flight requests and streams get up to the
 * grace period; when it ends, `deadline` aborts so each stream writes its final error frame, and the
 * connections close.
 */
export class Drain {
  readonly #server: Server;
  readonly #deadline = new AbortController();
  readonly #idle = new Set<() => void>();
  /** Requests (and streams) not finished yet: counted, and told to close their connection once draining starts. */
  readonly #open = new Set<ServerResponse>();
  #draining = false;
  #closeScheduled = false;
  #closed: Promise<void> | undefined;

  constructor(server: Server) {
    this.#server = server;
    server.on('request', (_req, res: ServerResponse) => {
      this.#open.add(res);
      // While draining, no socket goes back to a client's pool: its next request (a watch) would be refused.
      if (this.#draining) res.shouldKeepAlive = false;
      res.once('close', () => {
        this.#open.delete(res);
        // A response that began before draining may have promised keep-alive: its connection is let
        // go of now it is done, or the client's next request on it would be refused (503) — and a
        // client whose pool holds several such connections could spend every retry on them.
        if (this.#draining) this.#closeIdleSoon();
        if (this.#open.size === 0) for (const wake of this.#idle) wake();
      });
    });
  }

  get draining(): boolean {
    return this.#draining;
  }

  /** Requests (and streams) not finished yet. */
  get inFlight(): number {
    return this.#open.size;
  }

  /** Aborted when the grace period is over: streams still open end with a final error frame. */
  get deadline(): AbortSignal {
    return this.#deadline.signal;
  }

  /**
   * While draining, new requests get 503 `shutting_down` (with `Connection: close` and
   * `Retry-After`), except those `allowed` (probes, scrapes), so the load balancer and clients move
   * on while what is in flight finishes.
   */
  refuseNew(allowed: (path: string) => boolean): MiddlewareHandler<Env> {
    return async (c, next) => {
      if (!this.#draining) return next();
      c.header('connection', 'close');
      if (allowed(c.req.path)) return next();
      c.header('retry-after', '1');
      // Answered, not thrown: a refusal while draining is expected, not a failure to log.
      return renderEnvelope(
        c,
        httpError('shutting_down', 'the server is shutting down; retry on another instance'),
      );
    };
  }

  /** Drains (see the class) and closes the server. Idempotent: later calls share the first. */
  shutdown(graceMs: number): Promise<void> {
    this.#closed ??= (async () => {
      this.#draining = true;
      // Idle keep-alive sockets are not traffic: let them go now (a busy one closes after its response,
      // saying so in its headers when they are not sent yet).
      this.#server.closeIdleConnections();
      for (const res of this.#open) if (!res.headersSent) res.shouldKeepAlive = false;
      if (this.#open.size > 0 && graceMs > 0) await this.#waitIdle(graceMs);
      if (this.#open.size > 0) {
        this.#deadline.abort(new Error('shutdown grace period over'));
        await this.#waitIdle(FINAL_FRAME_MS);
      }
      await new Promise<void>((resolve) => {
        this.#server.close(() => resolve());
        this.#server.closeAllConnections();
      });
    })();
    return this.#closed;
  }

  /**
   * Closes the connections left idle, once per event-loop turn: each call walks every connection,
   * and thousands of SSE streams ending together at the deadline would otherwise make it quadratic.
   */
  #closeIdleSoon(): void {
    if (this.#closeScheduled) return;
    this.#closeScheduled = true;
    setImmediate(() => {
      this.#closeScheduled = false;
      this.#server.closeIdleConnections();
    });
  }

  #waitIdle(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#idle.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#idle.add(done);
      if (this.#open.size === 0) done();
    });
  }
}
