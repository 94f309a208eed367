import type { KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from '../log/index.ts';
import { jitteredBackoff, sleep } from './backoff.ts';
import type { Informer } from './informer.ts';

export interface SupervisorOptions {
  /** Restart backoff after a failure: jittered exponential, default 1 s → 30 s. */
  backoffInitialMs?: number;
  backoffMaxMs?: number;
  /** Relist when no event (object, bookmark or list) arrived for this long. Default 5 min. */
  watchdogMs?: number;
  /** Relist this often anyway, healing anything a watch missed. Default 30 min; 0 disables. */
  resyncMs?: number;
  logger?: Logger;
  random?: () => number;
}

export interface InformerHealth {
  name: string;
  synced: boolean;
  objects: number;
  /** Milliseconds since the last list, watch event or bookmark; null before the first list. */
  lastEventAgeMs: number | null;
  restarts: number;
  relists: number;
  /** Set while the informer is down and waiting to restart. */
  lastError?: string;
  failing: boolean;
}

/**
 * Keeps one informer running: restarts it with jittered backoff when it stops on an error (a
 * client-node-style informer stops on anything but 410), relists it when no event came for the
 * watchdog time (a silently dead connection) and periodically to heal missed events.
 */
export class SupervisedInformer<T extends KubernetesObject = KubernetesObject> {
  readonly name: string;
  readonly informer: Informer<T>;
  private readonly opts: Required<Omit<SupervisorOptions, 'logger'>> & { logger?: Logger };
  private ctl: AbortController | undefined;
  private loop: Promise<void> | undefined;
  private timers: NodeJS.Timeout[] = [];
  restarts = 0;
  relists = 0;
  private failures = 0;
  private lastError: string | undefined;
  private lastFailureAt = 0;

  constructor(name: string, informer: Informer<T>, opts: SupervisorOptions = {}) {
    this.name = name;
    this.informer = informer;
    this.opts = {
      backoffInitialMs: opts.backoffInitialMs ?? 1000,
      backoffMaxMs: opts.backoffMaxMs ?? 30_000,
      watchdogMs: opts.watchdogMs ?? 300_000,
      resyncMs: opts.resyncMs ?? 1_800_000,
      random: opts.random ?? Math.random,
      logger: opts.logger,
    };
  }

  start(): void {
    if (this.ctl) return;
    const ctl = new AbortController();
    this.ctl = ctl;
    this.loop = this.runLoop(ctl.signal);
    const { watchdogMs, resyncMs } = this.opts;
    this.timers.push(setInterval(() => this.checkWatchdog(), Math.max(50, Math.min(watchdogMs / 4, 10_000))));
    if (resyncMs > 0) this.timers.push(setInterval(() => this.resync('periodic resync'), resyncMs));
    for (const t of this.timers) t.unref();
  }

  async stop(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    this.ctl?.abort();
    await this.loop;
    this.ctl = undefined;
  }

  health(now = Date.now()): InformerHealth {
    const last = this.informer.lastEventAt;
    return {
      name: this.name,
      synced: this.informer.synced,
      objects: this.informer.size,
      lastEventAgeMs: last ? now - last : null,
      restarts: this.restarts,
      relists: this.relists,
      failing: this.failing,
      ...(this.failing && this.lastError ? { lastError: this.lastError } : {}),
    };
  }

  /** Down since the last failure: no list, event or watch connection succeeded after it. */
  get failing(): boolean {
    return this.lastFailureAt > this.informer.lastContactAt;
  }

  private resync(reason: string): void {
    if (this.failing) return; // down: the restart resumes or relists anyway
    this.relists++;
    this.opts.logger?.debug({ informer: this.name, reason }, 'relisting');
    this.informer.relist();
  }

  private checkWatchdog(): void {
    const last = this.informer.lastEventAt;
    if (last && Date.now() - last > this.opts.watchdogMs) {
      this.opts.logger?.warn(
        { informer: this.name, silentMs: Date.now() - last },
        'no event within the watchdog time; relisting',
      );
      // Counts as an event so a relist that itself hangs is retried only after another period.
      this.informer.lastEventAt = Date.now();
      this.resync('watchdog');
    }
  }

  private async runLoop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.informer.run(signal);
        return;
      } catch (err) {
        if (signal.aborted) return;
        // A failure after the API server answered again is a fresh incident: start the backoff over.
        if (this.informer.lastContactAt > this.lastFailureAt) this.failures = 0;
        this.lastFailureAt = Date.now();
        const delay = jitteredBackoff(
          this.failures++,
          this.opts.backoffInitialMs,
          this.opts.backoffMaxMs,
          this.opts.random,
        );
        this.restarts++;
        this.lastError = err instanceof Error ? err.message : String(err);
        this.opts.logger?.warn(
          { informer: this.name, err: this.lastError, retryInMs: delay, restarts: this.restarts },
          'informer stopped; restarting after backoff',
        );
        await sleep(delay, signal);
      }
    }
  }
}
