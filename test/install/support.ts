/**
 * Installs Berth's own manifests into the test control plane and runs real `berth` processes with
 * the identities they create, the way pods would: a ServiceAccount's TokenRequest token in a
 * kubeconfig. Nothing here grants rights of its own; every permission comes from manifests/.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { projectRoot } from '../../pkg/kube/controlplane/index.ts';
import { rawRequest } from '../../pkg/kube/raw.ts';
import { createNamespace, kubeConfig, kubectl } from '../support/kube.ts';
import { type Spawned, spawnBerth } from '../support/process.ts';

export const MANIFESTS = join(projectRoot(), 'manifests');

/** kubectl that must succeed: the error names the command and kubectl's own message. */
export async function mustKubectl(args: string[], input?: string): Promise<string> {
  const r = await kubectl(args, input);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

/**
 * A scratch directory inside the repository (`.berth-kustomize-*`, git-ignored): kustomize loads
 * only resources it can reach by a relative path, so the tenant's kustomization lives beside them.
 */
export function scratchDir(): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(projectRoot(), '.berth-kustomize-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Writes `<scratch>/<name>/kustomization.yaml` over one manifests/ directory; returns its dir. */
export function kustomization(scratch: string, name: string, base: string, extra = ''): string {
  const dir = join(scratch, name);
  mkdirSync(dir, { recursive: true });
  const rel = relative(dir, join(MANIFESTS, base));
  writeFileSync(join(dir, 'kustomization.yaml'), `${extra}resources: [${rel}]\n`);
  return dir;
}

/**
 * A tenant installed exactly as docs/install.md says: a kustomization holding only `namespace` and
 * `resources: [.../manifests/overlays/tenant]`, applied for real — twice, since that must be harmless.
 */
export async function installTenant(scratch: string, prefix: string): Promise<string> {
  const ns = await createNamespace(prefix);
  // The tenant broker's cluster-scoped binding renamed per tenant, as docs/install.md says.
  const rename = `[{"op": "replace", "path": "/metadata/name", "value": "berth-broker-tokenreview-${ns}"}]`;
  const dir = kustomization(
    scratch,
    ns,
    'overlays/tenant',
    `namespace: ${ns}\npatches:\n  - target: { kind: ClusterRoleBinding, name: berth-broker-tokenreview-tenant }\n    patch: '${rename}'\n`,
  );
  await mustKubectl(['apply', '-k', dir]);
  const again = await mustKubectl(['apply', '-k', dir]);
  if (!/rolebinding\.rbac\.authorization\.k8s\.io\/berth-api unchanged/.test(again))
    throw new Error(`applying tenant ${ns} twice changed something:\n${again}`);
  return ns;
}

const RBAC_KINDS = new Set(['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding']);

export interface RbacObject {
  kind: string;
  metadata: { name: string; namespace?: string };
  rules?: Array<{ resources?: string[]; resourceNames?: string[]; verbs?: string[] }>;
}

/**
 * The RBAC objects of a kustomization, rendered by `kubectl kustomize` and applied without the
 * workloads (no controller-manager runs pods here). Returns what was applied.
 */
export async function applyRbacOf(dir: string): Promise<RbacObject[]> {
  const items = parseAllDocuments(await mustKubectl(['kustomize', dir]))
    .map((d) => d.toJS() as RbacObject)
    .filter((o) => RBAC_KINDS.has(o.kind));
  await mustKubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
  return items;
}

/**
 * The controller's identity from manifests/base/controller, applied without its workload.
 * ClusterRole names are global and the bootstrap of the test control plane already owns
 * `berth-controller` (from hack/local-rbac.yaml, used by other test files), so a kustomize
 * `nameSuffix` makes every name unique — kustomize renames roleRefs and subjects with it; the rules
 * stay the manifest's own. Returns the ServiceAccount's name.
 */
export async function installControllerRbac(scratch: string, ns: string): Promise<string> {
  const suffix = `-${ns.slice(-6)}`;
  const dir = kustomization(scratch, ns, 'base/controller', `namespace: ${ns}\nnameSuffix: "${suffix}"\n`);
  const items = await applyRbacOf(dir);
  if (items.length !== 5) throw new Error(`expected 5 RBAC objects in base/controller, got ${items.length}`);
  return `berth-controller${suffix}`;
}

/**
 * A kubeconfig carrying a TokenRequest token of `sa` (what a pod's projected token is), with the
 * test cluster's server and CA; `namespace` is the context's, like a pod's own namespace.
 */
export async function tokenKubeconfig(sa: string, saNamespace: string, namespace = saNamespace) {
  const token = (await mustKubectl(['create', 'token', sa, '-n', saNamespace, '--duration', '1h'])).trim();
  const cluster = kubeConfig().getCurrentCluster();
  if (!cluster?.caData) throw new Error('the test kubeconfig has no inline CA');
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'berth-test', server: cluster.server, caData: cluster.caData }],
    users: [{ name: sa, token }],
    contexts: [{ name: sa, cluster: 'berth-test', user: sa, namespace }],
    currentContext: sa,
  });
  const dir = mkdtempSync(join(tmpdir(), 'berth-sa-'));
  tokenDirs.push(dir);
  const path = join(dir, 'kubeconfig');
  writeFileSync(path, kc.exportConfig(), { mode: 0o600 });
  return { path, kc };
}

/**
 * `kubectl auth can-i <verb> <resource>[.<group>][/<name>] [-n <ns> | -A] [--subresource=<s>]`
 * without a process per question: the same SelfSubjectAccessReview, made with the identity's token.
 */
export async function canI(kc: KubeConfig, question: string): Promise<boolean> {
  const [verb, target = '', ...flags] = question.split(' ');
  const [kind = '', name] = target.split(/\/(.*)/s);
  const [resource, ...group] = kind.split('.');
  const n = flags.indexOf('-n');
  const subresource = flags.find((f) => f.startsWith('--subresource='))?.split('=')[1];
  const res = await rawRequest(kc, {
    method: 'POST',
    path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
    body: {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      spec: {
        resourceAttributes: {
          verb,
          resource,
          group: group.join('.'),
          namespace: n >= 0 ? flags[n + 1] : '',
          ...(name ? { name } : {}),
          ...(subresource ? { subresource } : {}),
        },
      },
    },
  });
  if (res.status !== 201) throw new Error(`SelfSubjectAccessReview: HTTP ${res.status} ${res.body}`);
  return res.json<{ status: { allowed: boolean } }>().status.allowed;
}

/**
 * Every answer of `questions` (canI syntax) for an identity, as one object, and the object they
 * should equal: one diff then shows every wrong answer at once.
 */
export async function answersOf(kc: KubeConfig, questions: string[]) {
  return Object.fromEntries(await Promise.all(questions.map(async (q) => [q, await canI(kc, q)])));
}
export const every = (questions: string[], value: boolean) =>
  Object.fromEntries(questions.map((q) => [q, value]));

/**
 * The RBAC of `base` (a directory of manifests/) moved into `namespace`, as an install of it into
 * berth-system would be, with the named manifests/components. `nameSuffix` keeps cluster-scoped
 * names (the controller's ClusterRole, the impersonator) apart from the test control plane's own
 * and other files'; kustomize renames roleRefs and subjects with it. Returns the objects applied.
 */
export function installRbacOf(
  scratch: string,
  base: string,
  namespace: string,
  suffix: string,
  components: string[] = [],
) {
  const name = `${namespace}${suffix}`;
  const paths = components.map((c) => relative(join(scratch, name), join(MANIFESTS, 'components', c)));
  const extra = `namespace: ${namespace}\nnameSuffix: "${suffix}"\ncomponents: [${paths.join(', ')}]\n`;
  return applyRbacOf(kustomization(scratch, name, base, extra));
}

/** Directories holding token kubeconfigs: removed by stopAll, tokens are credentials. */
const tokenDirs: string[] = [];

/** Processes started here, stopped by stopAll (SIGTERM, then SIGKILL if one hangs). */
const started: Spawned[] = [];

/** Removes the token kubeconfigs written so far: they hold credentials. */
export function removeTokenKubeconfigs(): void {
  for (const dir of tokenDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export async function stopAll(): Promise<void> {
  removeTokenKubeconfigs();
  await Promise.all(
    started.splice(0).map(async (p) => {
      if (p.proc.exitCode !== null || p.proc.signalCode !== null) return;
      p.proc.kill('SIGTERM');
      const timer = setTimeout(() => p.proc.kill('SIGKILL'), 10_000);
      await p.exited;
      clearTimeout(timer);
    }),
  );
}

export interface ApiProcess {
  url: string;
  proc: Spawned;
}

/** `berth api` as its Deployment runs it: NAMESPACE set, the account's kubeconfig. */
export async function startApi(
  kubeconfig: string,
  namespace: string,
  authMode: string,
  env: NodeJS.ProcessEnv = {},
): Promise<ApiProcess> {
  const proc = spawnBerth(['api', '--port', '0'], {
    ...process.env,
    KUBECONFIG: kubeconfig,
    NAMESPACE: namespace,
    AUTH_MODE: authMode,
    LOG_LEVEL: 'info',
    ...env,
  });
  started.push(proc);
  const line = await proc.waitForLine(/"msg":"api listening"/, 120_000);
  return { url: `http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}`, proc };
}

export interface ControllerRun {
  /** Namespace of its Lease (the controller's own, where its Role is). */
  home: string;
  /** The one namespace it watches. */
  watch: string;
  brokerUrl: string;
  seedFile?: string;
  /** More flags (e.g. `--no-tenant-brokers`). */
  args?: string[];
}

/**
 * `berth controller` as the controller Deployment runs it (leader election in its own namespace),
 * but watching one namespace: a cluster-wide controller would also reconcile the Queries of other
 * test files sharing this control plane. The Lease is named after the watched namespace so that
 * one controller per tenant each leads.
 */
export async function startController(kubeconfig: string, run: ControllerRun): Promise<Spawned> {
  const args = ['controller', '--namespace', run.watch, '--port', '0', '--metrics-port', '0'];
  args.push('--lease-name', `berth-controller-${run.watch}`, '--purge-retry-max', '500ms');
  if (run.seedFile) args.push('--marketplace-seed-file', run.seedFile);
  args.push(...(run.args ?? []));
  const proc = spawnBerth(args, {
    ...process.env,
    KUBECONFIG: kubeconfig,
    POD_NAMESPACE: run.home,
    BROKER_URL: run.brokerUrl,
    HOSTNAME: `ctl-${run.watch}`,
    LOG_LEVEL: 'info',
  });
  started.push(proc);
  await proc.waitForLine(/"msg":"ready"/, 120_000);
  return proc;
}
