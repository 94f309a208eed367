import type { KubernetesObject } from '@kubernetes/client-node';
import { EVALUATION_TERMINAL_PHASES, type Evaluation, Kinds } from '../../api/index.ts';
import { durationField } from '../../engine/duration.ts';
import type { EngineFetch } from '../../engine/http.ts';
import { type Client, ignoreNotFound, patchStatus } from '../../kube/client/index.ts';
import type { ReconcileContext, ReconcileResult, Request } from '../../kube/controller.ts';
import type { Logger } from '../../log/index.ts';
import { Runs } from '../runs/index.ts';
import { RunReconciler } from '../runs/reconciler.ts';
import { type EvaluationRun, execute } from './execute.ts';
import { type EvaluationOutcome, endedWithoutCall, finishedStatus, waitingStatus } from './status.ts';
import { prepareEvaluator, prepareSubject } from './subject.ts';
import type { EvaluationTelemetry } from './telemetry.ts';

export interface EvaluationReconcilerOptions {
  /**
   * How long after an Evaluation's creation a missing Query or Evaluator is waited for before the
   * evaluation errors: objects applied together reach the cache in any order. Default 5 s.
   */
  missingGraceMs?: number;
  /** Backoff between evaluator retries (jittered exponential). Default 250 ms → 5 s. */
  retryInitialMs?: number;
  retryMaxMs?: number;
  /** Evaluator calls at once; more evaluations wait. Default 256. */
  maxConcurrentRuns?: number;
}

export interface EvaluationReconcilerDeps {
  /** Reads (the informer cache in a controller) and status writes. */
  client: Client;
  /** HTTP client of the evaluator calls. */
  fetch: EngineFetch;
  telemetry: EvaluationTelemetry;
  /** The namespace the controller watches (Services outside it cannot be resolved). */
  watchNamespace?: string;
  /** For what happens outside any reconcile (calls aborted on shutdown). */
  logger?: Logger;
}

const DEFAULT_TIMEOUT = '5m';

/**
 * Runs Evaluations: once the subject (input/output, or a finished Query) and the Evaluator are
 * ready, calls the evaluator off the worker (aborted on cancel, deletion, shutdown or loss of the
 * lease) and writes phase, score and verdict. A run reconciler like the Query reconciler; stopping
 * it aborts the calls without writing their outcomes: the next leader calls again.
 */
export class EvaluationReconciler extends RunReconciler<EvaluationOutcome> {
  readonly name = 'evaluation-runs';
  private readonly d: EvaluationReconcilerDeps;
  private readonly o: Required<EvaluationReconcilerOptions>;

  constructor(deps: EvaluationReconcilerDeps, opts: EvaluationReconcilerOptions = {}) {
    super(new Runs<EvaluationOutcome>(10 * 60_000, 'evaluation'), 'evaluator calls', deps.logger);
    this.d = deps;
    this.o = {
      missingGraceMs: opts.missingGraceMs ?? 5000,
      retryInitialMs: opts.retryInitialMs ?? 250,
      retryMaxMs: opts.retryMaxMs ?? 5000,
      maxConcurrentRuns: opts.maxConcurrentRuns ?? 256,
    };
  }

  /** Unfinished evaluations that a change of this Query or Evaluator may move on. */
  async requestsFor(kind: 'Query' | 'Evaluator', obj: KubernetesObject): Promise<Request[]> {
    const namespace = obj.metadata?.namespace;
    if (!namespace) return [];
    const { items } = await this.d.client.list(Kinds.Evaluation, { namespace });
    const refers = (e: Evaluation) =>
      kind === 'Query'
        ? e.spec.type === 'query' && e.spec.config?.queryRef?.name === obj.metadata?.name
        : e.spec.evaluator?.name === obj.metadata?.name;
    return items
      .filter((e) => refers(e) && !EVALUATION_TERMINAL_PHASES.includes(e.status?.phase ?? 'pending'))
      .map((e) => ({ namespace, name: e.metadata.name }));
  }

  protected async reconcileOnce(req: Request, ctx: ReconcileContext): Promise<ReconcileResult | undefined> {
    const e = await ignoreNotFound(this.d.client.get(Kinds.Evaluation, req, { signal: ctx.signal }));
    // Deleted (or replaced by a new object of the same name): its call is of no use any more.
    const stale = this.runs.byRequest(req);
    if (stale && stale.uid !== e?.metadata.uid) this.stopRun(stale, 'deleted', ctx);
    if (!e) return undefined;
    const run = this.runs.get(e.metadata.uid);
    if (e.metadata.deletionTimestamp) {
      if (run) this.stopRun(run, 'deleted', ctx);
      return undefined;
    }
    if (EVALUATION_TERMINAL_PHASES.includes(e.status?.phase ?? 'pending')) return undefined;
    if (run) return this.tend(e, run, ctx);
    // Our final write may not have reached the cache yet; its watch event reconciles again.
    if (this.runs.recentlyFinished(e.metadata.uid)) return undefined;
    // Pending, or running with no call in this process (a previous leader's): evaluators only
    // score, so calling again is safe where a Query's re-run would not be.
    return this.dispatch(e, req, ctx);
  }

  private stopRun(run: EvaluationRun, reason: 'deleted', ctx: ReconcileContext): void {
    ctx.logger.info({ uid: run.uid }, 'evaluation deleted; aborting its evaluator call');
    this.runs.abort(run, reason);
    this.runs.finish(run.uid);
  }

  private async dispatch(e: Evaluation, req: Request, ctx: ReconcileContext) {
    if (e.spec.cancel) {
      await this.writeFinal(
        e,
        endedWithoutCall(e, 'canceled', 'canceled before it started', new Date()),
        ctx,
      );
      return undefined;
    }
    let timeoutMs: number;
    try {
      timeoutMs = durationField(e.spec.timeout, DEFAULT_TIMEOUT, 'spec.timeout');
    } catch (err) {
      await this.writeFinal(e, endedWithoutCall(e, 'error', (err as Error).message, new Date()), ctx);
      return undefined;
    }
    const subject = await prepareSubject(this.d.client, e);
    if (subject.state !== 'ready') return this.notReady(e, subject, ctx);
    const target = await prepareEvaluator(this.d.client, e, this.d.watchNamespace);
    if (target.state !== 'ready') return this.notReady(e, target, ctx);
    if (this.runs.size >= this.o.maxConcurrentRuns) return { requeueAfterMs: 1000 };
    const run = this.runs.start(e.metadata.uid ?? '', req);
    const log = ctx.logger.child({ uid: e.metadata.uid });
    const deps = { ...this.d, ...this.o };
    const stillRunning = () => this.runs.isCurrent(run) && !run.outcome;
    const x = { e, run, subject: subject.value, target: target.value, timeoutMs, log, stillRunning };
    void execute(deps, { ...x, timeoutText: e.spec.timeout ?? DEFAULT_TIMEOUT }).then((outcome) => {
      run.outcome = outcome;
      this.runs.notifyEnded(run);
    });
    return undefined;
  }

  /** Waits (message in status), retries a missing object within the grace period, or fails. */
  private async notReady(
    e: Evaluation,
    p: { state: 'wait' | 'missing' | 'error'; message: string },
    ctx: ReconcileContext,
  ): Promise<ReconcileResult | undefined> {
    const now = new Date();
    if (p.state === 'missing') {
      const age = now.getTime() - Date.parse(e.metadata.creationTimestamp ?? now.toISOString());
      const left = this.o.missingGraceMs - age;
      // The watch of Queries and Evaluators re-enqueues it sooner once the object appears.
      if (left > 0) return { requeueAfterMs: left };
    }
    if (p.state === 'wait') {
      if (e.status?.phase === 'pending' && e.status.message === p.message) return undefined;
      await this.writeStatus(e, waitingStatus(e, p.message, now), ctx);
      return undefined;
    }
    ctx.logger.info({ reason: p.message }, 'evaluation cannot run');
    await this.writeFinal(e, endedWithoutCall(e, 'error', p.message, now), ctx);
    return undefined;
  }

  /** An evaluation this process is calling the evaluator for: write its outcome, pass a cancel on. */
  private async tend(e: Evaluation, run: EvaluationRun, ctx: ReconcileContext) {
    if (run.outcome) {
      // A running-status write still in flight must land before the final one, never after it.
      await run.statusWrite;
      const status = finishedStatus(e, run.outcome, new Date(), run.startedAt);
      await ignoreNotFound(patchStatus(this.d.client, Kinds.Evaluation, e, status, { signal: ctx.signal }));
      this.runs.finish(run.uid);
      return undefined;
    }
    if (e.spec.cancel) {
      ctx.logger.info('evaluation canceled; aborting its evaluator call');
      this.runs.abort(run, 'canceled');
    }
    return undefined;
  }

  /** A status decided from what was read: conditional, so it never overwrites a newer one. */
  private async writeStatus(e: Evaluation, status: Record<string, unknown>, ctx: ReconcileContext) {
    const opts = { signal: ctx.signal, resourceVersion: e.metadata.resourceVersion };
    await ignoreNotFound(patchStatus(this.d.client, Kinds.Evaluation, e, status, opts));
  }

  private async writeFinal(e: Evaluation, status: Record<string, unknown>, ctx: ReconcileContext) {
    await this.writeStatus(e, status, ctx);
    // Remembered like a finished call: a lagging cache must not make it look pending again.
    this.runs.finish(e.metadata.uid ?? '');
  }
}
