import { Kinds, QUERY_FINALIZER, type Query, TERMINAL_PHASES } from '../../api/index.ts';
import type { BrokerRouter } from '../../engine/brokers.ts';
import type { QueryEngine, QueryOutcome } from '../../engine/contract.ts';
import { addFinalizer, type Client, ignoreNotFound, patchStatus } from '../../kube/client/index.ts';
import type { ReconcileContext, ReconcileResult, Request } from '../../kube/controller.ts';
import type { EventRecorder } from '../../kube/events.ts';
import { type Logger, truncateForLog } from '../../log/index.ts';
import { Runs } from '../runs/index.ts';
import { RunReconciler } from '../runs/reconciler.ts';
import { dependencyStep, spentWaiting } from './dependencies.ts';
import { QueryFinalizer } from './finalize.ts';
import { type QueryRun, RunningStatus } from './running-status.ts';
import { endedWithoutRun, finishedStatus, waitingStatus } from './status.ts';
import { completedAt, ttlRequeue } from './ttl.ts';
import { tendWaiting } from './waiting.ts';

export const ORPHANED_MESSAGE = 'controller restarted while the query was running';

export interface QueryReconcilerOptions {
  /** Finalizer is released this long after deletion even if the purge failed. Default 5 min. */
  purgeGraceMs?: number;
  /** Purge retry backoff (jittered exponential). Default 200 ms → 30 s. */
  purgeRetryInitialMs?: number;
  purgeRetryMaxMs?: number;
  /** Timeout of one purge request. Default 10 s. */
  purgeTimeoutMs?: number;
  /** Engine runs at once; more pending queries wait. Default 256. */
  maxConcurrentRuns?: number;
  /**
   * On a graceful stop, how long runs in flight may take to finish (their outcome written, the lease
   * still held) before they are aborted for the next leader. Default 20 s (the manifests' grace
   * period is 30 s). New runs do not start meanwhile.
   */
  drainMs?: number;
}

export interface QueryReconcilerDeps {
  /** Reads (served by the informer cache in a controller) and writes. */
  client: Client;
  engine?: QueryEngine;
  /** The broker of each namespace (purges); `brokerUrl`: one for all. */
  brokers?: BrokerRouter;
  brokerUrl?: string;
  recorder: EventRecorder;
  /** For what happens outside any reconcile (runs aborted on shutdown). */
  logger?: Logger;
  onPurged?(seconds: number, complete: boolean): void;
  /** The purge's HTTP client (tests give a fake broker). Default global fetch. */
  fetch?: typeof fetch;
}

/**
 * Owns the Query lifecycle: finalizer, dispatch of pending queries to the engine (phase running,
 * AbortSignal for cancel/deletion/shutdown, outcome → status), failing queries orphaned by a
 * previous leader, TTL deletion, and the broker purge that the finalizer guards. Stopping it
 * (shutdown, lost lease) aborts this process's engine runs: the next leader fails them as orphaned.
 */
export class QueryReconciler extends RunReconciler<QueryOutcome> {
  readonly name = 'query-runs';
  private readonly finalizer: QueryFinalizer;
  private readonly d: QueryReconcilerDeps;
  private readonly o: Required<QueryReconcilerOptions>;

  constructor(deps: QueryReconcilerDeps, opts: QueryReconcilerOptions = {}) {
    super(new Runs<QueryOutcome>(), 'query runs', deps.logger);
    this.d = deps;
    this.o = {
      purgeGraceMs: opts.purgeGraceMs ?? 5 * 60_000,
      purgeRetryInitialMs: opts.purgeRetryInitialMs ?? 200,
      purgeRetryMaxMs: opts.purgeRetryMaxMs ?? 30_000,
      purgeTimeoutMs: opts.purgeTimeoutMs ?? 10_000,
      maxConcurrentRuns: opts.maxConcurrentRuns ?? 256,
      drainMs: opts.drainMs ?? 20_000,
    };
    this.finalizer = new QueryFinalizer({ ...deps, runs: this.runs }, this.o);
  }

  /** Deleted queries whose purge has not completed yet, with what failed last (health, tests). */
  pendingPurges(): Array<{ uid: string; attempts: number; failed: string[] }> {
    return this.finalizer.pending();
  }

  override start(): void {
    this.#draining = false;
  }

  #draining = false;

  /** A graceful stop: no new run starts; the ones in flight get up to `drainMs` to finish. */
  async drain(): Promise<void> {
    this.#draining = true;
    const deadline = Date.now() + this.o.drainMs;
    if (this.runs.size)
      this.d.logger?.info({ running: this.runs.size, drainMs: this.o.drainMs }, 'draining query runs');
    while (this.runs.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  }

  protected async reconcileOnce(req: Request, ctx: ReconcileContext): Promise<ReconcileResult | undefined> {
    const { signal } = ctx;
    const cached = await ignoreNotFound(this.d.client.get(Kinds.Query, req, { signal }));
    if (!cached) {
      // Gone without our finalizer (someone removed it): stop its run, nothing else can be done.
      const orphan = this.runs.byRequest(req);
      if (orphan) {
        this.runs.abort(orphan, 'deleted');
        this.runs.finish(orphan.uid);
      }
      return undefined;
    }
    if (cached.metadata.deletionTimestamp) return this.finalizer.finalize(cached, ctx);
    const q = await addFinalizer(this.d.client, Kinds.Query, cached, QUERY_FINALIZER, signal);
    const phase = q.status?.phase ?? 'pending';
    if (TERMINAL_PHASES.includes(phase)) return this.expire(q, ctx);
    const run = this.runs.get(q.metadata.uid);
    if (run) return this.tend(q, run, ctx);
    // Waiting for decisions: no run anywhere (the pause ended it); decided → resumed (waiting.ts).
    if (phase === 'input-required') return this.waiting(q, req, ctx);
    // Our final write may simply not have reached the cache yet; its watch event reconciles again.
    if (this.runs.recentlyFinished(q.metadata.uid)) return undefined;
    if (phase === 'pending') return this.dispatch(q, req, ctx);
    if (phase === 'running') return this.orphaned(q, ctx);
    return undefined;
  }

  /**
   * Starts a pending query. No status is written here: a query that ends within
   * RUNNING_STATUS_DELAY_MS goes from pending straight to its final status (one write); a longer one
   * is marked running after that delay (see execute). Runs are registered by uid before anything
   * awaits, so one process never starts a query twice.
   */
  private async dispatch(
    q: Query,
    req: Request,
    ctx: ReconcileContext,
  ): Promise<ReconcileResult | undefined> {
    const engine = this.d.engine;
    if (!engine) return undefined; // no engine in this process: someone else runs queries
    if (q.spec.cancel) {
      const status = endedWithoutRun(q, 'canceled', 'canceled before it started', new Date());
      await this.writeFinal(q, status, ctx.signal, true);
      return undefined;
    }
    // Stopping: the next leader starts it (the lease is released once the runs in flight end).
    if (this.#draining) return { requeueAfterMs: 1000 };
    // Its Memory or an MCPServer is not resolved yet: it waits, pending (dependencies.ts).
    const blocker = engine.waitsFor?.(q);
    if (blocker) {
      const step = dependencyStep(q, blocker, new Date());
      const waitingFor = `${blocker.kind}/${blocker.name}`;
      if (step.kind === 'timeout') {
        ctx.logger.warn({ waitingFor }, 'query timed out waiting for a dependency');
        await this.writeFinal(q, step.status, ctx.signal, true);
        return undefined;
      }
      if (step.kind === 'wait') {
        if (step.status) {
          ctx.logger.info({ waitingFor, reason: blocker.reason }, 'query waits for a dependency');
          await this.writeFinal(q, step.status, ctx.signal, true);
        }
        return { requeueAfterMs: step.requeueAfterMs };
      }
    }
    if (this.runs.size >= this.o.maxConcurrentRuns) return { requeueAfterMs: 1000 };
    const run = this.runs.start(q.metadata.uid ?? '', req);
    const log = ctx.logger.child({ uid: q.metadata.uid });
    const input = typeof q.spec.input === 'string' ? q.spec.input : JSON.stringify(q.spec.input);
    log.info({ target: q.spec.target, input: truncateForLog(input) }, 'query dispatched to the engine');
    void this.execute(engine, q, run, log, false, spentWaiting(q, Date.now()));
    return undefined;
  }

  /**
   * An input-required query: decisions recorded, or, once all are there, claimed and resumed by the
   * engine from its checkpoint. The claim is the conditional `running` write: only one succeeds.
   */
  private async waiting(q: Query, req: Request, ctx: ReconcileContext): Promise<ReconcileResult | undefined> {
    const engine = this.d.engine;
    if (!engine) return undefined;
    // Stopping: decisions wait for the next leader.
    if (this.#draining) return { requeueAfterMs: 1000 };
    if (!q.spec.cancel && this.runs.size >= this.o.maxConcurrentRuns) return { requeueAfterMs: 1000 };
    const log = ctx.logger.child({ uid: q.metadata.uid });
    const step = await tendWaiting(q, {
      client: this.d.client,
      recorder: this.d.recorder,
      log,
      signal: ctx.signal,
    });
    if (step.kind === 'wait') return { requeueAfterMs: step.requeueAfterMs };
    if (step.kind === 'recorded') return undefined; // its watch event reconciles again
    const run = this.runs.start(q.metadata.uid ?? '', req);
    if (q.spec.cancel) this.runs.abort(run, 'canceled');
    log.info({ approvals: step.query.status?.approvals?.length ?? 0 }, 'query resumed after its decisions');
    void this.execute(engine, step.query, run, log, true);
    return undefined;
  }

  private async execute(
    engine: QueryEngine,
    q: Query,
    run: QueryRun,
    log: Logger,
    resumed = false,
    spentMs = 0,
  ): Promise<void> {
    // A resumed run was claimed with phase running already: nothing more to write while it runs.
    const live = new RunningStatus({
      client: this.d.client,
      query: q,
      run,
      stillRunning: () => !resumed && this.runs.isCurrent(run) && !run.outcome,
      log,
    });
    try {
      run.outcome = await engine.run(q, {
        signal: run.ctl.signal,
        onConversation: (conversationId) => live.conversation(conversationId),
        ...(spentMs > 0 ? { spentMs } : {}),
      });
    } catch (err) {
      run.outcome = { phase: 'error', message: `engine failed: ${(err as Error).message}` };
    }
    live.stop();
    const o = run.outcome;
    log.info(
      {
        phase: o.phase,
        ms: Date.now() - run.startedAt,
        output: o.phase === 'done' ? truncateForLog(o.content) : undefined,
        message: o.phase === 'done' || o.phase === 'input-required' ? undefined : o.message,
      },
      'query run ended',
    );
    this.runs.notifyEnded(run);
  }

  /** A query this process runs: write its outcome once there is one, pass a cancel on. */
  private async tend(q: Query, run: QueryRun, ctx: ReconcileContext): Promise<ReconcileResult | undefined> {
    if (run.outcome) {
      // A running status still in flight must land before the final one, never after it.
      await run.statusWrite;
      const o = run.outcome;
      if (o.phase === 'input-required') {
        // The run is over; the Query waits (its deadlines bring it back: waiting()).
        await this.writeFinal(q, waitingStatus(q, o, new Date(), run.startedAt), ctx.signal, false);
        this.runs.finish(run.uid);
        return undefined;
      }
      await this.writeFinal(q, finishedStatus(q, o, new Date(), run.startedAt), ctx.signal, false);
      this.runs.finish(run.uid);
      return ttlRequeue(q, new Date());
    }
    if (q.spec.cancel) this.runs.abort(run, 'canceled');
    return undefined;
  }

  /**
   * `running` with no run in this process: a previous leader (or this process before a restart)
   * was running it and its outcome is lost. Failed, not re-run: it may have had effects (tool
   * calls) that a second run would repeat. A query that never got as far as `running` is re-run.
   */
  private async orphaned(q: Query, ctx: ReconcileContext): Promise<ReconcileResult | undefined> {
    ctx.logger.warn('failing an orphaned running query');
    const status = endedWithoutRun(q, 'error', ORPHANED_MESSAGE, new Date());
    await this.writeFinal(q, status, ctx.signal, true);
    return undefined;
  }

  /** The final status; conditional when it must not overwrite a status someone wrote since. */
  private async writeFinal(
    q: Query,
    status: Record<string, unknown>,
    signal: AbortSignal,
    conditional: boolean,
  ): Promise<void> {
    const version = conditional ? { resourceVersion: q.metadata.resourceVersion } : {};
    await ignoreNotFound(patchStatus(this.d.client, Kinds.Query, q, status, { signal, ...version }));
  }

  /** Deletes a finished Query `spec.ttl` after completion; the deletion runs the purge. */
  private async expire(q: Query, ctx: ReconcileContext): Promise<ReconcileResult | undefined> {
    const next = ttlRequeue(q, completedAt(q));
    if ((next.requeueAfterMs ?? 0) > 0) return next;
    ctx.logger.info({ ttl: q.spec.ttl }, 'TTL expired; deleting');
    // The uid precondition: never delete a new Query that took the expired one's name.
    const key = { namespace: q.metadata.namespace, name: q.metadata.name };
    await ignoreNotFound(
      this.d.client.delete(Kinds.Query, key, { preconditions: { uid: q.metadata.uid }, signal: ctx.signal }),
    );
    return undefined;
  }
}
