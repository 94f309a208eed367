import type { KubeConfig } from '@kubernetes/client-node';
import { QUERY_FINALIZER, type Query, TERMINAL_PHASES } from '../../api/index.ts';
import type { QueryEngine, ResourceLookup } from '../../engine/contract.ts';
import { parseDuration } from '../../engine/duration.ts';
import type { InformerCache } from '../../kube/cache.ts';
import type { ReconcileResult } from '../../kube/controller.ts';
import type { EventRecorder } from '../../kube/events.ts';
import { addFinalizer, deleteObject, hasFinalizer, patchStatus } from '../../kube/objects.ts';
import { type Logger, truncateForLog } from '../../log/index.ts';
import { QueryFinalizer } from './finalize.ts';
import { type Run, Runs } from './runs.ts';
import { endedWithoutRun, finishedStatus, runningStatus } from './status.ts';

export const ORPHANED_MESSAGE = 'controller restarted while the query was running';
const DAY_MS = 86_400_000;
const CONVERSATION_PATCH_DELAY_MS = 250;

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
}

export interface QueryReconcilerDeps {
  kc: KubeConfig;
  cache: InformerCache;
  lookup: ResourceLookup;
  engine?: QueryEngine;
  brokerUrl?: string;
  recorder: EventRecorder;
  logger: Logger;
  enqueue(key: string): void;
  onPurged?(seconds: number, complete: boolean): void;
}

const isConflict = (err: unknown) => (err as { reason?: string })?.reason === 'Conflict';
const isNotFound = (err: unknown) => (err as { reason?: string })?.reason === 'NotFound';

/**
 * Owns the Query lifecycle: finalizer, dispatch of pending queries to the engine (phase running,
 * AbortSignal for cancel/deletion/shutdown, outcome → status), failing queries orphaned by a
 * previous leader, TTL deletion, and the broker purge that the finalizer guards.
 */
export class QueryReconciler {
  readonly runs = new Runs();
  private readonly finalizer: QueryFinalizer;
  private readonly d: QueryReconcilerDeps;
  private readonly o: Required<QueryReconcilerOptions>;

  constructor(deps: QueryReconcilerDeps, opts: QueryReconcilerOptions = {}) {
    this.d = deps;
    this.o = {
      purgeGraceMs: opts.purgeGraceMs ?? 5 * 60_000,
      purgeRetryInitialMs: opts.purgeRetryInitialMs ?? 200,
      purgeRetryMaxMs: opts.purgeRetryMaxMs ?? 30_000,
      purgeTimeoutMs: opts.purgeTimeoutMs ?? 10_000,
      maxConcurrentRuns: opts.maxConcurrentRuns ?? 256,
    };
    this.finalizer = new QueryFinalizer({ ...deps, runs: this.runs }, this.o);
  }

  /** Deleted queries whose purge has not completed yet, with what failed last (health, tests). */
  pendingPurges(): Array<{ uid: string; attempts: number; failed: string[] }> {
    return this.finalizer.pending();
  }

  /** Stops every engine run without writing its outcome (the next leader fails them as orphaned). */
  stopRuns(): number {
    return this.runs.abortAll('shutdown');
  }

  async reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | undefined> {
    try {
      return await this.reconcileOnce(key, signal);
    } catch (err) {
      // Someone (often our own earlier write) changed the object: retry against the fresher cache.
      if (isConflict(err)) return { requeue: true };
      throw err;
    }
  }

  private async reconcileOnce(key: string, signal: AbortSignal): Promise<ReconcileResult | undefined> {
    const [ns = '', name = ''] = key.split('/');
    const cached = this.d.cache.get('queries', ns, name) as Query | undefined;
    if (!cached) {
      // Gone without our finalizer (someone removed it): stop its run, nothing else can be done.
      const orphan = this.runs.byKey(key);
      if (orphan) {
        this.runs.abort(orphan, 'deleted');
        this.runs.finish(orphan.uid);
      }
      return undefined;
    }
    if (cached.metadata.deletionTimestamp) return this.finalizer.finalize(cached, signal);
    let q = cached;
    if (!hasFinalizer(q, QUERY_FINALIZER)) {
      q = await addFinalizer(this.d.kc, 'queries', q, QUERY_FINALIZER, signal);
    }
    const phase = q.status?.phase ?? 'pending';
    if (phase === 'pending') return this.dispatch(q, key, signal);
    if (phase === 'running') return this.running(q, signal);
    if (TERMINAL_PHASES.includes(phase)) return this.expire(q, signal);
    return undefined;
  }

  private async dispatch(q: Query, key: string, signal: AbortSignal): Promise<ReconcileResult | undefined> {
    const engine = this.d.engine;
    if (!engine) return undefined; // no engine in this process: someone else runs queries
    if (q.spec.cancel) {
      await this.writeFinal(
        q,
        endedWithoutRun(q, 'canceled', 'canceled before it started', new Date()),
        signal,
        true,
      );
      return undefined;
    }
    if (this.runs.get(q.metadata.uid)) return undefined; // our own running write is not cached yet
    if (this.runs.size >= this.o.maxConcurrentRuns) return { requeueAfterMs: 1000 };
    // Conditional on the version we saw, so a stale cache can never start a query twice.
    const running = await patchStatus<Query>(this.d.kc, 'queries', q, runningStatus(q, new Date()), {
      resourceVersion: q.metadata.resourceVersion,
      signal,
    });
    const run = this.runs.start(q.metadata.uid ?? '', key);
    const log = this.d.logger.child({ query: key, uid: q.metadata.uid });
    log.info(
      {
        target: q.spec.target,
        input: truncateForLog(typeof q.spec.input === 'string' ? q.spec.input : JSON.stringify(q.spec.input)),
      },
      'query dispatched to the engine',
    );
    void this.execute(engine, running, run, log);
    return undefined;
  }

  private async execute(engine: QueryEngine, q: Query, run: Run, log: Logger): Promise<void> {
    // The conversation id is written while running only if the run outlasts a short delay: a quick
    // query carries it in its final status, saving an API write (and a watch event) per query.
    let conversationTimer: NodeJS.Timeout | undefined;
    try {
      run.outcome = await engine.run(q, {
        signal: run.ctl.signal,
        onConversation: (conversationId) => {
          conversationTimer = setTimeout(() => {
            if (!this.runs.isCurrent(run) || run.outcome) return;
            patchStatus(this.d.kc, 'queries', q, {
              conversationId,
              a2a: { contextId: conversationId },
            }).catch((err) => log.warn({ err }, 'could not record the conversation id'));
          }, CONVERSATION_PATCH_DELAY_MS);
        },
      });
    } catch (err) {
      run.outcome = { phase: 'error', message: `engine failed: ${(err as Error).message}` };
    }
    clearTimeout(conversationTimer);
    const o = run.outcome;
    log.info(
      {
        phase: o.phase,
        ms: Date.now() - run.startedAt,
        output: o.phase === 'done' ? truncateForLog(o.content) : undefined,
        message: o.phase === 'done' ? undefined : o.message,
      },
      'query run ended',
    );
    if (this.runs.isCurrent(run)) this.d.enqueue(run.key);
  }

  private async running(q: Query, signal: AbortSignal): Promise<ReconcileResult | undefined> {
    const run = this.runs.get(q.metadata.uid);
    if (run?.outcome) {
      await this.writeFinal(q, finishedStatus(q, run.outcome, new Date()), signal, false);
      this.runs.finish(run.uid);
      return this.ttlRequeue(q, new Date());
    }
    if (run) {
      if (q.spec.cancel) this.runs.abort(run, 'canceled');
      return undefined;
    }
    // Our final write may simply not have reached the cache yet; its watch event reconciles again.
    if (this.runs.recentlyFinished(q.metadata.uid)) return undefined;
    this.d.logger.warn(
      { query: `${q.metadata.namespace}/${q.metadata.name}` },
      'failing an orphaned running query',
    );
    await this.writeFinal(q, endedWithoutRun(q, 'error', ORPHANED_MESSAGE, new Date()), signal, true);
    return undefined;
  }

  private async writeFinal(
    q: Query,
    status: Record<string, unknown>,
    signal: AbortSignal,
    conditional: boolean,
  ) {
    try {
      await patchStatus(this.d.kc, 'queries', q, status, {
        signal,
        ...(conditional ? { resourceVersion: q.metadata.resourceVersion } : {}),
      });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  private ttlMs(q: Query): number {
    try {
      return parseDuration(q.spec.ttl ?? '720h');
    } catch {
      return 720 * 3_600_000;
    }
  }

  private ttlRequeue(q: Query, completedAt: Date): ReconcileResult {
    const remaining = completedAt.getTime() + this.ttlMs(q) - Date.now();
    return { requeueAfterMs: Math.max(0, Math.min(remaining, DAY_MS)) };
  }

  /** Deletes a finished Query `spec.ttl` after completion; the deletion runs the purge. */
  private async expire(q: Query, signal: AbortSignal): Promise<ReconcileResult | undefined> {
    const base = q.status?.completionTime ?? q.metadata.creationTimestamp;
    const completedAt = base ? new Date(base) : new Date();
    const next = this.ttlRequeue(q, completedAt);
    if ((next.requeueAfterMs ?? 0) > 0) return next;
    this.d.logger.info(
      { query: `${q.metadata.namespace}/${q.metadata.name}`, ttl: q.spec.ttl },
      'TTL expired; deleting',
    );
    await deleteObject(this.d.kc, 'queries', q.metadata.namespace, q.metadata.name, {
      uid: q.metadata.uid,
      signal,
    });
    return undefined;
  }
}
