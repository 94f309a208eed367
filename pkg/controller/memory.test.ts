import { describe, expect, it } from 'vitest';
import { berthScheme, Kinds, type Memory } from '../api/index.ts';
import { FakeClient } from '../kube/client/index.ts';
import { CoreKinds } from '../kube/kinds.ts';
import { createLogger } from '../log/index.ts';
import { MemoryReconciler, memoryRefers, resolveMemory } from './memory.ts';

const ctx = () => ({ signal: new AbortController().signal, logger: createLogger({ level: 'silent' }) });
const mem = (spec: Memory['spec'], name = 'm'): Memory =>
  ({ apiVersion: 'berth.dev/v1alpha1', kind: 'Memory', metadata: { name, namespace: 'ns' }, spec }) as Memory;
const svc = (ports: number[], namespace = 'ns') => ({
  metadata: { name: 's', namespace },
  spec: { ports: ports.map((port) => ({ port })) },
});
const secret = {
  metadata: { name: 'sec', namespace: 'ns', labels: { 'berth.dev/usage': 'engine' } },
  data: { k: 'dg==' },
};
const serviceRef = (namespace?: string) =>
  mem({
    address: { valueFrom: { serviceRef: { name: 's', port: 80, ...(namespace ? { namespace } : {}) } } },
  });

function fake(...objs: Array<[typeof CoreKinds.Service | typeof CoreKinds.Secret, object]>) {
  const client = new FakeClient({ scheme: berthScheme() });
  for (const [ref, o] of objs) client.seed(ref, o);
  return client;
}

describe('resolveMemory', () => {
  it('takes a direct URL and rejects what is not absolute http(s)', async () => {
    const reader = fake();
    expect(await resolveMemory({ reader }, mem({ address: { value: 'https://m/v1' } }))).toMatchObject({
      phase: 'ready',
      address: 'https://m/v1',
    });
    expect((await resolveMemory({ reader }, mem({ address: { value: 'm:80' } }))).phase).toBe('error');
  });

  it('resolves a service ref to its cluster DNS name with the path', async () => {
    const r = await resolveMemory(
      { reader: fake([CoreKinds.Service, svc([80, 8080])]) },
      mem({ address: { valueFrom: { serviceRef: { name: 's', port: 8080, path: '/api' } } } }),
    );
    expect(r).toMatchObject({ phase: 'ready', address: 'http://s.ns.svc.cluster.local:8080/api' });
  });

  it('reports a missing Service, a missing port, an unwatched namespace and missing header secrets', async () => {
    expect((await resolveMemory({ reader: fake() }, serviceRef())).reason).toBe('ServiceNotFound');
    const wrongPort = { reader: fake([CoreKinds.Service, svc([81])]) };
    expect((await resolveMemory(wrongPort, serviceRef())).reason).toBe('ServicePortNotFound');
    const watched = { reader: fake(), watchNamespace: 'ns' };
    expect((await resolveMemory(watched, serviceRef('other'))).reason).toBe('ServiceNotWatched');
    const withHeader = mem({
      address: { value: 'http://m' },
      headers: [{ name: 'x', valueFrom: { secretKeyRef: { name: 'sec', key: 'k' } } }],
    });
    expect((await resolveMemory({ reader: fake() }, withHeader)).reason).toBe('SecretNotFound');
    const withSecret = { reader: fake([CoreKinds.Secret, secret]) };
    expect((await resolveMemory(withSecret, withHeader)).phase).toBe('ready');
  });

  it('refuses a header Secret that did not opt in to engine use, or never may, naming it and the fix', async () => {
    const withHeader = mem({
      address: { value: 'http://m' },
      headers: [{ name: 'x', valueFrom: { secretKeyRef: { name: 'sec', key: 'k' } } }],
    });
    const unlabelled = { ...secret, metadata: { name: 'sec', namespace: 'ns' } };
    expect(await resolveMemory({ reader: fake([CoreKinds.Secret, unlabelled]) }, withHeader)).toMatchObject({
      phase: 'error',
      reason: 'SecretNotUsable',
      message: 'header x: secret sec is not usable by the engine: add label berth.dev/usage=engine',
    });
    for (const never of [
      { ...secret, type: 'berth.dev/api-key' },
      { ...secret, type: 'kubernetes.io/service-account-token' },
      {
        ...secret,
        metadata: {
          ...secret.metadata,
          labels: { ...secret.metadata.labels, 'berth.dev/marketplace-credential': 'true' },
        },
      },
    ]) {
      const r = await resolveMemory({ reader: fake([CoreKinds.Secret, never]) }, withHeader);
      expect(r, JSON.stringify(never)).toMatchObject({ phase: 'error', reason: 'SecretNotUsable' });
      expect(r.message).not.toContain('dg==');
    }
  });

  it('knows which Services and Secrets a Memory refers to', () => {
    const m = mem({
      address: { valueFrom: { serviceRef: { name: 's', port: 80 } } },
      headers: [{ name: 'x', valueFrom: { secretKeyRef: { name: 'sec', key: 'k' } } }],
    });
    expect(memoryRefers(m, 'Service', { metadata: { name: 's', namespace: 'ns' } })).toBe(true);
    expect(memoryRefers(m, 'Service', { metadata: { name: 's', namespace: 'other' } })).toBe(false);
    expect(memoryRefers(m, 'Secret', { metadata: { name: 'sec', namespace: 'ns' } })).toBe(true);
  });
});

describe('MemoryReconciler', () => {
  it('writes phase, address and a Ready condition once; an unchanged resolution writes nothing', async () => {
    const client = fake();
    client.seed(Kinds.Memory, mem({ address: { value: 'http://broker:8080' } }));
    const r = new MemoryReconciler(client);
    await r.reconcile({ namespace: 'ns', name: 'm' }, ctx());
    const m = await client.get(Kinds.Memory, { namespace: 'ns', name: 'm' });
    expect(m.status).toMatchObject({ phase: 'ready', lastResolvedAddress: 'http://broker:8080' });
    expect(m.status?.conditions?.[0]).toMatchObject({ type: 'Ready', status: 'True', reason: 'Resolved' });
    await r.reconcile({ namespace: 'ns', name: 'm' }, ctx());
    expect(client.actions.map((a) => `${a.verb}:${a.subresource ?? ''}`)).toEqual(['patch:status']);
  });

  it('keeps the last good address when the Service loses its port', async () => {
    const client = fake([CoreKinds.Service, svc([80])]);
    client.seed(Kinds.Memory, serviceRef());
    const r = new MemoryReconciler(client);
    const req = { namespace: 'ns', name: 'm' };
    await r.reconcile(req, ctx());
    await client.patch(
      CoreKinds.Service,
      { namespace: 'ns', name: 's' },
      {
        type: 'merge',
        patch: { spec: { ports: [{ port: 81 }] } },
      },
    );
    await r.reconcile(req, ctx());
    const m = await client.get(Kinds.Memory, req);
    expect(m.status).toMatchObject({
      phase: 'error',
      lastResolvedAddress: 'http://s.ns.svc.cluster.local:80',
      message: 'Service ns/s has no port 80 (ports: 81)',
    });
  });

  it('a missing or deleted Memory is nothing to do', async () => {
    const client = fake();
    expect(
      await new MemoryReconciler(client).reconcile({ namespace: 'ns', name: 'gone' }, ctx()),
    ).toBeUndefined();
    expect(client.actions).toEqual([]);
  });

  it('maps a Service or Secret change to the Memories referring to it', async () => {
    const client = fake();
    client.seed(Kinds.Memory, serviceRef(), mem({ address: { value: 'http://x' } }, 'direct'));
    client.seed(Kinds.Memory, {
      ...mem(
        {
          address: { value: 'http://x' },
          headers: [{ name: 'h', valueFrom: { secretKeyRef: { name: 'sec', key: 'k' } } }],
        },
        'auth',
      ),
    });
    const r = new MemoryReconciler(client);
    expect(await r.requestsFor('Service', svc([80]))).toEqual([{ namespace: 'ns', name: 'm' }]);
    expect(await r.requestsFor('Secret', secret)).toEqual([{ namespace: 'ns', name: 'auth' }]);
    expect(await r.requestsFor('Service', svc([80], 'other'))).toEqual([]);
  });
});
