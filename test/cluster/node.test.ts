/**
 * The local node (issue 33 item 1): a control plane serving pods, then containerd, the kubelet,
 * kube-controller-manager, kube-scheduler, kube-proxy (nftables) and CoreDNS on this host. A
 * Deployment of a tiny image becomes available, its Service answers on the cluster IP from the host
 * and by DNS name from another pod (whose logs come back through the API server and the kubelet);
 * then everything stops and the host is as it was: sysctls, nftables, ipsets, links, mounts,
 * cgroups, host paths, processes. Reports the times and the peak memory of the node.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppsV1Api, CoreV1Api, NetworkingV1Api, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlane, projectRoot, startControlPlane } from '../../pkg/kube/controlplane/index.ts';
import { type LocalNode, startNode } from '../../pkg/kube/controlplane/node.ts';
import { kubeConfigAt } from '../support/kube.ts';
import { eventually } from '../support/wait.ts';
import { type HostState, pidsNaming, readHost, rssOf, sysctlDiff } from './host-check.ts';
import { buildSmokeImage, SMOKE_IMAGE } from './smoke-image.ts';

const GiB = 1024 ** 3;
const ns = 'smoke';
const scratch = mkdtempSync(join(tmpdir(), 'berth-node-test-'));
let before: HostState;
let cp: ControlPlane | undefined;
let node: LocalNode | undefined;
let core: CoreV1Api;
let net: NetworkingV1Api;
let apps: AppsV1Api;
let peakRss = 0;
let sampler: NodeJS.Timeout | undefined;
const timings: Record<string, number> = {};
const t0 = Date.now();

function sample(): void {
  const pids = [...(node?.pids() ?? []), ...(cp ? pidsNaming(cp.stateDir) : [])];
  peakRss = Math.max(peakRss, rssOf([...new Set(pids)]));
}

beforeAll(async () => {
  before = await readHost();
  const imageBuilt = buildSmokeImage(scratch);
  cp = await startControlPlane({ crdDir: join(projectRoot(), 'crds'), node: {} });
  timings.controlPlane = cp.startMs;
  node = await startNode(cp, { log: (m) => console.log(`node: ${m}`) });
  timings.node = node.startMs;
  sampler = setInterval(sample, 250);
  await node.importImage(await imageBuilt);
  const kc = kubeConfigAt(cp.kubeconfigPath);
  core = kc.makeApiClient(CoreV1Api);
  apps = kc.makeApiClient(AppsV1Api);
  net = kc.makeApiClient(NetworkingV1Api);
}, 900_000);

afterAll(async () => {
  if (sampler) clearInterval(sampler);
  await node?.stop();
  await cp?.stop();
  rmSync(scratch, { recursive: true, force: true });
}, 120_000);

const labels = { app: 'web' };
const restricted = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ['ALL'] },
};

/** Runs the smoke image's `get` in a pod until it ends; its phase and logs. */
async function runClient(name: string, getArgs: string[], podLabels: Record<string, string> = {}) {
  const client: V1Pod = {
    metadata: { name, labels: podLabels },
    spec: {
      restartPolicy: 'Never',
      securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [
        {
          name: 'get',
          image: SMOKE_IMAGE,
          imagePullPolicy: 'Never',
          args: ['get', ...getArgs],
          securityContext: restricted,
        },
      ],
    },
  };
  await core.createNamespacedPod({ namespace: ns, body: client });
  let phase: string | undefined;
  await eventually(
    async () => {
      phase = (await core.readNamespacedPod({ name, namespace: ns })).status?.phase;
      return phase === 'Succeeded' || phase === 'Failed';
    },
    60_000,
    200,
  );
  return { phase, logs: await core.readNamespacedPodLog({ name, namespace: ns }) };
}

describe('a local node', () => {
  it('runs a Deployment whose Service answers on its cluster IP and by DNS name from another pod', async () => {
    const start = Date.now();
    await core.createNamespace({ body: { metadata: { name: ns } } });
    // The ServiceAccount admission needs the namespace's default account, which the controller makes.
    await eventually(
      async () => (await core.listNamespacedServiceAccount({ namespace: ns })).items.length > 0,
      30_000,
      100,
    );
    await apps.createNamespacedDeployment({
      namespace: ns,
      body: {
        metadata: { name: 'web', labels },
        spec: {
          replicas: 1,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: {
              securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
              containers: [
                {
                  name: 'web',
                  image: SMOKE_IMAGE,
                  imagePullPolicy: 'Never',
                  args: ['serve', '8080'],
                  ports: [{ containerPort: 8080, name: 'http' }],
                  readinessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 1 },
                  resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { memory: '64Mi' } },
                  securityContext: restricted,
                },
              ],
            },
          },
        },
      },
    });
    const svc = await core.createNamespacedService({
      namespace: ns,
      body: {
        metadata: { name: 'web' },
        spec: { selector: labels, ports: [{ port: 80, targetPort: 'http' }] },
      },
    });
    await eventually(
      async () =>
        ((await apps.readNamespacedDeployment({ name: 'web', namespace: ns })).status?.availableReplicas ??
          0) >= 1,
      60_000,
      200,
    );
    timings.deploymentAvailable = Date.now() - start;
    const webPod = (await core.listNamespacedPod({ namespace: ns, labelSelector: 'app=web' })).items[0]
      ?.metadata?.name;
    expect(webPod).toBeTruthy();

    // From the node, through kube-proxy's nftables rules for the cluster IP.
    let body = '';
    await eventually(
      async () => {
        body = await fetch(`http://${svc.spec?.clusterIP}/`, { signal: AbortSignal.timeout(2000) })
          .then((r) => r.text())
          .catch(() => '');
        return body.length > 0;
      },
      30_000,
      200,
    );
    expect(body).toBe(`hello from ${webPod}\n`);

    // From another pod, by name through CoreDNS; its logs come back through the kubelet.
    expect(await runClient('client', [`http://web.${ns}.svc.cluster.local/`])).toEqual({
      phase: 'Succeeded',
      logs: `200 hello from ${webPod}\n`,
    });
    timings.serviceByDns = Date.now() - start;
    sample();
  }, 180_000);

  it('enforces NetworkPolicy (kube-router): only the allowed pods reach the Service', async () => {
    const start = Date.now();
    await net.createNamespacedNetworkPolicy({
      namespace: ns,
      body: {
        metadata: { name: 'web-from-friends' },
        spec: {
          podSelector: { matchLabels: labels },
          policyTypes: ['Ingress'],
          ingress: [{ _from: [{ podSelector: { matchLabels: { role: 'friend' } } }] }],
        },
      },
    });
    const url = `http://web.${ns}.svc.cluster.local/`;
    // A stranger fails (one try), a friend gets through (retrying while kube-router syncs the policy).
    const [stranger, friend] = await Promise.all([
      runClient('stranger', [url, '1', '3']),
      runClient('friend', [url, '10', '3'], { role: 'friend' }),
    ]);
    expect(friend.phase).toBe('Succeeded');
    expect(stranger.phase).toBe('Failed');
    // kube-router rejects (ICMP port unreachable: "connection refused") rather than drops. The
    // first test's unlabelled client got through before the policy: the policy made the difference.
    expect(stranger.logs).toMatch(/connection refused|Client\.Timeout|i\/o timeout/);
    timings.networkPolicy = Date.now() - start;
  }, 120_000);

  it('stops leaving the host as it was, having stayed under 2 GiB', async () => {
    sample();
    const podsPeak = node?.podsPeakMemory() ?? 0;
    if (sampler) clearInterval(sampler);
    const stopStart = Date.now();
    const stateDir = node?.stateDir ?? '';
    await node?.stop();
    timings.nodeStop = Date.now() - stopStart;
    await cp?.stop();
    node = undefined;
    cp = undefined;
    const after = await readHost();
    console.log(
      `node smoke: control plane ${timings.controlPlane} ms, node Ready + CoreDNS ${timings.node} ms, ` +
        `deployment available ${timings.deploymentAvailable} ms, service by DNS ${timings.serviceByDns} ms, ` +
        `network policy ${timings.networkPolicy} ms, node stop ${timings.nodeStop} ms, whole test ${Date.now() - t0} ms; peak RSS (node + control plane) ` +
        `${(peakRss / 2 ** 20).toFixed(0)} MiB, pods' cgroup peak ${(podsPeak / 2 ** 20).toFixed(0)} MiB`,
    );
    expect(peakRss).toBeGreaterThan(0);
    expect(peakRss).toBeLessThan(2 * GiB);
    expect(sysctlDiff(before.sysctls, after.sysctls)).toEqual([]);
    expect(after.nft).toBe(before.nft);
    expect(after.legacy).toBe(before.legacy);
    expect(after.ipsets).toEqual(before.ipsets);
    expect(after.links).toEqual(before.links);
    expect(after.links).not.toContain('cni0');
    expect(after.mounts.filter((m) => m.startsWith(stateDir))).toEqual([]);
    expect(after.mounts).toEqual(before.mounts);
    expect(after.cgroups).toEqual(before.cgroups);
    expect(after.paths).toEqual(before.paths);
    // Only new ones count: another user of this host may stop its own processes meanwhile.
    expect(after.processes.filter((p) => !before.processes.includes(p))).toEqual([]);
  }, 120_000);
});
