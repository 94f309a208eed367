/**
 * The controller's least privilege, proven against the real API server (issue 12, item 3): its
 * ServiceAccount gets only the RBAC of manifests/base/controller (rendered with kubectl kustomize)
 * and a TokenRequest token; real `berth controller` processes with that token run Queries in two
 * tenants installed from the tenant overlay, purge them on delete, expire them by TTL, resolve
 * Memories and seed marketplace sources — while everything beyond the manifest is forbidden.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUERY_FINALIZER } from '../../pkg/api/index.ts';
import {
  type BrokerProcess,
  brokerCounts,
  seedBrokerData,
  startBrokerProcess,
  until,
} from '../controller/support.ts';
import { createNamespace, kubectl } from '../support/kube.ts';
import type { Spawned } from '../support/process.ts';
import {
  canI,
  installControllerRbac,
  installTenant,
  mustKubectl,
  scratchDir,
  startController,
  stopAll,
  tokenKubeconfig,
} from './support.ts';

const scratch = scratchDir();
let home: string;
let tenants: string[];
let broker: BrokerProcess;
let controllerKubeconfig: Awaited<ReturnType<typeof tokenKubeconfig>>;
const controllers: Spawned[] = [];

beforeAll(async () => {
  home = await createNamespace('berth-ctl-lp');
  const sa = await installControllerRbac(scratch.dir, home);
  tenants = await Promise.all([
    installTenant(scratch.dir, 'tenant-lp-a'),
    installTenant(scratch.dir, 'tenant-lp-b'),
  ]);
  broker = await startBrokerProcess();
  controllerKubeconfig = await tokenKubeconfig(sa, home);
  controllers.push(
    ...(await Promise.all(
      tenants.map((t) => {
        const seedFile = join(scratch.dir, `seed-${t}.json`);
        writeFileSync(
          seedFile,
          JSON.stringify([{ name: 'hub', url: 'https://hub.example/items', namespace: t }]),
        );
        return startController(controllerKubeconfig.path, {
          home,
          watch: t,
          brokerUrl: broker.url,
          seedFile,
          // The tenants' own brokers (the overlay's berth-broker Services) run no pods here: this
          // controller is the single-tenant install's, writing every namespace to its own broker
          // (test/security/tenant-isolation.test.ts runs tenant brokers).
          args: ['--no-tenant-brokers'],
        });
      }),
    )),
  );
}, 300_000);

afterAll(async () => {
  await stopAll();
  await broker?.remove();
  scratch.remove();
});

/**
 * kubectl wait: the real client's watch, no polling of our own. When a condition never comes, the
 * error carries what the controllers logged about refusals (a rule missing from the manifest).
 */
const wait = (ns: string, what: string, condition: string) =>
  mustKubectl(['wait', `--for=${condition}`, what, '-n', ns, '--timeout=90s']).catch((err: Error) => {
    const refused = controllers.flatMap((c) =>
      c
        .output()
        .split('\n')
        .filter((l) => /forbidden/i.test(l)),
    );
    throw new Error(
      `${err.message}\ncontroller refusals:\n${
        refused
          .slice(0, 3)
          .map((l) => l.slice(0, 500))
          .join('\n') || '(none)'
      }`,
    );
  });

/**
 * One tenant's round: its objects are created with the tenant API's own token (the tenant Role
 * allows it), everything else is the controller's doing.
 */
async function tenantRound(ns: string): Promise<void> {
  const asTenant = (await tokenKubeconfig('berth-api', ns)).path;
  const failing = `missing-agent-${ns.slice(-6)}`;
  const expiring = `expiring-${ns.slice(-6)}`;
  const query = (name: string, extra = {}) => ({
    apiVersion: 'berth.dev/v1alpha1',
    kind: 'Query',
    metadata: { name, namespace: ns },
    spec: { input: 'hello', target: { type: 'agent', name: 'nobody' }, ...extra },
  });
  const memory = {
    apiVersion: 'berth.dev/v1alpha1',
    kind: 'Memory',
    metadata: { name: 'default', namespace: ns },
    spec: { address: { value: broker.url } },
  };
  await mustKubectl(
    ['--kubeconfig', asTenant, 'apply', '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [memory] }),
  );
  // Memory status written by the controller (memories/status).
  await wait(ns, 'memory/default', 'jsonpath={.status.phase}=ready');
  // Evaluator resolution and an Evaluation's outcome (evaluators/status, evaluations/status): one
  // that names a missing Evaluator ends in error once the grace period is over.
  const berthObject = (kind: string, name: string, spec: object) => ({
    apiVersion: 'berth.dev/v1alpha1',
    kind,
    metadata: { name, namespace: ns },
    spec,
  });
  await mustKubectl(
    ['--kubeconfig', asTenant, 'apply', '-f', '-'],
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        berthObject('Evaluator', 'judge', { address: { value: broker.url } }),
        berthObject('Evaluation', 'unjudged', {
          evaluator: { name: 'nobody' },
          config: { input: 'q', output: 'a' },
        }),
      ],
    }),
  );
  await wait(ns, 'evaluator/judge', 'jsonpath={.status.phase}=ready');
  await wait(ns, 'evaluation/unjudged', 'jsonpath={.status.phase}=error');
  await mustKubectl(
    ['--kubeconfig', asTenant, 'apply', '-f', '-'],
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [query(failing), query(expiring, { ttl: '1s' })],
    }),
  );

  // Finalizer added (queries patch), run by the engine, status written (queries/status): `error`.
  await wait(ns, `query/${failing}`, 'jsonpath={.status.phase}=error');
  const q = JSON.parse(await mustKubectl(['get', 'query', failing, '-n', ns, '-o', 'json']));
  expect(q.metadata.finalizers).toContain(QUERY_FINALIZER);
  expect(q.status.message).toMatch(/nobody/);

  // Delete → the purge of the broker data (through the Memory it resolved) → finalizer removed.
  // The broker is the one of the controller's own namespace, shared with every other: the purge
  // takes this Query's messages in its own conversation and its namespace's events only. A
  // same-named Query of another namespace (seeded here under its own conversation) keeps its data.
  const conversation = q.status.conversationId as string;
  expect(conversation).toBeTruthy();
  await seedBrokerData(broker.url, failing, ns, conversation);
  await seedBrokerData(broker.url, failing, 'elsewhere');
  const before = await brokerCounts(broker.url, failing);
  expect(before.messages).toBe(2);
  expect(before.events).toBeGreaterThan(2); // the engine's own events of the run, and ours
  await mustKubectl(['--kubeconfig', asTenant, 'delete', 'query', failing, '-n', ns, '--wait=false']);
  await wait(ns, `query/${failing}`, 'delete');
  expect(await brokerCounts(broker.url, failing)).toEqual({ messages: 1, events: 1 });
  const left = (await (await fetch(`${broker.url}/events/${failing}`)).json()) as {
    items: Array<{ data: { queryNamespace: string } }>;
  };
  expect(left.items.map((e) => e.data.queryNamespace)).toEqual(['elsewhere']);

  // TTL expiry: the controller itself deletes the finished Query (queries delete).
  await wait(ns, `query/${expiring}`, 'delete');

  // Marketplace seeding by server-side apply of the tenant's ConfigMap, absent until then: the
  // apply creates it under `create`/`patch` restricted to the name marketplace-sources.
  const seeded = await until('seeded marketplace-sources', async () => {
    const r = await kubectl([
      'get',
      'configmap',
      'marketplace-sources',
      '-n',
      ns,
      '-o',
      'jsonpath={.data.hub}',
    ]);
    return r.code === 0 && r.stdout ? r.stdout : undefined;
  });
  expect(JSON.parse(seeded).url).toBe('https://hub.example/items');

  // Leader election in the controller's own namespace (its Role there).
  const holder = await mustKubectl([
    'get',
    'lease',
    `berth-controller-${ns}`,
    '-n',
    home,
    '-o',
    'jsonpath={.spec.holderIdentity}',
  ]);
  expect(holder).toMatch(new RegExp(`^ctl-${ns}_`));
}

describe('berth controller with only its manifest RBAC', () => {
  it('runs Queries in both tenants to a terminal phase, purges and expires them, seeds and resolves', async () => {
    await Promise.all(tenants.map(tenantRound));
    for (const c of controllers) {
      expect(c.output()).not.toMatch(/forbidden/i);
      expect(c.output()).not.toMatch(/could not record event/);
    }
  }, 300_000);

  it('may do what the code needs and nothing more', async () => {
    const [t] = tenants as [string];
    const allowed = [
      // informers of every namespace
      ...[
        'queries',
        'agents',
        'teams',
        'models',
        'tools',
        'memories',
        'evaluators',
        'evaluations',
        'mcpservers',
      ].map((r) => `watch ${r}.berth.dev -A`),
      'list secrets -A',
      'watch services -A',
      'watch configmaps/marketplace-sources -A',
      `patch queries.berth.dev -n ${t}`,
      `delete queries.berth.dev -n ${t}`,
      `patch queries.berth.dev --subresource=status -n ${t}`,
      `patch memories.berth.dev --subresource=status -n ${t}`,
      `patch evaluators.berth.dev --subresource=status -n ${t}`,
      `patch evaluations.berth.dev --subresource=status -n ${t}`,
      `patch mcpservers.berth.dev --subresource=status -n ${t}`,
      `create configmaps/marketplace-sources -n ${t}`,
      `patch configmaps/marketplace-sources -n ${t}`,
      `create events -n ${t}`,
      `update leases.coordination.k8s.io -n ${home}`,
      // Tenant brokers' tokens, minted for the controller's own account (the rule names it).
      `create serviceaccounts/berth-controller -n ${home} --subresource=token`,
    ];
    const denied = [
      `create queries.berth.dev -n ${t}`,
      `update queries.berth.dev -n ${t}`,
      ...[
        'agents',
        'teams',
        'models',
        'tools',
        'memories',
        'evaluators',
        'evaluations',
        'mcpservers',
      ].flatMap((r) => [`patch ${r}.berth.dev -n ${t}`, `delete ${r}.berth.dev -n ${t}`]),
      `patch agents.berth.dev --subresource=status -n ${t}`,
      `create secrets -n ${t}`,
      // Tokens for any other account, here or in a tenant: none.
      `create serviceaccounts/berth-api -n ${home} --subresource=token`,
      `create serviceaccounts/berth-controller -n ${t} --subresource=token`,
      `create serviceaccounts -n ${t} --subresource=token`,
      `delete secrets -n ${t}`,
      `delete configmaps -n ${t}`,
      // ConfigMaps other than the marketplace map: not even readable (the seeder applies that one).
      'watch configmaps -A',
      `create configmaps -n ${t}`,
      `patch configmaps/berth-dashboard-settings -n ${t}`,
      `get configmaps/kube-root-ca.crt -n ${t}`,
      `list pods -n ${t}`,
      `get leases.coordination.k8s.io -n ${t}`,
      'list namespaces',
      'impersonate users',
    ];
    const answers = async (qs: string[]) =>
      Object.fromEntries(await Promise.all(qs.map(async (q) => [q, await canI(controllerKubeconfig.kc, q)])));
    expect(await answers(allowed)).toEqual(Object.fromEntries(allowed.map((q) => [q, true])));
    expect(await answers(denied)).toEqual(Object.fromEntries(denied.map((q) => [q, false])));
  });
});
