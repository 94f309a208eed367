/**
 * The kube-apiserver restarted under the API service (issue 18 item 1; the controller's side is
 * test/controller/apiserver-restart.test.ts). A steady load of creates and reads runs through the
 * real API service while kube-apiserver is killed and started again (etcd keeps the state). What
 * clients see: reads keep being answered from the informer cache; writes are 503
 * `kubernetes_unavailable` with `Retry-After` while it is down — never a 500 — and succeed again
 * once it is back; every acknowledged (201) create is there afterwards, and the cache follows
 * changes made after the restart. Own control plane: killing its API server disturbs no other file.
 */
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHARED_CACHE } from '../../pkg/api/index.ts';
import { type RunningGateway, startGatewayServer } from '../../pkg/gateway/server.ts';
import { InformerCache } from '../../pkg/kube/cache.ts';
import type { GuardedChild } from '../../pkg/kube/controlplane/child.ts';
import { type ControlPlane, projectRoot, startControlPlane } from '../../pkg/kube/controlplane/index.ts';
import { createLogger } from '../../pkg/log/index.ts';
import { killApiServer } from '../controller/apiserver.ts';
import { kubeConfigAt } from '../support/kube.ts';
import { eventually } from '../support/wait.ts';

const ns = 'restart-api';
let cp: ControlPlane;
let restarted: GuardedChild | undefined;
let cache: InformerCache;
let api: RunningGateway;

const kc = (context?: string) => kubeConfigAt(cp.kubeconfigPath, context);

beforeAll(async () => {
  cp = await startControlPlane({ crdDir: join(projectRoot(), 'crds') });
  await kc()
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name: ns } } });
  const logger = createLogger({ level: 'silent' });
  const gw = kc('berth-local-gateway');
  // Fast informer restarts so the test is quick; production defaults are 1 s → 30 s.
  const supervisor = { backoffInitialMs: 200, backoffMaxMs: 1000 };
  cache = InformerCache.of({ kc: gw, namespace: ns, logger, supervisor }, SHARED_CACHE);
  cache.start();
  await cache.waitForSync(30_000);
  api = await startGatewayServer({
    kc: gw,
    namespace: ns,
    cache,
    logger,
    port: 0,
    host: '127.0.0.1',
    env: { AUTH_MODE: 'open' },
  });
}, 180_000);

afterAll(async () => {
  await api?.close();
  await cache?.stop();
  await restarted?.stop();
  await cp?.stop();
});

interface Seen {
  phase: 'up' | 'down' | 'back';
  op: 'create' | 'list';
  status: number;
  code?: string;
  retryAfter?: string | null;
}

describe('kube-apiserver restarted under the API service', () => {
  it('reads go on from the cache, writes are 503 + Retry-After meanwhile, no acknowledged write is lost', async () => {
    const seen: Seen[] = [];
    const acked: string[] = [];
    let phase: Seen['phase'] = 'up';
    let stop = false;
    let n = 0;
    const load = (async () => {
      while (!stop) {
        const name = `a-${n++}`;
        const created = await fetch(`${api.url}/v1/namespaces/${ns}/agents`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name, spec: { prompt: 'p' } }),
        });
        const body = (await created.json()) as { error?: { code: string } };
        seen.push({
          phase,
          op: 'create',
          status: created.status,
          code: body.error?.code,
          retryAfter: created.headers.get('retry-after'),
        });
        if (created.status === 201) acked.push(name);
        const listed = await fetch(`${api.url}/v1/namespaces/${ns}/agents`);
        await listed.arrayBuffer();
        seen.push({ phase, op: 'list', status: listed.status });
        if (created.status !== 201) await new Promise((r) => setTimeout(r, 50)); // as Retry-After asks, roughly
      }
    })();
    await eventually(() => acked.length >= 5, 10_000);
    const restart = await killApiServer(cp);
    phase = 'down';
    await eventually(
      () => seen.some((s) => s.phase === 'down' && s.op === 'create' && s.status === 503),
      20_000,
    );
    restarted = await restart();
    phase = 'back';
    await eventually(
      () => seen.some((s) => s.phase === 'back' && s.op === 'create' && s.status === 201),
      60_000,
    );
    stop = true;
    await load;

    expect(
      seen.filter((s) => s.status >= 500 && s.status !== 503),
      'only 503s',
    ).toEqual([]);
    const down = seen.filter((s) => s.phase === 'down' && s.op === 'create' && s.status === 503);
    expect(down.length).toBeGreaterThan(0);
    for (const s of down) expect(s).toMatchObject({ code: 'kubernetes_unavailable', retryAfter: '1' });
    // Reads while the API server was away came from the cache.
    expect(seen.filter((s) => s.phase === 'down' && s.op === 'list').every((s) => s.status === 200)).toBe(
      true,
    );

    // Every acknowledged create is stored, and the cache has it too (it followed the restart).
    const stored = (await (
      await fetch(`${api.url}/v1/resources/apis/berth.dev/v1alpha1/agents?namespace=${ns}`)
    ).json()) as {
      items: Array<{ metadata: { name: string } }>;
    };
    const names = new Set(stored.items.map((i) => i.metadata.name));
    for (const a of acked) expect(names.has(a), `acknowledged ${a}`).toBe(true);
    const after = await fetch(`${api.url}/v1/namespaces/${ns}/agents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'after-restart', spec: { prompt: 'p' } }),
    });
    expect(after.status).toBe(201);
    expect((await fetch(`${api.url}/v1/namespaces/${ns}/agents/after-restart`)).status).toBe(200);
    const summary = (phase: Seen['phase']) => {
      const counts: Record<string, number> = {};
      for (const s of seen.filter((x) => x.phase === phase))
        counts[`${s.op} ${s.status}`] = (counts[`${s.op} ${s.status}`] ?? 0) + 1;
      return counts;
    };
    console.log(
      'apiserver restart under the API service',
      JSON.stringify({
        up: summary('up'),
        down: summary('down'),
        back: summary('back'),
        acked: acked.length,
      }),
    );
  }, 180_000);
});
