import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { ListBodyCache } from './list-body-cache.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const liveArrayBuffers = () => {
  gc();
  gc();
  return process.memoryUsage().arrayBuffers;
};

const render = (items: KubernetesObject[]) => JSON.stringify({ items, count: items.length });
const agent = (name: string): KubernetesObject => ({ kind: 'Agent', metadata: { name } });
/** What a server allocates between two list requests: small Buffers, taken from Node's shared pool. */
const otherTraffic = () => {
  for (let i = 0; i < 80; i++) Buffer.from('x'.repeat(1000));
};

describe('ListBodyCache', () => {
  it('answers the same bytes while the listed objects are the same, and new ones when they change', () => {
    const cache = new ListBodyCache();
    const items = [agent('a')];
    const first = cache.body('ns', items, render);
    expect(cache.body('ns', items, render)).toBe(first);
    expect(first.gzip()).toBe(first.gzip());
    const changed = cache.body('ns', [agent('a')], render);
    expect(changed).not.toBe(first);
    expect(changed.etag).toBe(first.etag);
  });

  it('keeps nothing for empty lists: a namespace named by the caller leaves no entry behind', () => {
    const cache = new ListBodyCache();
    for (let i = 0; i < 5000; i++) cache.body(`made-up-${i}`, [], render).gzip();
    expect(cache.size).toBe(0);
    expect(cache.bytes).toBe(0);
  });

  it('an entry holds its own bytes, not a slab of the Buffer pool shared with other requests', () => {
    const cache = new ListBodyCache();
    const before = liveArrayBuffers();
    for (let i = 0; i < 512; i++) {
      otherTraffic();
      cache.body(`ns-${i}`, [agent(`a-${i}`)], render).gzip();
    }
    const held = liveArrayBuffers() - before;
    // ~100 bytes of JSON and ~100 of gzip per entry; a pooled slice would pin 64 KiB (32 MiB in all).
    expect(held).toBeLessThan(1024 * 1024);
    expect(cache.size).toBe(512);
  });

  it('is bounded by bytes as well as by entries', () => {
    const cache = new ListBodyCache({ maxEntries: 512, maxBytes: 64 * 1024 });
    const big = Array.from({ length: 100 }, (_, i) => agent(`agent-with-a-long-name-${i}`));
    for (let i = 0; i < 100; i++) cache.body(`ns-${i}`, big, render).gzip();
    expect(cache.bytes).toBeLessThanOrEqual(64 * 1024);
    expect(cache.size).toBeGreaterThan(0);
    // The newest entry is the one kept.
    expect(cache.body('ns-99', big, render)).toBe(cache.body('ns-99', big, render));
  });
});
