/**
 * Two tenants on real pods (issue 33 item 3, second bullet) and the failures a user meets (item 6),
 * on one local node: manifests/base (CRDs, controller, its broker, API and dashboard) and two tenants
 * from overlays/tenant installed as docs/install.md says (the namespace, the per-tenant
 * ClusterRoleBinding rename), with the image built from this checkout, every pod Ready with the
 * manifests' probes, limits and security contexts. One thing differs from the rendered manifests and
 * is named here: the tenant APIs run AUTH_MODE=open (the rendered `basic` needs API keys; the API
 * reaches its broker with its own account in every mode).
 *
 * Proven on the pods: a Query `support-1` in each tenant runs through the controller pod, which
 * mints each tenant broker's token and writes to it through cluster DNS; each tenant's API, through
 * its Service, shows only its own data; with kube-router enforcing the overlay's NetworkPolicies a
 * pod of B cannot open a TCP connection to A's broker (Service, pod IP, DNS name) while A's API
 * reads it; without the policy, A's broker refuses (401/403) every call with every token a pod of B
 * can mount. Then the failures: a broker and an API given a bad setting crash, and the pod's status
 * and its logs say which setting; a tenant's broker scaled to 0 makes that tenant's API answer 503
 * broker_unavailable naming it, fails that tenant's Query saying its Memory is unreachable while the
 * other tenant's run, and the controller retries the purge with backoff until the broker is back.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BERTH_IMAGE } from '../../hack/build-image.ts';
import { projectRoot } from '../../pkg/kube/controlplane/index.ts';
import { berthObject, brokerCalls, queryObject, read } from '../security/tenant-calls.ts';
import { type Obj, tenantReads } from '../security/tenants.ts';
import { eventually } from '../support/wait.ts';
import { waitDeploymentsAvailable } from './restarts.ts';
import { fakeModelObjects, type Stack, startStack } from './stack.ts';

const SYSTEM = 'berth-system';
const A = 'tenant-a';
const B = 'tenant-b';
/** Where the Deployments with a bad setting run. */
const BAD = 'bad-env';
const tag = randomBytes(4).toString('hex');
/** A word only that tenant's query carries: it must never show in the other tenant. */
const secret = (ns: string) => `secret${ns.replace(/-/g, '')}${tag}`;
const PROBE = readFileSync(join(projectRoot(), 'test', 'cluster', 'probe.mjs'), 'utf8');
const t0 = Date.now();
const timings: Record<string, number> = {};
const mark = (what: string, since: number) => {
  timings[what] = Date.now() - since;
};

let stack: Stack;
const dirs: Record<string, string> = {};

const kubectl = (args: string[], input?: string) => stack.cluster.kubectl(args, input);

/** A tenant's kustomization as docs/install.md has it, plus AUTH_MODE=open on its API (see above). */
function tenantKustomization(ns: string): string {
  const rename = `[{"op": "replace", "path": "/metadata/name", "value": "berth-broker-tokenreview-${ns}"}]`;
  return stack.kustomization(
    ns,
    'overlays/tenant',
    `namespace: ${ns}
patches:
  - target: { kind: ClusterRoleBinding, name: berth-broker-tokenreview-tenant }
    patch: '${rename}'
  - target: { kind: Deployment, name: berth-api }
    patch: |-
      apiVersion: apps/v1
      kind: Deployment
      metadata: { name: berth-api }
      spec:
        template:
          spec:
            containers:
              - name: api
                env:
                  - { name: AUTH_MODE, value: open }
`,
  );
}

const clusterIp = async (ns: string, name: string) =>
  (await stack.cluster.getJson<{ spec: { clusterIP: string } }>(ns, `service/${name}`)).spec.clusterIP;
const apiUrl = async (ns: string) => `http://${await clusterIp(ns, 'berth-api')}:8000`;

interface PodStatus {
  metadata: { name: string };
  status: {
    phase?: string;
    podIP?: string;
    containerStatuses?: Array<{
      ready: boolean;
      restartCount: number;
      state?: { waiting?: { reason?: string; message?: string } };
      lastState?: { terminated?: { reason?: string; exitCode?: number; message?: string } };
    }>;
  };
}

const podsOf = async (ns: string, selector: string) =>
  (
    JSON.parse(await kubectl(['get', 'pods', '-n', ns, '-l', selector, '-o', 'json'])) as {
      items: PodStatus[];
    }
  ).items;

/** The controller pods' logs, all of them (the leader's among them). */
const controllerLogs = () =>
  kubectl(['logs', '-n', SYSTEM, '-l', 'app.kubernetes.io/name=berth-controller', '--tail=-1']);

/** Waits for a Query's phase; when it never comes, the error shows its status and the controller's warnings. */
async function phase(ns: string, name: string, p: string, timeout = '120s') {
  await stack.cluster
    .wait(ns, `query/${name}`, `jsonpath={.status.phase}=${p}`, timeout)
    .catch(async (err) => {
      const got = await kubectl(['get', 'query', name, '-n', ns, '-o', 'jsonpath={.status}']).catch(String);
      const warned = (await controllerLogs().catch(String))
        .split('\n')
        .filter((l) => /"level":"(warn|error)"|"level":(40|50)/.test(l))
        .slice(-8);
      throw new Error(
        `${(err as Error).message}\nstatus: ${got}\ncontroller warnings:\n${warned.join('\n')}`,
      );
    });
}

const statusOfQuery = async (ns: string, name: string) =>
  (await stack.cluster.getJson<{ status: Record<string, unknown> }>(ns, `query/${name}`)).status;

/** Where a probe pod finds its projected token of `audience`. */
const tokenPath = (audience: string) => audience.replace(/[^a-z0-9-]/g, '_');

const restricted = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ['ALL'] },
};

/**
 * Runs probe.mjs in a pod of `ns` (the berth image, as `sa`, with `labels`, the projected tokens of
 * `audiences` under /var/run/secrets/probe/<audience>) until it ends; its JSON answer.
 */
async function probe<T>(
  ns: string,
  name: string,
  cfg: object,
  o: { sa?: string; labels?: Record<string, string>; audiences?: string[] } = {},
): Promise<T> {
  const audiences = o.audiences ?? [];
  await stack.cluster.apply({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns, labels: { 'berth.dev/probe': 'true', ...o.labels } },
    spec: {
      serviceAccountName: o.sa ?? 'default',
      restartPolicy: 'Never',
      securityContext: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [
        {
          name: 'probe',
          image: BERTH_IMAGE,
          imagePullPolicy: 'Never',
          command: ['node', '--input-type=module', '-e', PROBE],
          env: [{ name: 'PROBE', value: JSON.stringify(cfg) }],
          securityContext: restricted,
          volumeMounts: audiences.length ? [{ name: 'tokens', mountPath: '/var/run/secrets/probe' }] : [],
        },
      ],
      volumes: audiences.length
        ? [
            {
              name: 'tokens',
              projected: {
                sources: audiences.map((audience) => ({
                  serviceAccountToken: { audience, expirationSeconds: 3600, path: tokenPath(audience) },
                })),
              },
            },
          ]
        : [],
    },
  });
  let phaseNow: string | undefined;
  await eventually(
    async () => {
      phaseNow = (await stack.cluster.getJson<PodStatus>(ns, `pod/${name}`)).status.phase;
      return phaseNow === 'Succeeded' || phaseNow === 'Failed';
    },
    180_000,
    250,
  );
  const logs = await kubectl(['logs', name, '-n', ns]);
  await kubectl(['delete', 'pod', name, '-n', ns, '--wait=false']);
  if (phaseNow !== 'Succeeded') throw new Error(`probe ${name} ${phaseNow}: ${logs}`);
  return JSON.parse(logs.trim().split('\n').at(-1) ?? '{}') as T;
}

/** The rendered base Deployment `name`, moved to BAD with `env` set (a value replacing any source). */
function badDeployment(base: Obj[], name: string, env: Record<string, string>): Obj {
  const d = structuredClone(base.find((o) => o.kind === 'Deployment' && o.metadata.name === name)) as Obj;
  d.metadata.namespace = BAD;
  d.spec.replicas = 1;
  const c = d.spec.template.spec.containers[0];
  for (const [k, value] of Object.entries(env)) {
    const at = (c.env as Array<{ name: string }>).findIndex((e) => e.name === k);
    if (at < 0) throw new Error(`${name} has no env ${k}`);
    c.env[at] = { name: k, value };
  }
  return d;
}

beforeAll(async () => {
  stack = await startStack((m) => console.log(m));
  mark('stack', t0);
  const installStart = Date.now();
  const c = stack.cluster;
  dirs.base = stack.kustomization('base', 'base');
  await kubectl(['apply', '-k', dirs.base]);
  await kubectl(['create', 'namespace', A]);
  await kubectl(['create', 'namespace', B]);
  await kubectl(['create', 'namespace', BAD]);
  for (const ns of [A, B]) dirs[ns] = tenantKustomization(ns);
  await Promise.all([A, B].map((ns) => kubectl(['apply', '-k', dirs[ns] as string])));
  const script = readFileSync(join(projectRoot(), 'test', 'cluster', 'fake-model.mjs'), 'utf8');
  await c.apply(...fakeModelObjects(SYSTEM, script));
  // Item 6's images that cannot start: the base's broker and API, each with one bad setting.
  const base = await c.render(dirs.base);
  await c.apply(
    ...['berth-broker', 'berth-api'].map((name) => ({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name, namespace: BAD },
    })),
  );
  await c.apply(
    badDeployment(base, 'berth-broker', { BROKER_AUTH: 'bogus' }),
    badDeployment(base, 'berth-api', { NAMESPACE: 'Not_Valid' }),
  );
  await Promise.all(
    [SYSTEM, A, B].map((ns) =>
      kubectl(['wait', '--for=condition=Available', 'deployment', '--all', '-n', ns, '--timeout=400s']),
    ),
  );
  mark('install', installStart);

  const queriesStart = Date.now();
  const model = (ns: string) =>
    berthObject('Model', ns, 'default', {
      type: 'openai',
      model: 'cluster',
      baseUrl: `http://fake-model.${SYSTEM}.svc.cluster.local/v1`,
    });
  const memory = (ns: string) =>
    berthObject('Memory', ns, 'default', {
      address: { valueFrom: { serviceRef: { name: 'berth-broker', port: 80 } } },
    });
  await c.apply(model(A), model(B), memory(A), memory(B));
  await Promise.all([A, B].map((ns) => c.wait(ns, 'memory/default', 'jsonpath={.status.phase}=ready')));
  await c.apply(...[A, B].map((ns) => queryObject(ns, 'support-1', `${secret(ns)} what do you know?`)));
  await Promise.all([A, B].map((ns) => phase(ns, 'support-1', 'done')));
  mark('queries', queriesStart);
}, 1_200_000);

afterAll(async () => {
  const total = Date.now() - t0;
  console.log(
    `tenants on a node: ${Object.entries(timings)
      .map(([k, v]) => `${k} ${(v / 1000).toFixed(1)} s`)
      .join(', ')}; whole file ${(total / 1000).toFixed(1)} s; pods' cgroup peak ${(
      (stack?.node.podsPeakMemory() ?? 0) / 2 ** 20
    ).toFixed(0)} MiB`,
  );
  await stack?.stop();
}, 180_000);

/** What a tenant reads through `/v1/broker/*`, and what it must find of its own there. */
const READS = tenantReads(secret);

describe('two tenants from overlays/tenant, as pods', () => {
  it('installs as docs/install.md says: every Deployment Ready, the binding renamed per tenant, the policies in place', async () => {
    for (const ns of [A, B]) {
      const list = await stack.cluster.getJson<{
        items: Array<{
          metadata: { name: string };
          spec: {
            replicas: number;
            template: { spec: { containers: Array<{ securityContext?: object }> } };
          };
          status?: { availableReplicas?: number };
        }>;
      }>(ns, 'deployments');
      expect(list.items.map((d) => d.metadata.name).sort()).toEqual([
        'berth-api',
        'berth-broker',
        'berth-dashboard',
      ]);
      for (const d of list.items)
        expect(d.spec.template.spec.containers[0]?.securityContext).toMatchObject(restricted);
      await waitDeploymentsAvailable(stack.cluster, ns, { skipNamespaces: [BAD] });
      const binding = JSON.parse(
        await kubectl(['get', 'clusterrolebinding', `berth-broker-tokenreview-${ns}`, '-o', 'json']),
      ) as { subjects: Array<{ name: string; namespace: string }> };
      expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'berth-broker', namespace: ns }]);
      const policies = await stack.cluster.getJson<{ items: Array<{ metadata: { name: string } }> }>(
        ns,
        'networkpolicies',
      );
      expect(policies.items.map((p) => p.metadata.name).sort()).toEqual([
        'berth-api',
        'berth-broker',
        'berth-dashboard',
      ]);
    }
  });

  it('runs support-1 in both tenants through the controller pod and each tenant’s own broker', async () => {
    for (const ns of [A, B]) {
      const status = await statusOfQuery(ns, 'support-1');
      expect(JSON.stringify(status)).toContain(`cluster echo: ${secret(ns)}`);
    }
  });

  it('shows each tenant, through its API Service, only its own data', async () => {
    const uid = async (ns: string) =>
      (await stack.cluster.getJson<{ metadata: { uid: string } }>(ns, 'query/support-1')).metadata.uid;
    const uids = { [A]: await uid(A), [B]: await uid(B) };
    // Spans are exported in batches: both tenants' have arrived before anything is compared.
    for (const ns of [A, B]) {
      const base = `${await apiUrl(ns)}/v1/broker`;
      await eventually(async () => (await read(`${base}/traces`)).includes(`"${ns}"`), 30_000, 250);
    }
    for (const [own, other] of [
      [A, B],
      [B, A],
    ] as const) {
      const base = `${await apiUrl(own)}/v1/broker`;
      for (const [path, mustShow] of READS) {
        const text = await read(`${base}/${path}`);
        const where = `${own}: ${path}`;
        expect(text, where).toContain(mustShow(own));
        expect(text, where).not.toContain(secret(other));
        expect(text, where).not.toContain(uids[other]);
        expect(text, where).not.toContain(`"${other}"`);
      }
    }
  });

  it('fences A’s broker: a pod of B cannot open a connection to it (kube-router), A’s API reads it', async () => {
    const start = Date.now();
    const [aPod] = await podsOf(A, 'app.kubernetes.io/name=berth-broker');
    const targets = [
      `${await clusterIp(A, 'berth-broker')}:80`,
      `${aPod?.status.podIP}:8080`,
      `berth-broker.${A}.svc.cluster.local:80`,
    ];
    // Labelled as B's API: the one pod of B that the policy lets reach a broker — B's own.
    const got = await probe<{
      control: Record<string, string[]>;
      refused: Record<string, string[]>;
      open: Record<string, string[]>;
    }>(
      B,
      'fence',
      { mode: 'connect', targets, control: [`${await clusterIp(B, 'berth-broker')}:80`], rounds: 3 },
      { labels: { 'app.kubernetes.io/name': 'berth-api' } },
    );
    console.log(`fence probe: ${JSON.stringify(got)}`);
    for (const outcomes of Object.values(got.open))
      expect(outcomes).toEqual(['connected', 'connected', 'connected']);
    expect(Object.keys(got.refused).sort()).toEqual([...targets].sort());
    for (const [target, outcomes] of Object.entries(got.refused)) {
      expect(outcomes, target).toHaveLength(3);
      for (const o of outcomes) expect(['ECONNREFUSED', 'timeout'], `${target}: ${o}`).toContain(o);
    }
    // A's API pod, under the same policies, reads A's broker.
    expect(await read(`${await apiUrl(A)}/v1/broker/messages`)).toContain(secret(A));
    mark('fence', start);
  });

  it('refuses at A’s broker, with the policy gone, every call with every token a pod of B can mount', async () => {
    const start = Date.now();
    const snapshot = () =>
      Promise.all(
        ['messages', 'events', 'conversations', 'sessions'].map(async (p) =>
          read(`${await apiUrl(A)}/v1/broker/${p}`),
        ),
      );
    const before = await snapshot();
    const conversation = String((await statusOfQuery(A, 'support-1')).conversationId);
    const calls = brokerCalls('support-1', conversation, `injected${tag}`);
    const audiences = ['berth-broker', `berth-broker:${A}`, `berth-broker:${B}`];
    const tokenFiles = (sa: string) => ({
      [`${B}/${sa} (API server audience)`]: '/var/run/secrets/kubernetes.io/serviceaccount/token',
      ...Object.fromEntries(
        audiences.map((a) => [`${B}/${sa} (${a})`, `/var/run/secrets/probe/${tokenPath(a)}`]),
      ),
    });
    // Valid audiences there (berth-broker, berth-broker:<A>) but B's identities: 403; the rest 401.
    const want: Record<string, number> = {};
    const expectFor = (sa: string) => {
      for (const call of calls) {
        const key = (who: string) => `${who}: ${call[0]} ${call[1]}`;
        want[key('no token')] = 401;
        want[key('a forged token')] = 401;
        want[key(`${B}/${sa} (API server audience)`)] = 401;
        want[key(`${B}/${sa} (berth-broker)`)] = 403;
        want[key(`${B}/${sa} (berth-broker:${A})`)] = 403;
        want[key(`${B}/${sa} (berth-broker:${B})`)] = 401;
      }
    };
    await kubectl(['delete', 'networkpolicy', 'berth-broker', '-n', A]);
    try {
      const base = `http://berth-broker.${A}.svc.cluster.local`;
      const got: Record<string, number> = {};
      const results = await Promise.all(
        ['berth-api', 'berth-broker'].map((sa) =>
          probe<Record<string, number>>(
            B,
            `tokens-${sa}`,
            { mode: 'tokens', base, calls, tokenFiles: tokenFiles(sa) },
            { sa, audiences },
          ),
        ),
      );
      for (const r of results) Object.assign(got, r);
      for (const sa of ['berth-api', 'berth-broker']) expectFor(sa);
      expect(got).toEqual(want);
      expect(await snapshot()).toEqual(before);
    } finally {
      await kubectl(['apply', '-k', dirs[A] as string]);
    }
    mark('tokens', start);
  });
});

describe('failures a user meets (issue 33 item 6)', () => {
  it('says why an image cannot start, in the pod’s status and its logs', async () => {
    const start = Date.now();
    for (const [name, says] of [
      ['berth-broker', /BROKER_AUTH: must be none or serviceaccount/],
      ['berth-api', /NAMESPACE: must be a namespace name/],
    ] as const) {
      let pod: PodStatus | undefined;
      await eventually(
        async () => {
          [pod] = await podsOf(BAD, `app.kubernetes.io/name=${name}`);
          const s = pod?.status.containerStatuses?.[0];
          return (s?.restartCount ?? 0) >= 1 && s?.state?.waiting?.reason === 'CrashLoopBackOff';
        },
        120_000,
        500,
      );
      const s = pod?.status.containerStatuses?.[0];
      console.log(`${name} with a bad setting: ${JSON.stringify(s)}`);
      expect(s?.ready).toBe(false);
      expect(s?.lastState?.terminated).toMatchObject({ reason: 'Error', exitCode: 2 });
      // terminationMessagePolicy FallbackToLogsOnError (the manifests'): the status carries the log's end.
      expect(s?.lastState?.terminated?.message).toMatch(says);
      const logs = await kubectl(['logs', pod?.metadata.name ?? '', '-n', BAD, '--previous']);
      expect(logs).toMatch(says);
      const described = await kubectl(['describe', 'pod', pod?.metadata.name ?? '', '-n', BAD]);
      expect(described).toMatch(/CrashLoopBackOff/);
      expect(described).toMatch(/Exit Code:\s+2/);
      expect(described).toMatch(says);
    }
    mark('badEnv', start);
  });

  it('with B’s broker gone: B’s API answers 503 naming it, only B’s Query fails and says why', async () => {
    const start = Date.now();
    await kubectl(['scale', 'deployment', 'berth-broker', '-n', B, '--replicas=0']);
    await kubectl([
      'wait',
      '--for=delete',
      'pod',
      '-l',
      'app.kubernetes.io/name=berth-broker',
      '-n',
      B,
      '--timeout=60s',
    ]);
    const res = await fetch(`${await apiUrl(B)}/v1/broker/messages`);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(res.status).toBe(503);
    expect(body.error.code).toBe('broker_unavailable');
    expect(body.error.message).toContain('http://berth-broker');
    // A's API and broker are untouched.
    expect(await read(`${await apiUrl(A)}/v1/broker/messages`)).toContain(secret(A));

    await stack.cluster.apply(
      queryObject(A, 'after-b-gone', `${secret(A)} still there?`),
      queryObject(B, 'after-b-gone', `${secret(B)} still there?`),
    );
    await phase(A, 'after-b-gone', 'done');
    await phase(B, 'after-b-gone', 'error');
    const message = String((await statusOfQuery(B, 'after-b-gone')).message);
    console.log(`B's Query with its broker gone: ${message}`);
    expect(message).toMatch(/^Memory default: POST \/conversations: .*ECONNREFUSED/);
    mark('brokerGone', start);
  });

  it('retries the purge of B’s Query with backoff while its broker is gone, and finishes it when it is back', async () => {
    const start = Date.now();
    await kubectl(['delete', 'query', 'support-1', '-n', B, '--wait=false']);
    type Retry = { attempt: number; retryInMs: number; failed: string[] };
    let retries: Retry[] = [];
    await eventually(
      async () => {
        retries = (await controllerLogs())
          .split('\n')
          .filter((l) => l.includes('purge failed; retrying'))
          .map((l) => JSON.parse(l) as Retry);
        return retries.length >= 4;
      },
      60_000,
      500,
    );
    console.log(`purge retries: ${JSON.stringify(retries.map((r) => [r.attempt, r.retryInMs]))}`);
    expect(retries.map((r) => r.attempt).slice(0, 4)).toEqual([1, 2, 3, 4]);
    // Exponential (±20 % jitter): each pause longer than the one before.
    for (let i = 1; i < 4; i++)
      expect((retries[i] as Retry).retryInMs).toBeGreaterThan((retries[i - 1] as Retry).retryInMs);
    // Each retry says what failed where: the Memory's messages and the events, at B's broker.
    expect(retries[0]?.failed).toEqual([
      // Refused once the Service has no endpoint; a timeout while the old pod sits in its preStop
      // sleep — a request's (`timeout`) or the connection's (undici's UND_ERR_CONNECT_TIMEOUT).
      expect.stringMatching(
        /^messages via Memory default \(http:\/\/berth-broker\.tenant-b.*(ECONNREFUSED|timeout|TIMEOUT)/,
      ),
      expect.stringMatching(
        /^events at broker http:\/\/berth-broker\.tenant-b.*(ECONNREFUSED|timeout|TIMEOUT)/,
      ),
    ]);
    // The Query is still there, its finalizer held while the purge is pending.
    expect(await kubectl(['get', 'query', 'support-1', '-n', B, '-o', 'name'])).toContain('support-1');

    await kubectl(['scale', 'deployment', 'berth-broker', '-n', B, '--replicas=1']);
    await kubectl(['rollout', 'status', 'deployment/berth-broker', '-n', B, '--timeout=120s']);
    await stack.cluster.wait(B, 'query/support-1', 'delete', '120s');
    expect(await controllerLogs()).toMatch(/broker data purged; finalizer released/);
    // B's queries run again on its new broker.
    await stack.cluster.apply(queryObject(B, 'after-b-back', `${secret(B)} back?`));
    await phase(B, 'after-b-back', 'done');
    expect(await read(`${await apiUrl(B)}/v1/broker/messages`)).toContain(`${secret(B)} back?`);
    mark('purgeRetry', start);
  });
});
