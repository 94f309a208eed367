/**
 * Each tenant installed from manifests/overlays/tenant runs its own broker (issue 27 items 1 and 4):
 * two tenants rendered through their own kustomizations, as docs/install.md shows, applied to the
 * real API server (server-side dry run), and their objects compared — own broker, own binding name,
 * the API reading its own broker, the NetworkPolicies fencing it; also with the durable component.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { createNamespace } from '../support/kube.ts';
import { kustomization, mustKubectl, scratchDir } from './support.ts';

interface Obj {
  kind: string;
  metadata: { name: string; namespace?: string };
  spec?: any;
  roleRef?: { kind: string; name: string };
  subjects?: Array<{ kind: string; name: string; namespace?: string }>;
}

const scratch = scratchDir();
afterAll(() => scratch.remove());

/** The tenant's kustomization exactly as docs/install.md "One tenant per namespace" has it. */
function tenantDir(ns: string, extra = ''): string {
  const rename = `[{"op": "replace", "path": "/metadata/name", "value": "berth-broker-tokenreview-${ns}"}]`;
  return kustomization(
    scratch.dir,
    `${ns}${extra ? '-x' : ''}`,
    'overlays/tenant',
    `namespace: ${ns}\n${extra}patches:\n  - target: { kind: ClusterRoleBinding, name: berth-broker-tokenreview-tenant }\n    patch: '${rename}'\n`,
  );
}

async function render(dir: string): Promise<Obj[]> {
  return parseAllDocuments(await mustKubectl(['kustomize', dir])).map((d) => d.toJS() as Obj);
}

function find(objs: Obj[], kind: string, name: string): Obj {
  const o = objs.find((x) => x.kind === kind && x.metadata.name === name);
  if (!o) throw new Error(`${kind}/${name} not rendered`);
  return o;
}

function container(deploy: Obj) {
  return deploy.spec.template.spec.containers[0] as {
    env: Array<{ name: string; value?: string; valueFrom?: unknown }>;
    ports: Array<{ name: string; containerPort: number }>;
  };
}

const envOf = (deploy: Obj, name: string) => container(deploy).env.find((e) => e.name === name);

let tenants: string[] = [];

beforeAll(async () => {
  tenants = [await createNamespace('tenant-brk-a'), await createNamespace('tenant-brk-b')];
  // The dry runs of the base need it; applied, not created: other files of the run create it too.
  const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'berth-system' } };
  await mustKubectl(['apply', '-f', '-'], JSON.stringify(ns));
});

describe('a broker per tenant (overlays/tenant)', () => {
  it('is accepted by the API server for two tenants, each through its own kustomization', async () => {
    for (const ns of tenants) {
      const out = await mustKubectl(['apply', '--dry-run=server', '-k', tenantDir(ns)]);
      expect(out).toMatch(/deployment\.apps\/berth-broker .*\(server dry run\)/);
      expect(out).toMatch(/networkpolicy\.networking\.k8s\.io\/berth-broker .*\(server dry run\)/);
      expect(out).toContain(`clusterrolebinding.rbac.authorization.k8s.io/berth-broker-tokenreview-${ns} `);
    }
  });

  it("runs the tenant's broker in its namespace, authenticating, and points the API at it", async () => {
    for (const ns of tenants) {
      const objs = await render(tenantDir(ns));
      const broker = find(objs, 'Deployment', 'berth-broker');
      expect(broker.metadata.namespace).toBe(ns);
      expect(envOf(broker, 'BROKER_AUTH')).toEqual({ name: 'BROKER_AUTH', value: 'serviceaccount' });
      expect(envOf(broker, 'NAMESPACE')).toEqual({
        name: 'NAMESPACE',
        valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } },
      });
      expect(broker.spec.template.spec.serviceAccountName).toBe('berth-broker');
      // The Service a Memory's serviceRef `{ name: berth-broker, port: 80 }` names in this namespace.
      const svc = find(objs, 'Service', 'berth-broker');
      expect(svc.metadata.namespace).toBe(ns);
      expect(svc.spec.ports).toContainEqual({ name: 'http', port: 80, targetPort: 'http' });
      expect(broker.spec.template.metadata.labels).toMatchObject(svc.spec.selector);
      // The API's BROKER_URL is that Service, by its short name: resolved in the pod's namespace.
      const api = find(objs, 'Deployment', 'berth-api');
      expect(api.metadata.namespace).toBe(ns);
      expect(envOf(api, 'BROKER_URL')).toEqual({ name: 'BROKER_URL', value: 'http://berth-broker' });
      expect(JSON.stringify(objs)).not.toContain('berth-system.svc');
      expect(JSON.stringify(objs)).not.toContain('berth-broker.berth-system');
    }
  });

  it('renders no cluster-scoped name twice, and none of the base install', async () => {
    const clusterNames = async (dir: string) =>
      (await render(dir)).filter((o) => !o.metadata.namespace).map((o) => `${o.kind}/${o.metadata.name}`);
    const [a = [], b = []] = await Promise.all(tenants.map((ns) => clusterNames(tenantDir(ns))));
    const base = await clusterNames(kustomization(scratch.dir, 'base', 'base'));
    expect(a).toEqual([`ClusterRoleBinding/berth-broker-tokenreview-${tenants[0]}`]);
    expect(b).toEqual([`ClusterRoleBinding/berth-broker-tokenreview-${tenants[1]}`]);
    for (const name of [...a, ...b]) expect(base).not.toContain(name);
    // The ClusterRole the binding names is the base's (installed once, never deleted with a tenant).
    expect(base).toContain('ClusterRole/berth-broker-tokenreview');
    for (const ns of tenants) {
      const binding = find(
        await render(tenantDir(ns)),
        'ClusterRoleBinding',
        `berth-broker-tokenreview-${ns}`,
      );
      expect(binding.roleRef).toMatchObject({ kind: 'ClusterRole', name: 'berth-broker-tokenreview' });
      expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'berth-broker', namespace: ns }]);
    }
    // Forgetting the rename must at least not take over the base broker's binding.
    const bare = kustomization(scratch.dir, 'bare', 'overlays/tenant', `namespace: ${tenants[0]}\n`);
    for (const name of await clusterNames(bare)) expect(base).not.toContain(name);
  });

  it('fences the broker: the controller pods of berth-system and this tenant’s API and dashboard', async () => {
    const objs = await render(tenantDir(tenants[0] as string));
    const policy = find(objs, 'NetworkPolicy', 'berth-broker');
    expect(policy.metadata.namespace).toBe(tenants[0]);
    expect(policy.spec.podSelector).toEqual({ matchLabels: { 'app.kubernetes.io/name': 'berth-broker' } });
    expect(policy.spec.policyTypes).toEqual(['Ingress']);
    expect(policy.spec.ingress).toHaveLength(1);
    const [rule] = policy.spec.ingress;
    // One peer holding both selectors (AND): controller pods in the controller's namespace only.
    expect(rule.from).toEqual([
      {
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'berth-system' } },
        podSelector: { matchLabels: { 'app.kubernetes.io/name': 'berth-controller' } },
      },
      { podSelector: { matchLabels: { 'app.kubernetes.io/name': 'berth-api' } } },
      { podSelector: { matchLabels: { 'app.kubernetes.io/name': 'berth-dashboard' } } },
    ]);
    expect(rule.ports).toEqual([{ protocol: 'TCP', port: 'http' }]);
    const brokerPorts = container(find(objs, 'Deployment', 'berth-broker')).ports;
    expect(brokerPorts).toEqual([{ name: 'http', containerPort: 8080 }]);
    // The controller's pods carry the label the peer selects.
    const base = await render(kustomization(scratch.dir, 'base-labels', 'base'));
    expect(find(base, 'Deployment', 'berth-controller').spec.template.metadata.labels).toMatchObject({
      'app.kubernetes.io/name': 'berth-controller',
    });
  });

  it('admits the ingress to the API and dashboard, and the dashboard to the API; the ingress namespace is a patch', async () => {
    const ingressPeer = (ns: string) => ({
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
    });
    let objs = await render(tenantDir(tenants[0] as string));
    const api = find(objs, 'NetworkPolicy', 'berth-api');
    expect(api.spec.podSelector).toEqual({ matchLabels: { 'app.kubernetes.io/name': 'berth-api' } });
    expect(api.spec.ingress).toEqual([
      {
        from: [
          ingressPeer('ingress-nginx'),
          { podSelector: { matchLabels: { 'app.kubernetes.io/name': 'berth-dashboard' } } },
        ],
        ports: [{ protocol: 'TCP', port: 'http' }],
      },
    ]);
    const dash = find(objs, 'NetworkPolicy', 'berth-dashboard');
    expect(dash.spec.podSelector).toEqual({ matchLabels: { 'app.kubernetes.io/name': 'berth-dashboard' } });
    expect(dash.spec.ingress).toEqual([
      { from: [ingressPeer('ingress-nginx')], ports: [{ protocol: 'TCP', port: 'http' }] },
    ]);
    // docs/install.md's patch for another ingress controller's namespace.
    const patch = (name: string) =>
      `  - target: { kind: NetworkPolicy, name: ${name} }\n    patch: '[{"op": "replace", "path": "/spec/ingress/0/from/0/namespaceSelector/matchLabels", "value": {"kubernetes.io/metadata.name": "traefik"}}]'\n`;
    tenantDir(tenants[0] as string);
    const withTraefik = join(scratch.dir, 'traefik');
    mkdirSync(withTraefik, { recursive: true });
    writeFileSync(
      join(withTraefik, 'kustomization.yaml'),
      `resources: [../${tenants[0]}]\npatches:\n${patch('berth-api')}${patch('berth-dashboard')}`,
    );
    objs = await render(withTraefik);
    expect(find(objs, 'NetworkPolicy', 'berth-api').spec.ingress[0].from[0]).toEqual(ingressPeer('traefik'));
    expect(find(objs, 'NetworkPolicy', 'berth-dashboard').spec.ingress[0].from[0]).toEqual(
      ingressPeer('traefik'),
    );
    await mustKubectl(['apply', '--dry-run=server', '-k', withTraefik]);
  });
});

describe('a durable broker per tenant (components/durable-broker)', () => {
  const durableDir = (ns: string) =>
    tenantDir(ns, 'components: [../../manifests/components/durable-broker]\n');

  it("runs each tenant's broker on the tenant's own storage Secret under its own Redis key prefix", async () => {
    const prefixes: string[] = [];
    for (const ns of tenants) {
      await mustKubectl(['apply', '--dry-run=server', '-k', durableDir(ns)]);
      const objs = await render(durableDir(ns));
      const broker = find(objs, 'Deployment', 'berth-broker');
      expect(broker.metadata.namespace).toBe(ns);
      expect(broker.spec.replicas).toBe(3);
      expect(envOf(broker, 'BROKER_AUTH')?.value).toBe('serviceaccount');
      for (const key of ['DATABASE_URL', 'REDIS_URL'])
        expect(envOf(broker, key)?.valueFrom).toEqual({
          secretKeyRef: { name: 'berth-broker-storage', key },
        });
      // $(NAMESPACE) expands only when NAMESPACE is defined earlier in the list.
      const names = container(broker).env.map((e) => e.name);
      expect(names.indexOf('REDIS_KEY_PREFIX')).toBeGreaterThan(names.indexOf('NAMESPACE'));
      const prefix = envOf(broker, 'REDIS_KEY_PREFIX')?.value as string;
      expect(prefix).toBe('berth:$(NAMESPACE):chunks:');
      prefixes.push(prefix.replace('$(NAMESPACE)', ns));
      const job = find(objs, 'Job', 'berth-migrate');
      expect(job.metadata.namespace).toBe(ns);
      expect(find(objs, 'PodDisruptionBudget', 'berth-broker').metadata.namespace).toBe(ns);
    }
    // Neither prefix is a prefix of the other: a Redis user confined to one matches no key of the other.
    const [a, b] = prefixes as [string, string];
    expect(a.startsWith(b) || b.startsWith(a)).toBe(false);
  });
});
