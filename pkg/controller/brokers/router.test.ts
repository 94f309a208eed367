import type { V1Service } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { berthScheme } from '../../api/index.ts';
import { BrokerCredentials, ServiceToken } from '../../http/service-token/index.ts';
import { FakeClient } from '../../kube/client/index.ts';
import { CoreKinds, type KindRef, resourcePath } from '../../kube/kinds.ts';
import { createLogger } from '../../log/index.ts';
import { NamespaceBrokers } from './router.ts';
import { NamespaceTokens } from './tokens.ts';

const ServiceRef = CoreKinds.Service as KindRef<V1Service>;
const logger = createLogger({ level: 'silent' });

/** A TokenRequest double: what was asked, and a token naming its audience. */
function minter(opts: { fail?: boolean } = {}) {
  const asked: Array<{ path: string; namespace?: string; audiences: string[] }> = [];
  let n = 0;
  const client = {
    async create(
      ref: KindRef<unknown>,
      obj: { metadata?: { namespace?: string }; spec: { audiences: string[] } },
    ) {
      // The path the real client posts to: the core group's TokenRequest subresource.
      const path = resourcePath(ref, obj.metadata?.namespace);
      asked.push({ path, namespace: obj.metadata?.namespace, audiences: obj.spec.audiences });
      if (opts.fail) throw new Error('connect ECONNREFUSED');
      return { ...obj, status: { token: `tok-${obj.spec.audiences[0]}-${++n}` } };
    },
  };
  return { client: client as never, asked };
}

function service(namespace: string, spec: V1Service['spec']): V1Service {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name: 'berth-broker', namespace }, spec };
}

function setup(tokens?: NamespaceTokens) {
  const reader = new FakeClient({ scheme: berthScheme() });
  reader.seed(
    ServiceRef,
    service('team-a', { ports: [{ port: 9090 }, { port: 80 }] }),
    service('team-b', { type: 'ExternalName', externalName: '127.0.0.1', ports: [{ port: 41234 }] }),
    // The configured broker's own Service: its namespace's queries stay on the configured route.
    service('berth-system', { ports: [{ port: 80 }] }),
  );
  const credentials = new BrokerCredentials(
    new ServiceToken('/nonexistent'),
    ['http://berth-broker'],
    'berth-system',
  );
  const router = new NamespaceBrokers({
    reader,
    fallback: { url: 'http://berth-broker/', namespace: 'berth-system' },
    credentials,
    tokens,
    logger,
  });
  return { router, reader };
}

describe('NamespaceBrokers', () => {
  it('routes a namespace to its berth-broker Service (port 80, ExternalName as its external name), else to the configured broker', async () => {
    const { router } = setup();
    expect((await router.route('team-a'))?.url).toBe('http://berth-broker.team-a.svc.cluster.local');
    expect((await router.route('team-b'))?.url).toBe('http://127.0.0.1:41234');
    const fallback = await router.route('team-c');
    expect(fallback).toMatchObject({ url: 'http://berth-broker', namespace: 'berth-system' });
    expect(await router.route('berth-system')).toBe(fallback);
  });

  it('sees a broker added, moved and removed at the next route', async () => {
    const { router, reader } = setup();
    expect((await router.route('team-c'))?.url).toBe('http://berth-broker');
    await reader.create(ServiceRef, service('team-c', { ports: [{ port: 80 }] }));
    expect((await router.route('team-c'))?.url).toBe('http://berth-broker.team-c.svc.cluster.local');
    await reader.delete(ServiceRef, { namespace: 'team-c', name: 'berth-broker' });
    await reader.create(
      ServiceRef,
      service('team-c', { type: 'ExternalName', externalName: 'b.example', ports: [{ port: 81 }] }),
    );
    expect((await router.route('team-c'))?.url).toBe('http://b.example:81');
    await reader.delete(ServiceRef, { namespace: 'team-c', name: 'berth-broker' });
    expect((await router.route('team-c'))?.url).toBe('http://berth-broker');
  });

  it("gives each namespace's broker a token minted for that namespace alone, never the process token", async () => {
    const m = minter();
    const tokens = new NamespaceTokens({
      client: m.client,
      account: { namespace: 'berth-system', name: 'berth-controller' },
    });
    const { router } = setup(tokens);
    const a = await router.route('team-a');
    const b = await router.route('team-b');
    expect(a?.headers()).toEqual({ authorization: 'Bearer tok-berth-broker:team-a-1' });
    expect(b?.headers()).toEqual({ authorization: 'Bearer tok-berth-broker:team-b-2' });
    // Minted once per namespace, for the controller's own account.
    await router.route('team-a');
    expect(m.asked).toEqual([
      {
        path: '/api/v1/namespaces/berth-system/serviceaccounts/berth-controller/token',
        namespace: 'berth-system',
        audiences: ['berth-broker:team-a'],
      },
      {
        path: '/api/v1/namespaces/berth-system/serviceaccounts/berth-controller/token',
        namespace: 'berth-system',
        audiences: ['berth-broker:team-b'],
      },
    ]);
    // The configured broker gets the process's own token (none here: no file), not a minted one.
    expect((await router.route('team-c'))?.headers()).toEqual({});
  });

  it('a failed mint leaves the route without a credential and tries again later', async () => {
    const m = minter({ fail: true });
    const tokens = new NamespaceTokens({
      client: m.client,
      account: { namespace: 'berth-system', name: 'berth-controller' },
    });
    const { router } = setup(tokens);
    const a = await router.route('team-a');
    expect(a?.url).toBe('http://berth-broker.team-a.svc.cluster.local');
    expect(a?.headers()).toEqual({});
    expect(m.asked.length).toBeGreaterThanOrEqual(2);
  });
});

describe('NamespaceTokens', () => {
  it('renews a token after 80 % of its life, keeping the old one meanwhile', async () => {
    let now = 1_000_000;
    const m = minter();
    const tokens = new NamespaceTokens({
      client: m.client,
      account: { namespace: 'berth-system', name: 'berth-controller' },
      expirationSeconds: 1000,
      now: () => now,
    });
    expect(await tokens.token('a')).toBe('tok-berth-broker:a-1');
    now += 700_000;
    expect(tokens.current('a')).toBe('tok-berth-broker:a-1');
    expect(m.asked).toHaveLength(1);
    now += 150_000; // past 80 %
    expect(tokens.current('a')).toBe('tok-berth-broker:a-1');
    await new Promise((r) => setImmediate(r));
    expect(tokens.current('a')).toBe('tok-berth-broker:a-2');
    now += 2_000_000; // both expired
    expect(tokens.current('a')).toBeUndefined();
  });
});
