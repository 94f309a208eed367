import { Kinds, QUERY_FINALIZER, type Query } from '../../api/index.ts';
import type { BrokerRouter } from '../../engine/brokers.ts';
import type { QueryEngine, QueryOutcome } from '../../engine/contract.ts';
import { jitteredBackoff } from '../../kube/backoff.ts';
import { type Client, hasFinalizer, removeFinalizer } from '../../kube/client/index.ts';
import type { ReconcileContext, ReconcileResult } from '../../kube/controller.ts';
import type { EventRecorder } from '../../kube/events.ts';
import type { Runs } from '../runs/index.ts';
import { formatDuration } from '../runs/status.ts';
import { type PurgeStep, purgeEvents, purgeMessages } from './purge.ts';

export interface FinalizerDeps {
  client: Client;
  engine?: QueryEngine;
  /** The broker of each namespace (purges); `brokerUrl`: one for all. */
  brokers?: BrokerRouter;
  brokerUrl?: string;
  recorder: EventRecorder;
  runs: Runs<QueryOutcome>;
  onPurged?(seconds: number, complete: boolean): void;
  fetch?: typeof fetch;
}

export interface FinalizerOptions {
  purgeGraceMs: number;
  purgeRetryInitialMs: number;
  purgeRetryMaxMs: number;
  purgeTimeoutMs: number;
}

interface PurgeState {
  attempts: number;
  messages?: PurgeStep;
  events?: PurgeStep;
  flushed: boolean;
}

/**
 * The deletion side of a Query: stop its run, purge its broker data (messages via its Memory,
 * events on the broker) with retries, and release the finalizer — after the grace period even when
 * the purge failed, with a Warning event saying what was left behind.
 */
export class QueryFinalizer {
  private readonly purges = new Map<string, PurgeState>();
  private readonly d: FinalizerDeps;
  private readonly o: FinalizerOptions;

  constructor(deps: FinalizerDeps, opts: FinalizerOptions) {
    this.d = deps;
    this.o = opts;
  }

  pending(): Array<{ uid: string; attempts: number; failed: string[] }> {
    return [...this.purges].map(([uid, s]) => ({
      uid,
      attempts: s.attempts,
      failed: [s.messages, s.events].filter((x) => x && !x.done).map((x) => `${x?.target}: ${x?.error}`),
    }));
  }

  async finalize(q: Query, ctx: ReconcileContext): Promise<ReconcileResult | undefined> {
    const uid = q.metadata.uid ?? '';
    if (!hasFinalizer(q, QUERY_FINALIZER)) {
      this.purges.delete(uid);
      return undefined;
    }
    const age = Date.now() - Date.parse(String(q.metadata.deletionTimestamp));
    const graceLeft = this.o.purgeGraceMs - age;
    const state = this.purges.get(uid) ?? { attempts: 0, flushed: false };
    this.purges.set(uid, state);
    const run = this.d.runs.get(uid);
    if (run && !run.outcome && graceLeft > 0) {
      // Purge only after the run stopped writing; its end re-enqueues the request.
      this.d.runs.abort(run, 'deleted');
      return { requeueAfterMs: graceLeft };
    }
    const ranHere = !!run || this.d.runs.recentlyFinished(uid);
    if (run) this.d.runs.finish(uid);
    if (ranHere && !state.flushed) await this.flushEngine();
    state.flushed = true;
    await this.purge(q, state, ctx.signal);
    const failed = [state.messages, state.events].filter((s): s is PurgeStep => !s?.done);
    if (failed.length === 0) {
      await this.release(q, age, true, ctx.signal);
      ctx.logger.info({ attempts: state.attempts + 1 }, 'broker data purged; finalizer released');
      return undefined;
    }
    if (graceLeft <= 0) return this.giveUp(q, age, failed, ctx);
    const delay = jitteredBackoff(state.attempts++, this.o.purgeRetryInitialMs, this.o.purgeRetryMaxMs);
    const retryInMs = Math.min(delay, graceLeft);
    const errors = failed.map((s) => `${s.target}: ${s.error}`);
    ctx.logger.warn({ attempt: state.attempts, retryInMs, failed: errors }, 'purge failed; retrying');
    return { requeueAfterMs: retryInMs };
  }

  /** Purges what is not purged yet (a retry does not repeat a step that succeeded). */
  private async purge(q: Query, state: PurgeState, signal: AbortSignal): Promise<void> {
    const deps = {
      reader: this.d.client,
      brokers: this.d.brokers,
      brokerUrl: this.d.brokerUrl,
      timeoutMs: this.o.purgeTimeoutMs,
      ...(this.d.fetch ? { fetch: this.d.fetch } : {}),
    };
    const [messages, events] = await Promise.all([
      state.messages?.done ? state.messages : purgeMessages(deps, q, signal),
      state.events?.done ? state.events : purgeEvents(deps, q, signal),
    ]);
    Object.assign(state, { messages, events });
  }

  /** The grace period is over: release anyway, and say in an Event what was left behind. */
  private async giveUp(q: Query, age: number, failed: PurgeStep[], ctx: ReconcileContext) {
    const what = failed.map((s) => `${s.target}: ${s.error}`).join('; ');
    await this.d.recorder.record(q, {
      type: 'Warning',
      reason: 'PurgeIncomplete',
      message: `finalizer released after the ${formatDuration(this.o.purgeGraceMs)} grace period; not purged: ${what}`,
    });
    await this.release(q, age, false, ctx.signal);
    ctx.logger.warn({ notPurged: what }, 'purge incomplete after grace period; finalizer released');
    return undefined;
  }

  private async release(q: Query, age: number, complete: boolean, signal: AbortSignal): Promise<void> {
    await removeFinalizer(this.d.client, Kinds.Query, q, QUERY_FINALIZER, signal);
    this.purges.delete(q.metadata.uid ?? '');
    this.d.onPurged?.(age / 1000, complete);
  }

  /** The engine sends events asynchronously: drain them first, or they could land after the purge. */
  private async flushEngine(): Promise<void> {
    const flush = (this.d.engine as { flush?: () => Promise<void> } | undefined)?.flush;
    if (!flush) return;
    await Promise.race([flush.call(this.d.engine), new Promise((r) => setTimeout(r, 5000).unref())]).catch(
      () => {},
    );
  }
}
