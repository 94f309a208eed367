/**
 * What every cluster test file starts with (issue 33): a control plane serving pods, a local node
 * (pkg/kube/controlplane/node.ts), and the `berth:dev` image built from this checkout
 * (hack/build-image.ts) imported into it. Kustomizations are written in a git-ignored scratch dir
 * inside the repository, since kustomize only loads resources by relative path.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { BERTH_IMAGE, buildBerthImage } from '../../hack/build-image.ts';
import { type ControlPlane, projectRoot, startControlPlane } from '../../pkg/kube/controlplane/index.ts';
import { type LocalNode, startNode } from '../../pkg/kube/controlplane/node.ts';
import { scratchDir } from '../install/support.ts';
import { Cluster } from '../security/tenants.ts';
import { restartReport } from './restarts.ts';

const ROOT = projectRoot();
const MANIFESTS = join(ROOT, 'manifests');

export interface Stack {
  cp: ControlPlane;
  node: LocalNode;
  cluster: Cluster;
  /** A kustomization over `base` (a manifests/ path) with the local image and `extra` lines. */
  kustomization(name: string, base: string, extra?: string): string;
  stop(): Promise<void>;
}

/** The image tag the manifests' `berth:0.1.0` is replaced by (kustomize `images:`). */
export const IMAGES = `images:\n  - name: berth\n    newName: ${BERTH_IMAGE.split(':')[0]}\n    newTag: ${BERTH_IMAGE.split(':')[1]}\n`;

export async function startStack(log: (m: string) => void = () => {}): Promise<Stack> {
  const tmp = mkdtempSync(join(tmpdir(), 'berth-cluster-'));
  const scratch = scratchDir();
  const image = buildBerthImage(join(tmp, 'images'));
  const cp = await startControlPlane({ crdDir: join(ROOT, 'crds'), stateDir: join(tmp, 'cp'), node: {} });
  let node: LocalNode | undefined;
  try {
    node = await startNode(cp, { log: (m) => log(`node: ${m}`) });
    const archive = await image;
    await node.importImage(archive.file);
    log(`image ${archive.name} imported (${Math.round(archive.size / 1e6)} MB)`);
  } catch (err) {
    await node?.stop();
    await cp.stop();
    throw err;
  }
  const cluster = new Cluster(cp);
  const started = node;
  return {
    cp,
    node: started,
    cluster,
    kustomization(name, base, extra = '') {
      const dir = join(scratch.dir, name);
      mkdirSync(dir, { recursive: true });
      const rel = relative(dir, join(MANIFESTS, base));
      writeFileSync(join(dir, 'kustomization.yaml'), `${extra}${IMAGES}resources: [${rel}]\n`);
      return dir;
    },
    async stop() {
      // Why any pod restarted by itself (an expected crash loop included): read before the node goes.
      const restarts = await restartReport(cluster).catch((err: Error) => [
        `restart report failed: ${err.message}`,
      ]);
      if (restarts.length) log(`pods that restarted:\n${restarts.join('\n')}`);
      await started.stop();
      await cp.stop();
      cluster.remove();
      scratch.remove();
      rmSync(tmp, { recursive: true, force: true });
    },
  };
}

/**
 * What a cluster test's Query runs against in `ns`: Model `default` at the fake model's Service,
 * Memory `default` at the namespace's `berth-broker` (port 80), Agent `helper` on that Model.
 */
export function helperAgentObjects(ns: string): object[] {
  const obj = (kind: string, name: string, spec: object) => ({
    apiVersion: 'berth.dev/v1alpha1',
    kind,
    metadata: { name, namespace: ns },
    spec,
  });
  return [
    obj('Model', 'default', {
      type: 'openai',
      model: 'cluster',
      baseUrl: `http://fake-model.${ns}.svc.cluster.local/v1`,
    }),
    obj('Memory', 'default', {
      address: { valueFrom: { serviceRef: { name: 'berth-broker', port: 80 } } },
    }),
    obj('Agent', 'helper', { prompt: 'You help.', modelRef: { name: 'default' } }),
  ];
}

/** A Query in `ns` asking Agent `helper` (helperAgentObjects) `input`. */
export function helperQuery(ns: string, name: string, input: string): object {
  return {
    apiVersion: 'berth.dev/v1alpha1',
    kind: 'Query',
    metadata: { name, namespace: ns },
    spec: { input, target: { type: 'agent', name: 'helper' } },
  };
}

/**
 * The fake model as a pod of the berth image (`node /fake/fake-model.mjs`, the script from a
 * ConfigMap) behind Service `fake-model` port 80 in `ns`: baseUrl
 * `http://fake-model.<ns>.svc.cluster.local/v1`.
 */
export function fakeModelObjects(ns: string, script: string): object[] {
  const labels = { app: 'fake-model' };
  return [
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'fake-model', namespace: ns },
      data: { 'fake-model.mjs': script },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'fake-model', namespace: ns },
      spec: {
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            automountServiceAccountToken: false,
            securityContext: { runAsNonRoot: true, runAsUser: 1000 },
            containers: [
              {
                name: 'model',
                image: BERTH_IMAGE,
                command: ['node', '/fake/fake-model.mjs'],
                ports: [{ containerPort: 8080 }],
                readinessProbe: { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 1 },
                volumeMounts: [{ name: 'script', mountPath: '/fake' }],
              },
            ],
            volumes: [{ name: 'script', configMap: { name: 'fake-model' } }],
          },
        },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'fake-model', namespace: ns },
      spec: { selector: labels, ports: [{ port: 80, targetPort: 8080 }] },
    },
  ];
}
