/**
 * `make up-node`: the platform as pods on a local node (issue 33) — what `berth up` runs in one
 * process, here the way a cluster runs it. A control plane serving pods and a node on this host
 * (pkg/kube/controlplane/node.ts: containerd, kubelet, kube-proxy, CoreDNS; needs root), the
 * `berth:dev` image built from this checkout (hack/build-image.ts) and imported, `manifests/base`
 * applied with it (the API in AUTH_MODE=open, for a local try), a Memory `default` at the broker's
 * Service and the built-in Model `demo`. Prints the Services' addresses (reachable from this host
 * through kube-proxy) and the kubeconfig; Ctrl-C tears everything down and puts the host back.
 *
 *   node hack/up-node.ts [--state-dir DIR]
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { API_VERSION, DEMO_MODEL } from '../pkg/api/index.ts';
import { projectRoot, startControlPlane } from '../pkg/kube/controlplane/index.ts';
import { startNode } from '../pkg/kube/controlplane/node.ts';
import { BERTH_IMAGE, buildBerthImage } from './build-image.ts';

const NS = 'berth-system';
const ROOT = projectRoot();

const { values } = parseArgs({ options: { 'state-dir': { type: 'string' } } });
const log = (m: string) => console.log(`up-node: ${m}`);
const tmp = mkdtempSync(join(tmpdir(), 'berth-up-node-'));
const state = values['state-dir'] ?? join(tmp, 'state');

/** The local install's kustomization: manifests/base with the local image, the API open. */
function kustomization(): string {
  const dir = mkdtempSync(join(ROOT, '.berth-kustomize-'));
  const [name, tag] = BERTH_IMAGE.split(':');
  const api =
    'spec: { template: { spec: { containers: [{ name: api, env: [{ name: AUTH_MODE, value: open }] }] } } }';
  writeFileSync(
    join(dir, 'kustomization.yaml'),
    `resources: [${relative(dir, join(ROOT, 'manifests', 'base'))}]\n` +
      `images:\n  - name: berth\n    newName: ${name}\n    newTag: ${tag}\n` +
      `patches:\n  - patch: |-\n      apiVersion: apps/v1\n      kind: Deployment\n      metadata: { name: berth-api }\n      ${api}\n`,
  );
  return dir;
}

async function main(): Promise<void> {
  mkdirSync(state, { recursive: true });
  const image = buildBerthImage(join(tmp, 'images'));
  const cp = await startControlPlane({
    crdDir: join(ROOT, 'crds'),
    stateDir: join(state, 'cp'),
    node: {},
    log,
  });
  const node = await startNode(cp, { stateDir: join(state, 'node'), log });
  let stopping = false;
  const stop = async () => {
    if (stopping) process.exit(1);
    stopping = true;
    log('stopping: pods, node, control plane; the host is put back as it was');
    await node.stop();
    await cp.stop();
    rmSync(tmp, { recursive: true, force: true });
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
  const kubectl = (args: string[], input?: string) =>
    execFileSync(cp.binaries.kubectl, ['--kubeconfig', cp.kubeconfigPath, ...args], {
      input,
      encoding: 'utf8',
    });
  await node.importImage((await image).file);
  kubectl(
    ['apply', '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }),
  );
  const dir = kustomization();
  try {
    kubectl(['apply', '-k', dir]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const meta = (name: string) => ({ name, namespace: NS });
  kubectl(
    ['apply', '-f', '-'],
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        {
          apiVersion: API_VERSION,
          kind: 'Memory',
          metadata: meta('default'),
          spec: { address: { valueFrom: { serviceRef: { name: 'berth-broker', port: 80 } } } },
        },
        { apiVersion: API_VERSION, kind: 'Model', metadata: meta(DEMO_MODEL.name), spec: DEMO_MODEL.spec },
      ],
    }),
  );
  log('waiting for every Deployment to be available');
  kubectl(['wait', '--for=condition=Available', 'deployment', '--all', '-n', NS, '--timeout=300s']);
  const ip = (svc: string) => kubectl(['get', 'service', svc, '-n', NS, '-o', 'jsonpath={.spec.clusterIP}']);
  console.log(
    `\n  kubeconfig:  ${cp.kubeconfigPath}\n  API service: http://${ip('berth-api')}:8000  (chat: /compat/v1)\n  broker:      http://${ip('berth-broker')}  (needs a service-account token)\n  dashboard:   http://${ip('berth-dashboard')}:3000/\n\n  kubectl --kubeconfig ${cp.kubeconfigPath} -n ${NS} get pods\n  Ctrl-C stops everything.\n`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
