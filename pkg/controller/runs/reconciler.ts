import {
  type ReconcileContext,
  type ReconcileResult,
  type Reconciler,
  type Request,
  requeueOnConflict,
  type Source,
} from '../../kube/controller.ts';
import type { Runnable } from '../../kube/manager.ts';
import type { Logger } from '../../log/index.ts';
import type { Runs } from './index.ts';

/**
 * A reconciler whose objects run off its workers (a Query's engine run, an Evaluation's evaluator
 * call), as the Query and Evaluation reconcilers do. Level-based, with conflicts requeued quietly;
 * a Runnable that needs the lease: stopping it (shutdown, lost lease) aborts this process's runs
 * without writing their outcomes, which the next leader deals with.
 */
export abstract class RunReconciler<O> implements Reconciler, Runnable {
  abstract readonly name: string;
  readonly needLeaderElection = true;
  readonly runs: Runs<O>;
  /** Requests of objects whose run ended: their outcome is to be written (the controller's source). */
  readonly runEnded: Source;
  /** For what happens outside any reconcile (runs aborted on shutdown). */
  protected readonly logger: Logger | undefined;
  /** What the runs are, in the shutdown's log line: `query runs`, `evaluator calls`. */
  readonly #what: string;

  constructor(runs: Runs<O>, what: string, logger: Logger | undefined) {
    this.runs = runs;
    this.runEnded = runs.ended;
    this.#what = what;
    this.logger = logger;
  }

  start(): void {}

  stop(): void {
    const aborted = this.runs.abortAll('shutdown');
    if (aborted) this.logger?.warn({ aborted }, `stopped reconciling: ${this.#what} aborted`);
  }

  reconcile(req: Request, ctx: ReconcileContext): Promise<ReconcileResult | undefined> {
    return requeueOnConflict(() => this.reconcileOnce(req, ctx));
  }

  protected abstract reconcileOnce(req: Request, ctx: ReconcileContext): Promise<ReconcileResult | undefined>;
}
