import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, type V1ConfigMap } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kinds, type Memory } from '../../pkg/api/index.ts';
import { applySeed, parseSeed, type RunningController, startController } from '../../pkg/controller/index.ts';
import { CoreKinds } from '../../pkg/kube/kinds.ts';
import { createLogger } from '../../pkg/log/index.ts';
import { createNamespace, kubeConfig, kubectl } from '../support/kube.ts';
import { create, liveClient, until } from './support.ts';

let ns: string;
let ctl: RunningController;
const admin = kubeConfig();
const core = admin.makeApiClient(CoreV1Api);
const seedFile = join(tmpdir(), `berth-seed-${process.pid}.yaml`);

const memoryStatus = (name: string, pred: (m: Memory | undefined) => boolean) =>
  ctl.caches.waitFor(Kinds.Memory, ns, name, (o) => pred(o as Memory | undefined), {
    timeoutMs: 15_000,
  }) as Promise<Memory | undefined>;

const sourcesMap = (namespace: string) =>
  core.readNamespacedConfigMap({ name: 'marketplace-sources', namespace }).catch(() => undefined);

beforeAll(async () => {
  ns = await createNamespace('ctl-memory');
  writeFileSync(
    seedFile,
    [
      'marketplaceSources:',
      '  - name: official',
      '    url: https://example.com/marketplace.json',
      '    displayName: Official',
      '  - name: private',
      '    url: https://private.example.com/m.json',
      '    auth: {scheme: bearer, secretRef: marketplace-source-private-auth}',
      '  - name: insecure',
      '    url: http://example.com/m.json',
    ].join('\n'),
  );
  ctl = await startController({
    kc: kubeConfig('controller'),
    namespace: ns,
    leaderElection: false,
    probes: false,
    metrics: false,
    marketplaceSeed: { file: seedFile, defaultNamespace: ns },
    logger: createLogger({ level: 'silent' }),
  });
});

afterAll(async () => {
  await ctl?.stop();
  rmSync(seedFile, { force: true });
});

describe('Memory reconciler', () => {
  it('resolves spec.address.value', async () => {
    await create(admin, 'memories', {
      kind: 'Memory',
      metadata: { name: 'direct', namespace: ns },
      spec: { address: { value: 'http://broker:8080' } },
    });
    const m = await memoryStatus('direct', (x) => x?.status?.phase === 'ready');
    expect(m?.status?.lastResolvedAddress).toBe('http://broker:8080');
    expect(m?.status?.conditions?.[0]).toMatchObject({ type: 'Ready', status: 'True', reason: 'Resolved' });
  });

  it('reports an unusable address as error', async () => {
    await create(admin, 'memories', {
      kind: 'Memory',
      metadata: { name: 'bad', namespace: ns },
      spec: { address: { value: 'ftp://x' } },
    });
    const m = await memoryStatus('bad', (x) => x?.status?.phase === 'error');
    expect(m?.status?.message).toMatch(/unsupported scheme ftp:/);
  });

  it('resolves a serviceRef to the cluster DNS name and follows the Service', async () => {
    await create(admin, 'memories', {
      kind: 'Memory',
      metadata: { name: 'svc', namespace: ns },
      spec: { address: { valueFrom: { serviceRef: { name: 'mem-svc', port: 8080, path: 'v1' } } } },
    });
    let m = await memoryStatus('svc', (x) => x?.status?.phase === 'error');
    expect(m?.status?.message).toBe(`Service ${ns}/mem-svc not found`);
    // The Service appearing re-enqueues the Memory (no change to the Memory itself).
    await core.createNamespacedService({
      namespace: ns,
      body: { metadata: { name: 'mem-svc' }, spec: { ports: [{ port: 8080 }] } },
    });
    m = await memoryStatus('svc', (x) => x?.status?.phase === 'ready');
    expect(m?.status?.lastResolvedAddress).toBe(`http://mem-svc.${ns}.svc.cluster.local:8080/v1`);
    await core.patchNamespacedService({
      name: 'mem-svc',
      namespace: ns,
      body: [{ op: 'replace', path: '/spec/ports/0/port', value: 9090 }],
    });
    m = await memoryStatus('svc', (x) => x?.status?.phase === 'error');
    expect(m?.status?.message).toMatch(/has no port 8080 \(ports: 9090\)/);
    // The last good address stays: purges of existing queries may still reach it.
    expect(m?.status?.lastResolvedAddress).toBe(`http://mem-svc.${ns}.svc.cluster.local:8080/v1`);
  });
});

describe('marketplace seeding', () => {
  it('applies each valid entry as one key under the seeder field manager; rejects non-https URLs', async () => {
    const cm = await until('seeded ConfigMap', () => sourcesMap(ns));
    expect(Object.keys(cm.data ?? {}).sort()).toEqual(['official', 'private']);
    expect(JSON.parse(cm.data?.official ?? '')).toEqual({
      url: 'https://example.com/marketplace.json',
      displayName: 'Official',
    });
    expect(JSON.parse(cm.data?.private ?? '').auth).toEqual({
      scheme: 'bearer',
      secretRef: 'marketplace-source-private-auth',
    });
    const managers = (cm.metadata?.managedFields ?? []).map((f) => `${f.manager}:${f.operation}`);
    expect(managers).toContain('helm-marketplace-seeder:Apply');
    expect(parseSeed('[{name: x, url: "http://a"}]', 't').errors[0]).toMatch(
      /url must be an absolute https URL/,
    );
  });

  it('leaves keys other managers changed alone on the next seeding', async () => {
    const edited = JSON.stringify({ url: 'https://mirror.example.com/m.json' });
    const patch = await kubectl([
      'patch',
      'configmap',
      'marketplace-sources',
      '-n',
      ns,
      '--type=merge',
      `-p={"data":{"official":${JSON.stringify(edited)}}}`,
    ]);
    expect(patch.code, patch.stderr).toBe(0);
    const results = await applySeed(
      liveClient(kubeConfig('controller')),
      parseSeed(
        [
          '- {name: official, url: "https://example.com/v2.json"}',
          '- {name: private, url: "https://private.example.com/v2.json"}',
        ].join('\n'),
        'test',
      ).entries,
      ns,
    );
    expect(results.map((r) => `${r.name}:${r.result}`).sort()).toEqual([
      'official:skipped',
      'private:applied',
    ]);
    expect(results.find((r) => r.name === 'official')?.ownedBy).toEqual(['kubectl-patch']);
    const cm = (await sourcesMap(ns)) as V1ConfigMap;
    expect(cm.data?.official).toBe(edited);
    expect(JSON.parse(cm.data?.private ?? '').url).toBe('https://private.example.com/v2.json');
  });

  it('an empty list does nothing', async () => {
    const empty = await createNamespace('ctl-seed-empty');
    expect(
      await applySeed(
        liveClient(kubeConfig('controller')),
        parseSeed('marketplaceSources: []', 't').entries,
        empty,
      ),
    ).toEqual([]);
    expect(await sourcesMap(empty)).toBeUndefined();
  });

  it('the marketplace-sources ConfigMap is in the shared cache', async () => {
    const cached = await ctl.caches.waitFor(CoreKinds.ConfigMap, ns, 'marketplace-sources', (o) => !!o, {
      timeoutMs: 10_000,
    });
    expect(Object.keys((cached as V1ConfigMap).data ?? {})).toContain('private');
  });
});
