import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../log/index.ts';
import type { InformerCache } from './cache.ts';
import { FakeClient } from './client/fake.ts';
import { Scheme } from './kinds.ts';
import { Manager, type ManagerOptions, type Runnable } from './manager.ts';

const log: string[] = [];
afterEach(() => {
  log.length = 0;
});

/** A shared cache that is always synced: the manager starts it and never stops it. */
const sharedCache = () =>
  ({
    start: () => log.push('cache:start'),
    waitForSync: async () => {},
    health: () => [],
    stop: async () => log.push('cache:stop'),
  }) as unknown as InformerCache;

const runnable = (name: string, needLeaderElection: boolean, fail = false): Runnable => ({
  name,
  needLeaderElection,
  start: async () => {
    log.push(`${name}:start`);
    if (fail) throw new Error(`${name} failed`);
  },
  stop: () => void log.push(`${name}:stop`),
});

const manager = (o: Partial<ManagerOptions> = {}) =>
  new Manager({
    kc: new KubeConfig(),
    scheme: new Scheme(),
    cache: sharedCache(),
    leaderElection: false,
    logger: createLogger({ level: 'silent' }),
    ...o,
  });

const until = async (what: string, cond: () => boolean, timeoutMs = 5000) => {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe('Manager', () => {
  it('starts the cache, then runnables without the lease, then leader runnables; stops in reverse', async () => {
    const m = manager();
    m.add(runnable('controller-a', true));
    m.add(runnable('probes', false));
    m.add(runnable('controller-b', true));
    await m.start();
    expect(m.isLeader()).toBe(true);
    await m.stop();
    expect(m.isLeader()).toBe(false);
    expect(log).toEqual([
      'cache:start',
      'probes:start',
      'controller-a:start',
      'controller-b:start',
      'controller-b:stop',
      'controller-a:stop',
      'probes:stop', // the shared cache is its owner's to stop
    ]);
  });

  it('a runnable failing to start stops what started (itself included) and rethrows', async () => {
    const m = manager();
    m.add(runnable('probes', false));
    m.add(runnable('metrics', false, true));
    m.add(runnable('controller', true));
    await expect(m.start()).rejects.toThrow('metrics failed');
    expect(log).toEqual(['cache:start', 'probes:start', 'metrics:start', 'metrics:stop', 'probes:stop']);
  });

  it('with leader election, only the lease holder runs leader runnables; a stop hands over at once', async () => {
    const client = new FakeClient();
    const fast = {
      name: 'lease',
      namespace: 'ns',
      leaseDurationMs: 3000,
      renewDeadlineMs: 2000,
      retryPeriodMs: 20,
    };
    const a = manager({ client, leaderElection: { ...fast, identity: 'a' } });
    const b = manager({ client, leaderElection: { ...fast, identity: 'b' } });
    a.add(runnable('work-a', true));
    b.add(runnable('work-b', true));
    await a.start();
    await until('a leads', () => log.includes('work-a:start'));
    await b.start();
    await until('b sees a', () => b.leader() === 'a');
    expect(b.isLeader()).toBe(false);
    const t0 = Date.now();
    await a.stop(); // releases the lease: b need not wait out the lease duration
    await until('b leads', () => log.includes('work-b:start'));
    expect(Date.now() - t0).toBeLessThan(fast.leaseDurationMs);
    await b.stop();
    expect(log.filter((l) => l.startsWith('work'))).toEqual([
      'work-a:start',
      'work-a:stop',
      'work-b:start',
      'work-b:stop',
    ]);
  });
});
