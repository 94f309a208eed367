import type { QueryOutcome } from '../../engine/contract.ts';
import type { Request } from '../../kube/controller.ts';

export type AbortReason = 'canceled' | 'deleted' | 'shutdown';

export interface Run<O = QueryOutcome> {
  uid: string;
  req: Request;
  ctl: AbortController;
  startedAt: number;
  outcome?: O;
  abortReason?: AbortReason;
  /** The running-status write in flight, if any (the final write waits for it). */
  statusWrite?: Promise<void>;
}

/**
 * Engine runs in flight in THIS process, by Query uid. A Query whose status says `running` with no
 * entry here was orphaned by a previous leader. Finished uids are remembered for a while, because
 * the cache may still show `running` after our own final status write. Generic over the outcome:
 * Evaluations keep their evaluator calls here too (`noun` names them in abort reasons).
 */
export class Runs<O = QueryOutcome> {
  private readonly byUid = new Map<string, Run<O>>();
  private readonly finished = new Map<string, number>();
  private readonly rememberMs: number;
  private readonly noun: string;

  constructor(rememberMs = 10 * 60_000, noun = 'query') {
    this.rememberMs = rememberMs;
    this.noun = noun;
  }

  get size(): number {
    return this.byUid.size;
  }

  get(uid: string | undefined): Run<O> | undefined {
    return uid ? this.byUid.get(uid) : undefined;
  }

  start(uid: string, req: Request): Run<O> {
    const run: Run<O> = { uid, req, ctl: new AbortController(), startedAt: Date.now() };
    this.byUid.set(uid, run);
    return run;
  }

  /** Whether `run` is still the registered run (not cleared by a shutdown or replaced). */
  isCurrent(run: Run<O>): boolean {
    return this.byUid.get(run.uid) === run;
  }

  abort(run: Run<O>, reason: AbortReason): void {
    if (run.abortReason) return;
    run.abortReason = reason;
    run.ctl.abort(new Error(`${this.noun} ${reason}`));
  }

  /** The run of a Query by namespace/name (its object may already be gone from the cache). */
  byRequest(req: Request): Run<O> | undefined {
    for (const run of this.byUid.values())
      if (run.req.namespace === req.namespace && run.req.name === req.name) return run;
    return undefined;
  }

  finish(uid: string): void {
    this.byUid.delete(uid);
    const now = Date.now();
    this.finished.set(uid, now + this.rememberMs);
    if (this.finished.size > 10_000) {
      for (const [u, until] of this.finished) if (until < now) this.finished.delete(u);
    }
  }

  recentlyFinished(uid: string | undefined): boolean {
    const until = uid ? this.finished.get(uid) : undefined;
    return until !== undefined && until > Date.now();
  }

  /** Aborts and forgets every run (shutdown or lost lease): their outcomes are never written. */
  abortAll(reason: AbortReason): number {
    const n = this.byUid.size;
    for (const run of this.byUid.values()) this.abort(run, reason);
    this.byUid.clear();
    return n;
  }
}
