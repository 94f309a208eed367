import { randomBytes } from 'node:crypto';
import type { KubernetesObject } from '@kubernetes/client-node';
import { createLogger, type Logger } from '../log/index.ts';
import type { InformerCache } from './cache.ts';
import { isConflict } from './client/index.ts';
import type { ObjectLike } from './client/types.ts';
import type { KindRef } from './kinds.ts';
import type { Runnable } from './manager.ts';
import type { RateLimiter } from './rate-limiter.ts';
import { WorkQueue, type WorkQueueHooks } from './workqueue.ts';

/** What one reconcile is about: an object by namespace ('' when cluster-scoped) and name. */
export interface Request {
  namespace: string;
  name: string;
}

export interface ReconcileResult {
  /** Reconcile again after this delay (e.g. a TTL that expires later). Clears the failure history. */
  requeueAfterMs?: number;
  /** Reconcile again with rate-limited backoff, without counting an error. */
  requeue?: boolean;
}

export interface ReconcileContext {
  /** Aborted when the controller stops (shutdown, lost lease). */
  signal: AbortSignal;
  /** Bound to the controller, the request and a fresh `reconcileId`: one reconcile's lines belong together. */
  logger: Logger;
}

export interface Reconciler {
  reconcile(req: Request, ctx: ReconcileContext): Promise<ReconcileResult | undefined>;
}

/**
 * Runs one reconcile; a conflict means someone (often our own earlier write) changed the object
 * since the cache saw it, so it is retried against the fresher cache (rate-limited, not an error).
 */
export async function requeueOnConflict(
  reconcile: () => Promise<ReconcileResult | undefined>,
): Promise<ReconcileResult | undefined> {
  try {
    return await reconcile();
  } catch (err) {
    if (isConflict(err)) return { requeue: true };
    throw err;
  }
}

/** A failure retrying cannot fix (bad spec): logged and counted, never requeued. */
export class TerminalError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TerminalError';
  }
}

export type ReconcileOutcome = 'success' | 'requeue' | 'requeue_after' | 'error' | 'terminal' | 'panic';

export interface ControllerMetricsSink {
  reconciled(controller: string, outcome: ReconcileOutcome, seconds: number): void;
}

/**
 * Where requests come from besides watches (controller-runtime's source.Channel): subscribing
 * hands over the enqueue function and answers the unsubscribe one.
 */
export type Source = (enqueue: (req: Request) => void) => () => void;

export interface ControllerOptions {
  name: string;
  reconciler: Reconciler;
  /** Requests reconciled in parallel (never the same request twice). Default 4. */
  workers?: number;
  rateLimiter?: RateLimiter;
  logger?: Logger;
  metrics?: ControllerMetricsSink;
  queueHooks?: WorkQueueHooks;
}

/** The request of an object itself (controller-runtime's EnqueueRequestForObject). */
export const requestFor = (o: ObjectLike): Request => ({
  namespace: o.metadata?.namespace ?? '',
  name: o.metadata?.name ?? '',
});

// The work queue dedupes by string; names and namespaces never contain '/'.
const keyOf = (r: Request) => `${r.namespace}/${r.name}`;
function requestOf(key: string): Request {
  const i = key.indexOf('/');
  return { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

/**
 * Programming errors (the closest thing JavaScript has to a Go panic) are told apart from
 * reconcile errors so they can be counted separately; both are caught and requeued with backoff.
 */
function isPanic(err: unknown): boolean {
  return (
    !(err instanceof Error) ||
    err instanceof TypeError ||
    err instanceof ReferenceError ||
    err instanceof RangeError ||
    err instanceof SyntaxError
  );
}

interface Watch {
  source: Source;
  /** Requests reconciled at every start: level-based, a new term reconciles everything. */
  initial?: () => Request[];
}

/**
 * Runs a Reconciler over a keyed work queue with controller-runtime semantics; a Runnable that
 * needs the lease. `start` subscribes its sources, enqueues every object it is `for` and launches
 * the workers; `stop` unsubscribes, shuts the queue down, aborts the signal every running
 * reconcile got and waits for the workers — so a controller that lost its lease stops at once.
 */
export class Controller implements Runnable {
  readonly name: string;
  readonly needLeaderElection = true;
  queue: WorkQueue;
  reconciles = 0;
  errors = 0;
  panics = 0;
  readonly #o: ControllerOptions;
  readonly #logger: Logger;
  readonly #watches: Watch[] = [];
  #unsubscribe: Array<() => void> = [];
  #ctl: AbortController | undefined;
  #workers: Promise<void>[] = [];
  /** The kind this controller is `for`, and the cache holding it. */
  #primary: { cache: InformerCache; ref: KindRef<unknown> } | undefined;

  constructor(opts: ControllerOptions) {
    this.name = opts.name;
    this.#o = opts;
    this.#logger = (opts.logger ?? createLogger({ level: 'silent' })).child({ controller: opts.name });
    this.queue = new WorkQueue(opts.rateLimiter, opts.queueHooks);
  }

  /**
   * Reconciles each cached object of `ref` when it changes, and all of them at every start. A
   * deleted object's delayed requeue is dropped (it is reconciled once more, now), and none is
   * scheduled for an object no longer in the cache: with thousands of short-lived objects a day
   * (chat completions' Queries), those timers were the controller's memory growth.
   */
  for<T>(cache: InformerCache, ref: KindRef<T>): this {
    this.#primary = { cache, ref };
    return this.#watch(
      (enqueue) =>
        cache.onChange(ref, {
          onAdd: (o) => enqueue(requestFor(o)),
          onUpdate: (_, o) => enqueue(requestFor(o)),
          onDelete: (o) => {
            this.queue.dropDelayed(keyOf(requestFor(o)));
            enqueue(requestFor(o));
          },
        }),
      () => cache.listAll(ref).map((o) => requestFor(o as ObjectLike)),
    );
  }

  /** Reconciles the requests `map` derives from each change of a cached object of `ref`. */
  watches<T>(
    cache: InformerCache,
    ref: KindRef<T>,
    map: (obj: T & KubernetesObject) => Request[] | Promise<Request[]>,
  ): this {
    return this.#watch((enqueue) =>
      subscribe(cache, ref, (o) => {
        Promise.resolve(map(o))
          .then((reqs) => {
            for (const r of reqs) enqueue(r);
          })
          .catch((err) => this.#logger.warn({ err, watched: ref.plural }, 'mapping a change failed'));
      }),
    );
  }

  /** Requests raised outside any watch (e.g. a background job that ended). */
  source(source: Source): this {
    return this.#watch(source);
  }

  /** Requests to reconcile at every start (e.g. a singleton request). */
  startWith(initial: () => Request[]): this {
    return this.#watch(() => () => {}, initial);
  }

  get running(): boolean {
    return this.#ctl !== undefined;
  }

  enqueue(req: Request): void {
    this.queue.add(keyOf(req));
  }

  start(): void {
    if (this.#ctl) return;
    // A queue cannot be restarted once shut down: a new term of leadership gets a fresh one.
    if (this.queue.isShuttingDown) this.queue = new WorkQueue(this.#o.rateLimiter, this.#o.queueHooks);
    const ctl = new AbortController();
    this.#ctl = ctl;
    const enqueue = (r: Request) => this.enqueue(r);
    this.#unsubscribe = this.#watches.map((w) => w.source(enqueue));
    for (const w of this.#watches) for (const r of w.initial?.() ?? []) enqueue(r);
    const n = this.#o.workers ?? 4;
    for (let i = 0; i < n; i++) this.#workers.push(this.#worker(ctl.signal));
  }

  async stop(): Promise<void> {
    const ctl = this.#ctl;
    if (!ctl) return;
    for (const off of this.#unsubscribe.splice(0)) off();
    this.queue.shutDown();
    ctl.abort(new Error(`controller ${this.name} stopping`));
    await Promise.all(this.#workers);
    this.#workers = [];
    this.#ctl = undefined;
  }

  #watch(source: Source, initial?: () => Request[]): this {
    this.#watches.push({ source, initial });
    return this;
  }

  async #worker(signal: AbortSignal): Promise<void> {
    const queue = this.queue;
    for (;;) {
      const key = await queue.get();
      if (key === undefined || signal.aborted) {
        if (key !== undefined) queue.done(key);
        return;
      }
      await this.#processOne(queue, key, signal);
      queue.done(key);
    }
  }

  async #processOne(queue: WorkQueue, key: string, signal: AbortSignal): Promise<void> {
    const t0 = performance.now();
    const ctx = new LazyContext(this.#logger, key, signal);
    let outcome: ReconcileOutcome;
    this.reconciles++;
    try {
      const result = (await this.#o.reconciler.reconcile(requestOf(key), ctx)) ?? {};
      outcome = this.#requeue(queue, key, result);
    } catch (err) {
      outcome = this.#failed(queue, key, err, signal, ctx.logger);
    }
    this.#o.metrics?.reconciled(this.name, outcome, (performance.now() - t0) / 1000);
  }

  #requeue(queue: WorkQueue, key: string, result: ReconcileResult): ReconcileOutcome {
    if (result.requeueAfterMs !== undefined && result.requeueAfterMs >= 0) {
      queue.forget(key);
      // Deleted while this reconcile ran (its delete event already dropped any delayed add).
      if (this.#gone(key)) return 'success';
      queue.addAfter(key, result.requeueAfterMs);
      return 'requeue_after';
    }
    if (result.requeue) {
      queue.addRateLimited(key);
      return 'requeue';
    }
    queue.forget(key);
    return 'success';
  }

  #gone(key: string): boolean {
    if (!this.#primary) return false;
    const { namespace, name } = requestOf(key);
    return this.#primary.cache.get(this.#primary.ref, namespace, name) === undefined;
  }

  #failed(
    queue: WorkQueue,
    key: string,
    err: unknown,
    signal: AbortSignal,
    logger: Logger,
  ): ReconcileOutcome {
    if (signal.aborted) return 'error'; // stopped mid-reconcile: the next leader starts over
    this.errors++;
    if (err instanceof TerminalError) {
      queue.forget(key);
      logger.error({ err }, 'reconcile failed terminally');
      return 'terminal';
    }
    const panic = isPanic(err);
    if (panic) this.panics++;
    queue.addRateLimited(key);
    const retries = queue.numRequeues(key);
    if (panic) logger.error({ err, retries }, 'reconciler threw a programming error; requeued');
    else logger.warn({ err, retries }, 'reconcile failed; requeued');
    return panic ? 'panic' : 'error';
  }
}

/**
 * The reconcile's logger is made on first use: most reconciles find nothing to do and log nothing,
 * and a child logger per reconcile would cost more than the reconcile itself.
 */
class LazyContext implements ReconcileContext {
  readonly signal: AbortSignal;
  readonly #base: Logger;
  readonly #request: string;
  #logger: Logger | undefined;

  constructor(base: Logger, request: string, signal: AbortSignal) {
    this.#base = base;
    this.#request = request;
    this.signal = signal;
  }

  get logger(): Logger {
    this.#logger ??= this.#base.child({
      request: this.#request,
      reconcileId: randomBytes(4).toString('hex'),
    });
    return this.#logger;
  }
}

function subscribe<T>(cache: InformerCache, ref: KindRef<T>, fn: (o: T & KubernetesObject) => void) {
  return cache.onChange(ref, { onAdd: fn, onUpdate: (_, o) => fn(o), onDelete: fn });
}
