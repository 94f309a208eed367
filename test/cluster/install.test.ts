/**
 * The single-tenant install as pods (issue 33 item 3, first bullet): `manifests/base` applied as
 * docs/install.md says, with the image built from this checkout; every pod becomes Ready with the
 * manifests' probes, limits and security contexts unchanged; a Query runs end to end through the
 * in-cluster Services and DNS (controller → fake model Service, controller → broker Service, the
 * Memory's serviceRef) against a model served inside the cluster; the API, broker and dashboard
 * answer through their Services.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../pkg/kube/controlplane/index.ts';
import { eventually } from '../support/wait.ts';
import { waitDeploymentsAvailable } from './restarts.ts';
import { fakeModelObjects, helperAgentObjects, helperQuery, type Stack, startStack } from './stack.ts';

const NS = 'berth-system';
let stack: Stack;

interface Deployment {
  metadata: { name: string };
  spec: {
    template: {
      spec: { containers: Array<{ resources?: object; securityContext?: object; readinessProbe?: object }> };
    };
  };
  status?: { availableReplicas?: number; replicas?: number };
}

const clusterIp = async (name: string) =>
  (await stack.cluster.getJson<{ spec: { clusterIP: string } }>(NS, `service/${name}`)).spec.clusterIP;

beforeAll(async () => {
  stack = await startStack((m) => console.log(m));
  const c = stack.cluster;
  await c.kubectl(
    ['apply', '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }),
  );
  await c.kubectl(['apply', '-k', stack.kustomization('base', 'base')]);
  const script = readFileSync(join(projectRoot(), 'test', 'cluster', 'fake-model.mjs'), 'utf8');
  await c.apply(...fakeModelObjects(NS, script));
  await c.kubectl(['wait', '--for=condition=Available', 'deployment', '--all', '-n', NS, '--timeout=300s']);
}, 900_000);

afterAll(async () => {
  await stack?.stop();
}, 180_000);

describe('manifests/base as pods', () => {
  it('runs every Deployment Ready with the manifests’ probes, limits and security contexts', async () => {
    const list = await stack.cluster.getJson<{ items: Deployment[] }>(NS, 'deployments');
    const names = list.items.map((d) => d.metadata.name).sort();
    expect(names).toEqual(['berth-api', 'berth-broker', 'berth-controller', 'berth-dashboard', 'fake-model']);
    await waitDeploymentsAvailable(stack.cluster, NS);
    for (const d of list.items) {
      if (d.metadata.name === 'fake-model') continue;
      const [c] = d.spec.template.spec.containers;
      expect(c?.resources, d.metadata.name).toMatchObject({ limits: { memory: expect.any(String) } });
      expect(c?.securityContext, d.metadata.name).toMatchObject({
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
      });
      expect(c?.readinessProbe, d.metadata.name).toBeDefined();
    }
    const pods = () =>
      stack.cluster.getJson<{
        items: Array<{
          metadata: { name: string };
          status: { containerStatuses?: Array<{ ready: boolean; restartCount: number }> };
        }>;
      }>(NS, 'pods');
    // Every container ready (the same late-probe window as above).
    let notReady: string[] = [];
    await eventually(
      async () => {
        notReady = (await pods()).items
          .filter((p) => (p.status.containerStatuses ?? []).some((s) => !s.ready))
          .map((p) => p.metadata.name);
        return notReady.length === 0;
      },
      60_000,
      500,
    ).catch(() => {
      throw new Error(`containers not ready: ${notReady.join(', ')}`);
    });
  });

  it('runs a Query end to end through the cluster’s Services and DNS', async () => {
    const c = stack.cluster;
    await c.apply(...helperAgentObjects(NS));
    await c.wait(NS, 'memory/default', 'jsonpath={.status.phase}=ready');
    await c.apply(helperQuery(NS, 'in-cluster', 'hello from a pod'));
    await c.wait(NS, 'query/in-cluster', 'jsonpath={.status.phase}=done', '120s');
    const q = await c.getJson<{ status: { response?: { content?: string }; conversationId?: string } }>(
      NS,
      'query/in-cluster',
    );
    expect(JSON.stringify(q.status)).toContain('cluster echo: hello from a pod');
    // The broker (through its Service, from the host: kube-proxy) holds the conversation and events,
    // written by the controller pod with its projected token; a reader needs a token too.
    const broker = `http://${await clusterIp('berth-broker')}`;
    expect((await fetch(`${broker}/messages`)).status).toBe(401);
    const token = await c.token('berth-api', NS, 'berth-broker');
    const auth = { authorization: `Bearer ${token}` };
    await eventually(
      async () => {
        const r = await fetch(`${broker}/events/in-cluster`, { headers: auth });
        return r.ok && ((await r.json()) as { total: number }).total > 0;
      },
      30_000,
      200,
    );
    const msgs = await (await fetch(`${broker}/messages?query_id=in-cluster`, { headers: auth })).text();
    expect(msgs).toContain('hello from a pod');
  });

  it('answers through the API, broker and dashboard Services', async () => {
    expect((await fetch(`http://${await clusterIp('berth-api')}:8000/readyz`)).status).toBe(200);
    expect((await fetch(`http://${await clusterIp('berth-broker')}/readyz`)).status).toBe(200);
    const dash = await fetch(`http://${await clusterIp('berth-dashboard')}:${await dashboardPort()}/`, {
      redirect: 'manual',
    });
    expect(dash.status).toBeLessThan(500);
  });
});

async function dashboardPort(): Promise<number> {
  const svc = await stack.cluster.getJson<{ spec: { ports: Array<{ port: number }> } }>(
    NS,
    'service/berth-dashboard',
  );
  return svc.spec.ports[0]?.port ?? 80;
}
