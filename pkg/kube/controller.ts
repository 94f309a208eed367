import type { Logger } from '../log/index.ts';
import type { RateLimiter } from './rate-limiter.ts';
import { WorkQueue, type WorkQueueHooks } from './workqueue.ts';

export interface ReconcileResult {
  /** Reconcile again after this delay (e.g. a TTL that expires later). Clears the failure history. */
  requeueAfterMs?: number;
  /** Reconcile again with rate-limited backoff, without counting an error. */
  requeue?: boolean;
}

/** A failure retrying cannot fix (bad spec): logged and counted, never requeued. */
export class TerminalError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TerminalError';
  }
}

export type Reconcile = (key: string, signal: AbortSignal) => Promise<ReconcileResult | undefined>;

export type ReconcileOutcome = 'success' | 'requeue' | 'requeue_after' | 'error' | 'terminal' | 'panic';

export interface ControllerMetricsSink {
  reconciled(controller: string, outcome: ReconcileOutcome, seconds: number): void;
}

export interface ControllerOptions {
  name: string;
  reconcile: Reconcile;
  /** Keys reconciled in parallel (never the same key twice). Default 4. */
  workers?: number;
  rateLimiter?: RateLimiter;
  logger?: Logger;
  metrics?: ControllerMetricsSink;
  queueHooks?: WorkQueueHooks;
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

/**
 * Runs a reconcile function over a keyed work queue with controller-runtime semantics. `start`
 * launches the workers; `stop` shuts the queue down, aborts the signal every running reconcile got,
 * and waits for the workers to return — so a controller that lost its lease stops at once.
 */
export class Controller {
  readonly name: string;
  queue: WorkQueue;
  private readonly opts: ControllerOptions;
  private ctl: AbortController | undefined;
  private workers: Promise<void>[] = [];
  reconciles = 0;
  errors = 0;
  panics = 0;

  constructor(opts: ControllerOptions) {
    this.name = opts.name;
    this.opts = opts;
    this.queue = new WorkQueue(opts.rateLimiter, opts.queueHooks);
  }

  get running(): boolean {
    return this.ctl !== undefined;
  }

  enqueue(key: string): void {
    this.queue.add(key);
  }

  start(): void {
    if (this.ctl) return;
    // A queue cannot be restarted once shut down: a new term of leadership gets a fresh one.
    if (this.queue.isShuttingDown) this.queue = new WorkQueue(this.opts.rateLimiter, this.opts.queueHooks);
    const ctl = new AbortController();
    this.ctl = ctl;
    const n = this.opts.workers ?? 4;
    for (let i = 0; i < n; i++) this.workers.push(this.worker(ctl.signal));
  }

  async stop(): Promise<void> {
    const ctl = this.ctl;
    if (!ctl) return;
    this.queue.shutDown();
    ctl.abort(new Error(`controller ${this.name} stopping`));
    await Promise.all(this.workers);
    this.workers = [];
    this.ctl = undefined;
  }

  private async worker(signal: AbortSignal): Promise<void> {
    const queue = this.queue;
    for (;;) {
      const key = await queue.get();
      if (key === undefined || signal.aborted) {
        if (key !== undefined) queue.done(key);
        return;
      }
      await this.processOne(queue, key, signal);
      queue.done(key);
    }
  }

  private async processOne(queue: WorkQueue, key: string, signal: AbortSignal): Promise<void> {
    const t0 = performance.now();
    let outcome: ReconcileOutcome;
    this.reconciles++;
    try {
      const result = (await this.opts.reconcile(key, signal)) ?? {};
      if (result.requeueAfterMs !== undefined && result.requeueAfterMs >= 0) {
        queue.forget(key);
        queue.addAfter(key, result.requeueAfterMs);
        outcome = 'requeue_after';
      } else if (result.requeue) {
        queue.addRateLimited(key);
        outcome = 'requeue';
      } else {
        queue.forget(key);
        outcome = 'success';
      }
    } catch (err) {
      if (signal.aborted) {
        outcome = 'error'; // stopped mid-reconcile: the next leader starts over
      } else if (err instanceof TerminalError) {
        queue.forget(key);
        outcome = 'terminal';
        this.errors++;
        this.opts.logger?.error({ controller: this.name, key, err }, 'reconcile failed terminally');
      } else {
        outcome = isPanic(err) ? 'panic' : 'error';
        if (outcome === 'panic') this.panics++;
        this.errors++;
        queue.addRateLimited(key);
        this.opts.logger?.[outcome === 'panic' ? 'error' : 'warn'](
          { controller: this.name, key, err, retries: queue.numRequeues(key) },
          outcome === 'panic'
            ? 'reconciler threw a programming error; requeued'
            : 'reconcile failed; requeued',
        );
      }
    }
    this.opts.metrics?.reconciled(this.name, outcome, (performance.now() - t0) / 1000);
  }
}
