import type { KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { Memory } from '../api/index.ts';
import type { InformerCache } from '../kube/cache.ts';
import { memoryRefers, resolveMemory } from './memory.ts';

function fakeCache(objects: Record<string, KubernetesObject>, watched?: string): InformerCache {
  return {
    get: (plural: string, ns: string, name: string) => objects[`${plural}/${ns}/${name}`],
    covers: (ns: string) => watched === undefined || ns === watched,
  } as unknown as InformerCache;
}
const mem = (spec: Memory['spec']): Memory =>
  ({
    apiVersion: 'berth.dev/v1alpha1',
    kind: 'Memory',
    metadata: { name: 'm', namespace: 'ns' },
    spec,
  }) as Memory;
const svc = (ports: number[]) => ({
  metadata: { name: 's', namespace: 'ns' },
  spec: { ports: ports.map((port) => ({ port })) },
});

describe('resolveMemory', () => {
  it('takes a direct URL and rejects what is not absolute http(s)', () => {
    expect(resolveMemory(fakeCache({}), mem({ address: { value: 'https://m/v1' } }))).toMatchObject({
      phase: 'ready',
      address: 'https://m/v1',
    });
    expect(resolveMemory(fakeCache({}), mem({ address: { value: 'm:80' } })).phase).toBe('error');
  });

  it('resolves a service ref to its cluster DNS name with the path', () => {
    const r = resolveMemory(
      fakeCache({ 'services/ns/s': svc([80, 8080]) }),
      mem({ address: { valueFrom: { serviceRef: { name: 's', port: 8080, path: '/api' } } } }),
    );
    expect(r).toMatchObject({ phase: 'ready', address: 'http://s.ns.svc.cluster.local:8080/api' });
  });

  it('reports a missing Service, a missing port, an unwatched namespace and missing header secrets', () => {
    const ref = (namespace?: string) =>
      mem({
        address: { valueFrom: { serviceRef: { name: 's', port: 80, ...(namespace ? { namespace } : {}) } } },
      });
    expect(resolveMemory(fakeCache({}), ref()).reason).toBe('ServiceNotFound');
    expect(resolveMemory(fakeCache({ 'services/ns/s': svc([81]) }), ref()).reason).toBe(
      'ServicePortNotFound',
    );
    expect(resolveMemory(fakeCache({}, 'ns'), ref('other')).reason).toBe('ServiceNotWatched');
    const withHeader = mem({
      address: { value: 'http://m' },
      headers: [{ name: 'x', valueFrom: { secretKeyRef: { name: 'sec', key: 'k' } } }],
    });
    expect(resolveMemory(fakeCache({}), withHeader).reason).toBe('SecretNotFound');
    expect(
      resolveMemory(
        fakeCache({ 'secrets/ns/sec': { metadata: {}, data: { k: 'dg==' } } as KubernetesObject }),
        withHeader,
      ).phase,
    ).toBe('ready');
  });

  it('knows which Services and Secrets a Memory refers to', () => {
    const m = mem({
      address: { valueFrom: { serviceRef: { name: 's', port: 80 } } },
      headers: [{ name: 'x', valueFrom: { secretKeyRef: { name: 'sec', key: 'k' } } }],
    });
    expect(memoryRefers(m, 'services', { metadata: { name: 's', namespace: 'ns' } })).toBe(true);
    expect(memoryRefers(m, 'services', { metadata: { name: 's', namespace: 'other' } })).toBe(false);
    expect(memoryRefers(m, 'secrets', { metadata: { name: 'sec', namespace: 'ns' } })).toBe(true);
  });
});
