import type { Logger } from '../log/index.ts';
import { sleep } from './backoff.ts';
import { ignoreNotFound, isAlreadyExists, isConflict } from './client/helpers.ts';
import type { Client } from './client/types.ts';
import { CoreKinds, type KindRef } from './kinds.ts';

export interface LeaderElectionOptions {
  client: Client;
  namespace: string;
  name: string;
  /** Unique per process, e.g. `<hostname>_<random>`. */
  identity: string;
  /** How long a standby waits after the last observed renewal before taking over. Default 15 s. */
  leaseDurationMs?: number;
  /** The leader gives up when it could not renew for this long. Default 10 s. */
  renewDeadlineMs?: number;
  /** Pause between attempts to acquire or renew. Default 2 s. */
  retryPeriodMs?: number;
  onStartedLeading(): void;
  onStoppedLeading(): void;
  onNewLeader?(identity: string): void;
  logger?: Logger;
}

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

interface Lease {
  apiVersion: 'coordination.k8s.io/v1';
  kind: 'Lease';
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec: LeaseSpec;
}

const LeaseRef = CoreKinds.Lease as KindRef<Lease>;

/** Lease times are MicroTime: RFC 3339 with exactly six fractional digits. */
const microTime = (ms: number) => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

/**
 * Leader election on a coordination.k8s.io/v1 Lease, as client-go does it: expiry is judged by the
 * LOCAL time at which the lease record was last seen to change (no clock-skew assumptions), a
 * leader that cannot renew within the renew deadline steps down at once (a timer, so a hung
 * request cannot delay it), and a graceful stop releases the lease so a standby takes over at once.
 */
export class LeaderElector {
  private readonly o: Required<Omit<LeaderElectionOptions, 'onNewLeader' | 'logger'>> &
    Pick<LeaderElectionOptions, 'onNewLeader' | 'logger'>;
  private leading = false;
  private stopped = true;
  private loop: Promise<void> | undefined;
  private wake: AbortController | undefined;
  private observed: { key: string; at: number } | undefined;
  private lastLease: Lease | undefined;
  private deadline: NodeJS.Timeout | undefined;
  private knownLeader: string | undefined;

  constructor(opts: LeaderElectionOptions) {
    this.o = {
      ...opts,
      leaseDurationMs: opts.leaseDurationMs ?? 15_000,
      renewDeadlineMs: opts.renewDeadlineMs ?? 10_000,
      retryPeriodMs: opts.retryPeriodMs ?? 2_000,
    };
    if (this.o.renewDeadlineMs >= this.o.leaseDurationMs) {
      throw new Error('leader election: renewDeadline must be shorter than leaseDuration');
    }
  }

  get isLeader(): boolean {
    return this.leading;
  }

  get leader(): string | undefined {
    return this.knownLeader;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.loop = this.run();
  }

  /** Stops campaigning; a leader releases the lease (best effort) after stepping down. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.wake?.abort();
    await this.loop;
    if (this.leading) {
      this.stepDown('stopping');
      await this.release().catch((err) => this.o.logger?.warn({ err }, 'could not release the lease'));
    }
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let ok = false;
      try {
        ok = await this.tryAcquireOrRenew();
      } catch (err) {
        this.o.logger?.warn({ err: (err as Error).message, lease: this.o.name }, 'lease request failed');
      }
      if (this.stopped) return;
      if (ok) {
        this.armDeadline();
        if (!this.leading) {
          this.leading = true;
          this.setLeader(this.o.identity);
          this.o.logger?.info({ lease: this.o.name, identity: this.o.identity }, 'became leader');
          this.o.onStartedLeading();
        }
      } else if (this.leading && this.lastLease?.spec.holderIdentity !== this.o.identity && this.lastLease) {
        this.stepDown(`lease taken by ${this.lastLease.spec.holderIdentity}`);
      }
      this.wake = new AbortController();
      // client-go jitters the standby's retry by up to 20 % so standbys do not stampede.
      const jitter = this.leading ? 1 : 1 + Math.random() * 0.2;
      await sleep(this.o.retryPeriodMs * jitter, this.wake.signal);
    }
  }

  private armDeadline(): void {
    clearTimeout(this.deadline);
    this.deadline = setTimeout(() => this.stepDown('renew deadline exceeded'), this.o.renewDeadlineMs);
    this.deadline.unref();
  }

  private stepDown(reason: string): void {
    clearTimeout(this.deadline);
    if (!this.leading) return;
    this.leading = false;
    this.o.logger?.warn({ lease: this.o.name, identity: this.o.identity, reason }, 'lost leadership');
    this.o.onStoppedLeading();
  }

  private setLeader(identity: string | undefined): void {
    if (identity && identity !== this.knownLeader) {
      this.knownLeader = identity;
      this.o.onNewLeader?.(identity);
    }
  }

  private get key() {
    return { namespace: this.o.namespace, name: this.o.name };
  }

  /** Each call is bounded, so a hung request cannot outlive the renew deadline. */
  private get call() {
    return { signal: AbortSignal.timeout(Math.max(500, this.o.renewDeadlineMs / 2)) };
  }

  /** false when another candidate wrote first (409): the lease is theirs this round. */
  private async write(op: () => Promise<Lease>): Promise<boolean> {
    try {
      this.lastLease = await op();
      return true;
    } catch (err) {
      if (isConflict(err) || isAlreadyExists(err)) return false;
      throw err;
    }
  }

  private spec(now: number, prev?: LeaseSpec): LeaseSpec {
    const mine = prev?.holderIdentity === this.o.identity;
    return {
      holderIdentity: this.o.identity,
      leaseDurationSeconds: Math.max(1, Math.ceil(this.o.leaseDurationMs / 1000)),
      acquireTime: mine && prev?.acquireTime ? prev.acquireTime : microTime(now),
      renewTime: microTime(now),
      leaseTransitions: (prev?.leaseTransitions ?? 0) + (mine || !prev ? 0 : 1),
    };
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = Date.now();
    const lease = await ignoreNotFound(this.o.client.get(LeaseRef, this.key, this.call));
    if (!lease) {
      const fresh: Lease = {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: this.key,
        spec: this.spec(now),
      };
      return this.write(() => this.o.client.create(LeaseRef, fresh, this.call));
    }
    this.lastLease = lease;
    const s = lease.spec ?? {};
    const key = JSON.stringify([s.holderIdentity, s.renewTime, s.leaseTransitions]);
    if (this.observed?.key !== key) this.observed = { key, at: now };
    this.setLeader(s.holderIdentity);
    const heldByOther = !!s.holderIdentity && s.holderIdentity !== this.o.identity;
    const expiresAt = this.observed.at + (s.leaseDurationSeconds ?? 0) * 1000;
    if (heldByOther && expiresAt > now) return false;
    return this.write(() =>
      this.o.client.replace(LeaseRef, { ...lease, spec: this.spec(now, s) }, this.call),
    );
  }

  private async release(): Promise<void> {
    const lease = await ignoreNotFound(this.o.client.get(LeaseRef, this.key, this.call));
    if (lease?.spec?.holderIdentity !== this.o.identity) return;
    const now = microTime(Date.now());
    const spec = { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: now };
    await this.o.client.replace(LeaseRef, { ...lease, spec }, this.call);
  }
}
