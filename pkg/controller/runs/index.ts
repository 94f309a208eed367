/**
 * What the Query and Evaluation reconcilers share: the registry of the runs this process has in
 * flight (engine runs, evaluator calls), the source that wakes a reconciler when one ends, and the
 * ordered status writes of a run while it runs.
 */
import type { Request, Source } from '../../kube/controller.ts';
import type { Logger } from '../../log/index.ts';

/**
 * A run only outlasting this is marked `running`: most end sooner and go from pending to their
 * final status in one API write instead of two — each write also fans out a watch event to every
 * informer.
 */
export const RUNNING_STATUS_DELAY_MS = 250;

export type AbortReason = 'canceled' | 'deleted' | 'shutdown';

export interface Run<O> {
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
 * Runs in flight in THIS process, by object uid. An object whose status says `running` with no
 * entry here was orphaned by a previous leader. Finished uids are remembered for a while, because
 * the cache may still show `running` after our own final status write. `noun` names the runs in
 * abort reasons.
 */
export class Runs<O> {
  private readonly byUid = new Map<string, Run<O>>();
  private readonly finished = new Map<string, number>();
  private readonly endedListeners = new Set<(req: Request) => void>();
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

  /** Requests of the runs that ended (a controller's source): their outcome is to be written. */
  readonly ended: Source = (enqueue) => {
    this.endedListeners.add(enqueue);
    return () => void this.endedListeners.delete(enqueue);
  };

  /** `run` has its outcome: its object is reconciled again, unless the run is no longer this process's. */
  notifyEnded(run: Run<O>): void {
    if (this.isCurrent(run)) for (const enqueue of this.endedListeners) enqueue(run.req);
  }

  abort(run: Run<O>, reason: AbortReason): void {
    if (run.abortReason) return;
    run.abortReason = reason;
    run.ctl.abort(new Error(`${this.noun} ${reason}`));
  }

  /** The run of an object by namespace/name (the object may already be gone from the cache). */
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

/**
 * A status write of a run in flight, after the ones queued before it: the final write awaits
 * `run.statusWrite`, so a running status never lands after it. A failure is logged, not thrown.
 */
export function queueStatusWrite(run: Run<unknown>, write: () => Promise<unknown>, log: Logger): void {
  const previous = run.statusWrite ?? Promise.resolve();
  run.statusWrite = previous.then(() =>
    write().then(
      () => undefined,
      (err) => log.warn({ err }, 'could not record the running status'),
    ),
  );
}
