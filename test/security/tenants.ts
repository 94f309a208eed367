/**
 * Tenants on a control plane of the test file's own (a cluster-wide controller on the shared test
 * control plane would run every other file's Queries): manifests/base and manifests/overlays/tenant
 * applied as docs/install.md says, and each workload run the way its pod would run it — the rendered
 * Deployment's args and env (fieldRefs and `$(VAR)`s resolved), its service account's TokenRequest
 * token in a kubeconfig (the API server token a pod mounts), and the projected token of audience
 * `berth-broker` in the file BROKER_TOKEN_FILE names. No kubelet and no cluster DNS run here, so
 * these stand in for them:
 *  - a Service the processes must reach becomes `type: ExternalName, externalName: 127.0.0.1` on the
 *    local process's port (what the controller and a Memory's serviceRef resolve it to);
 *  - a setting that names a Service by its cluster name (`http://berth-broker`, `http://berth-api:8000`)
 *    is replaced by that process's local URL — checked to be the rendered value first;
 *  - every listening port is 0 (many processes share this host).
 * Beyond those, only what a test needs is set by the caller and named there (AUTH_MODE=open on the
 * API and dashboard, the fake model's CA for the controller).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import type { ControlPlane } from '../../pkg/kube/controlplane/index.ts';
import { canI, kustomization } from '../install/support.ts';
import { type Spawned, spawnBerth } from '../support/process.ts';
import { eventually } from '../support/wait.ts';

const run = promisify(execFile);

export interface Obj {
  kind: string;
  metadata: { name: string; namespace?: string };
  spec?: any;
  rules?: unknown;
}

/** kubectl, tokens and kubeconfigs of one control plane; token files live in /tmp/berth-sa-* until remove(). */
export class Cluster {
  readonly #secrets = mkdtempSync(join(tmpdir(), 'berth-sa-'));
  #files = 0;

  readonly cp: ControlPlane;

  constructor(cp: ControlPlane) {
    this.cp = cp;
  }

  /** kubectl as the control plane's administrator; throws with kubectl's own message. */
  async kubectl(args: string[], input?: string): Promise<string> {
    const child = run(this.cp.binaries.kubectl, ['--kubeconfig', this.cp.kubeconfigPath, ...args], {
      maxBuffer: 32 * 1024 * 1024,
    });
    if (input !== undefined) child.child.stdin?.end(input);
    try {
      return (await child).stdout;
    } catch (err) {
      throw new Error(`kubectl ${args.join(' ')} failed: ${(err as { stderr?: string }).stderr ?? err}`);
    }
  }

  apply(...items: object[]): Promise<string> {
    return this.kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
  }

  async render(dir: string): Promise<Obj[]> {
    return parseAllDocuments(await this.kubectl(['kustomize', dir])).map((d) => d.toJS() as Obj);
  }

  /** `kubectl wait` (the client's watch) for `condition` on `what`. */
  wait(ns: string, what: string, condition: string, timeout = '60s'): Promise<string> {
    return this.kubectl(['wait', `--for=${condition}`, what, '-n', ns, `--timeout=${timeout}`]);
  }

  async getJson<T>(ns: string, what: string): Promise<T> {
    return JSON.parse(await this.kubectl(['get', what, '-n', ns, '-o', 'json'])) as T;
  }

  /** A TokenRequest token of `sa` (what a tenant can obtain for its own accounts). */
  async token(sa: string, ns: string, audience?: string): Promise<string> {
    const aud = audience ? ['--audience', audience] : [];
    return (await this.kubectl(['create', 'token', sa, '-n', ns, '--duration', '1h', ...aud])).trim();
  }

  #write(content: string): string {
    const path = join(this.#secrets, `f${++this.#files}`);
    writeFileSync(path, content, { mode: 0o600 });
    return path;
  }

  async tokenFile(sa: string, ns: string, audience: string): Promise<string> {
    return this.#write(await this.token(sa, ns, audience));
  }

  /** A kubeconfig with `sa`'s API server token, in its namespace: a pod's mounted token. */
  async kubeconfig(sa: string, ns: string): Promise<{ path: string; kc: KubeConfig }> {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: this.cp.server, caData: this.cp.caCert.toString('base64') }],
      users: [{ name: sa, token: await this.token(sa, ns) }],
      contexts: [{ name: sa, cluster: 'c', user: sa, namespace: ns }],
      currentContext: sa,
    });
    return { path: this.#write(kc.exportConfig()), kc };
  }

  /** Makes Service `name` reach a local process: ExternalName 127.0.0.1 on `port`. */
  async pointService(ns: string, name: string, port: number, host = '127.0.0.1'): Promise<void> {
    await this.kubectl(['delete', 'service', name, '-n', ns, '--ignore-not-found']);
    await this.apply({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace: ns },
      spec: { type: 'ExternalName', externalName: host, ports: [{ name: 'http', port, protocol: 'TCP' }] },
    });
  }

  remove(): void {
    rmSync(this.#secrets, { recursive: true, force: true });
  }
}

/** A tenant's kustomization exactly as docs/install.md has it (binding renamed per tenant), applied. */
export async function installTenant(cluster: Cluster, scratch: string, ns: string): Promise<Obj[]> {
  await cluster.kubectl(['create', 'namespace', ns]);
  const rename = `[{"op": "replace", "path": "/metadata/name", "value": "berth-broker-tokenreview-${ns}"}]`;
  const dir = kustomization(
    scratch,
    ns,
    'overlays/tenant',
    `namespace: ${ns}\npatches:\n  - target: { kind: ClusterRoleBinding, name: berth-broker-tokenreview-tenant }\n    patch: '${rename}'\n`,
  );
  await cluster.kubectl(['apply', '-k', dir]);
  return cluster.render(dir);
}

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath: string } };
}

/** What a Deployment's pod runs: args, env, account, and whether it mounts the broker token. */
export interface Pod {
  name: string;
  namespace: string;
  args: string[];
  env: Record<string, string>;
  serviceAccount: string;
  apiToken: boolean;
  /** The projected token's audience (BROKER_TOKEN_FILE), when the pod mounts one. */
  brokerAudience?: string;
}

export function podOf(objs: Obj[], name: string): Pod {
  const d = objs.find((o) => o.kind === 'Deployment' && o.metadata.name === name);
  if (!d) throw new Error(`Deployment ${name} not rendered`);
  const namespace = d.metadata.namespace as string;
  const spec = d.spec.template.spec;
  const c = spec.containers[0];
  const serviceAccount: string = spec.serviceAccountName ?? 'default';
  const env: Record<string, string> = {};
  for (const e of (c.env ?? []) as EnvVar[]) {
    const field = e.valueFrom?.fieldRef?.fieldPath;
    if (e.value !== undefined)
      env[e.name] = e.value.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, k: string) => env[k] ?? m);
    else if (field === 'metadata.namespace') env[e.name] = namespace;
    else if (field === 'spec.serviceAccountName') env[e.name] = serviceAccount;
    else throw new Error(`${name}: env ${e.name} has a source this test does not resolve`);
  }
  const projected = (spec.volumes ?? []).flatMap(
    (v: { projected?: { sources: Array<{ serviceAccountToken?: { audience: string } }> } }) =>
      v.projected?.sources.flatMap((s) => (s.serviceAccountToken ? [s.serviceAccountToken.audience] : [])) ??
      [],
  );
  // Every listening port on 0: many processes share this host.
  const args = (c.args as string[]).map((a, i, all) =>
    /^--(metrics-)?port$/.test(all[i - 1] ?? '') ? '0' : a,
  );
  return {
    name,
    namespace,
    args,
    env,
    serviceAccount,
    apiToken: spec.automountServiceAccountToken !== false,
    brokerAudience: projected[0],
  };
}

/** Replaces a rendered setting that names a Service (checked to be what the manifest says). */
export function standIn(pod: Pod, name: string, rendered: string, local: string): Record<string, string> {
  if (pod.env[name] !== rendered)
    throw new Error(`${pod.name}: ${name} is ${JSON.stringify(pod.env[name])}, not ${rendered}`);
  return { [name]: local };
}

const started: Spawned[] = [];

export interface Running {
  proc: Spawned;
  port: number;
  url: string;
  /** The environment it was started with (KUBECONFIG and BROKER_TOKEN_FILE included). */
  env: NodeJS.ProcessEnv;
}

/**
 * Starts `pod` as a process: its kubeconfig when it mounts an API server token, BROKER_TOKEN_FILE
 * when it mounts the projected broker token, `extra` on top; resolves at its `ready` log line.
 */
export async function runPod(
  cluster: Cluster,
  pod: Pod,
  ready: RegExp,
  extra: Record<string, string> = {},
): Promise<Running> {
  const { namespace: ns, serviceAccount: sa } = pod;
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'info', ...pod.env, ...extra };
  if (pod.apiToken) {
    const kc = await cluster.kubeconfig(sa, ns);
    env.KUBECONFIG = kc.path;
  } else delete env.KUBECONFIG;
  if (pod.brokerAudience) env.BROKER_TOKEN_FILE = await cluster.tokenFile(sa, ns, pod.brokerAudience);
  const proc = spawnBerth(pod.args, env);
  started.push(proc);
  const line = await proc.waitForLine(ready, 120_000);
  const port = (JSON.parse(line) as { port?: number }).port ?? 0;
  return { proc, port, url: `http://127.0.0.1:${port}`, env };
}

/** The rights an account needs reach the API server's authorizer a moment after they are applied. */
export async function waitForRight(cluster: Cluster, sa: string, ns: string, question: string) {
  const { kc } = await cluster.kubeconfig(sa, ns);
  await eventually(() => canI(kc, question), 20_000, 100);
}

export async function stopProcesses(): Promise<void> {
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

/** Everything a process logged so far (to check no token was ever logged). */
export const logsOfAll = () => started.map((p) => p.output()).join('\n');

/**
 * What a tenant reads through `/v1/broker/*`, and what it must find of its own there (`secret`: the
 * text a test's tenant wrote into its own Query).
 */
export function tenantReads(secret: (ns: string) => string): Array<[string, (ns: string) => string]> {
  return [
    ['messages', secret],
    ['events', secret],
    ['stream', secret],
    ['stream/support-1?from-beginning=true', secret],
    ['conversations', () => 'conversation_id'],
    ['traces', (ns) => `"${ns}"`],
    ['sessions', () => 'support-1'],
  ];
}
