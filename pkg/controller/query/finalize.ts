import type { KubeConfig } from '@kubernetes/client-node';
import { QUERY_FINALIZER, type Query } from '../../api/index.ts';
import type { QueryEngine, ResourceLookup } from '../../engine/contract.ts';
import { jitteredBackoff } from '../../kube/backoff.ts';
import type { ReconcileResult } from '../../kube/controller.ts';
import type { EventRecorder } from '../../kube/events.ts';
import { hasFinalizer, removeFinalizer } from '../../kube/objects.ts';
import type { Logger } from '../../log/index.ts';
import { type PurgeStep, purgeEvents, purgeMessages } from './purge.ts';
import type { Runs } from './runs.ts';
import { formatDuration } from './status.ts';

export interface FinalizerDeps {
  kc: KubeConfig;
  lookup: ResourceLookup;
  engine?: QueryEngine;
  brokerUrl?: string;
  recorder: EventRecorder;
  logger: Logger;
  runs: Runs;
  onPurged?(seconds: number, complete: boolean): void;
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

  async finalize(q: Query, signal: AbortSignal): Promise<ReconcileResult | undefined> {
    const uid = q.metadata.uid ?? '';
    if (!hasFinalizer(q, QUERY_FINALIZER)) {
      this.purges.delete(uid);
      return undefined;
    }
    const deletedAt = Date.parse(String(q.metadata.deletionTimestamp));
    const age = Date.now() - deletedAt;
    const graceLeft = this.o.purgeGraceMs - age;
    const state = this.purges.get(uid) ?? { attempts: 0, flushed: false };
    this.purges.set(uid, state);
    const run = this.d.runs.get(uid);
    if (run && !run.outcome && graceLeft > 0) {
      // Purge only after the run stopped writing; its end re-enqueues the key.
      this.d.runs.abort(run, 'deleted');
      return { requeueAfterMs: graceLeft };
    }
    const ranHere = !!run || this.d.runs.recentlyFinished(uid);
    if (run) this.d.runs.finish(uid);
    if (ranHere && !state.flushed) await this.flushEngine();
    state.flushed = true;
    const deps = { lookup: this.d.lookup, brokerUrl: this.d.brokerUrl, timeoutMs: this.o.purgeTimeoutMs };
    const [messages, events] = await Promise.all([
      state.messages?.done ? state.messages : purgeMessages(deps, q, signal),
      state.events?.done ? state.events : purgeEvents(deps, q, signal),
    ]);
    Object.assign(state, { messages, events });
    const key = `${q.metadata.namespace}/${q.metadata.name}`;
    if (messages.done && events.done) {
      await removeFinalizer(this.d.kc, 'queries', q, QUERY_FINALIZER, signal);
      this.purges.delete(uid);
      this.d.onPurged?.(age / 1000, true);
      this.d.logger.info(
        { query: key, attempts: state.attempts + 1 },
        'broker data purged; finalizer released',
      );
      return undefined;
    }
    const failed = [messages, events].filter((s) => !s.done);
    if (graceLeft <= 0) {
      const what = failed.map((s) => `${s.target}: ${s.error}`).join('; ');
      await this.d.recorder.record(q, {
        type: 'Warning',
        reason: 'PurgeIncomplete',
        message: `finalizer released after the ${formatDuration(this.o.purgeGraceMs)} grace period; not purged: ${what}`,
      });
      await removeFinalizer(this.d.kc, 'queries', q, QUERY_FINALIZER, signal);
      this.purges.delete(uid);
      this.d.onPurged?.(age / 1000, false);
      this.d.logger.warn(
        { query: key, notPurged: what },
        'purge incomplete after grace period; finalizer released',
      );
      return undefined;
    }
    const delay = jitteredBackoff(state.attempts++, this.o.purgeRetryInitialMs, this.o.purgeRetryMaxMs);
    this.d.logger.warn(
      {
        query: key,
        attempt: state.attempts,
        retryInMs: Math.min(delay, graceLeft),
        failed: failed.map((s) => s.error),
      },
      'purge failed; retrying',
    );
    return { requeueAfterMs: Math.min(delay, graceLeft) };
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
