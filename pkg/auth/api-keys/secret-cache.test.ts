import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { API_KEY_SECRET_TYPE } from '../../api/group.ts';
import { InformerCache } from '../../kube/cache.ts';
import { CoreKinds } from '../../kube/kinds.ts';
import { secretSourceFrom } from './secret-cache.ts';

const OBJECTS: Array<KubernetesObject & { type?: string }> = [
  { kind: 'Secret', type: API_KEY_SECRET_TYPE, metadata: { name: 'pk-svc-aaaaaaaa', namespace: 'a' } },
  { kind: 'Secret', type: 'Opaque', metadata: { name: 'db', namespace: 'a' } },
  { kind: 'Secret', type: API_KEY_SECRET_TYPE, metadata: { name: 'pk-svc-bbbbbbbb', namespace: 'b' } },
];

let server: Server | undefined;
let cache: InformerCache | undefined;
afterEach(async () => {
  await cache?.stop();
  await new Promise((r) => server?.close(r));
});

/** An API server that lists OBJECTS and holds every watch open without events. */
async function apiServer(): Promise<KubeConfig> {
  server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    if (req.url?.includes('watch=1')) return void res.writeHead(200).flushHeaders();
    res.end(
      JSON.stringify({
        kind: 'SecretList',
        apiVersion: 'v1',
        metadata: { resourceVersion: '1' },
        items: OBJECTS,
      }),
    );
  });
  await new Promise<void>((r) => server?.listen(0, '127.0.0.1', r));
  const kc = new KubeConfig();
  kc.loadFromOptions({
    // Plain HTTP: client-node allows it only with TLS verification off.
    clusters: [
      {
        name: 'c',
        server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        skipTLSVerify: true,
      },
    ],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

describe('secretSourceFrom', () => {
  it('reads a shared informer cache: only API key Secrets of the instance namespace', async () => {
    cache = InformerCache.of({ kc: await apiServer() }, [{ ref: CoreKinds.Secret }]);
    cache.start();
    await cache.waitForSync(5000);
    const source = secretSourceFrom(cache, 'a');
    expect(source.list().map((s) => s.metadata?.name)).toEqual(['pk-svc-aaaaaaaa']);
    expect(source.get?.('pk-svc-aaaaaaaa')?.metadata?.namespace).toBe('a');
    expect(source.get?.('db')).toBeUndefined();
    expect(source.get?.('pk-svc-bbbbbbbb')).toBeUndefined();
  });
});
