import { join } from 'node:path';
import { ApiextensionsV1Api, KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { applyObjects, readManifests } from '../apply.ts';
import { projectRoot } from './binaries.ts';
import { waitFor } from './https-probe.ts';

const FIELD_MANAGER = 'berth-local-bootstrap';

/** Binds the local token users to the ClusterRoles of manifests/rbac.yaml. */
function userBindings(): KubernetesObject[] {
  return (['controller', 'gateway'] as const).map((user) => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: `berth-local-${user}` },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `berth-${user}` },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
  })) as KubernetesObject[];
}

export async function applyCrds(kc: KubeConfig, crdDir: string, timeoutMs = 60_000): Promise<string[]> {
  const crds = readManifests(crdDir);
  await applyObjects(kc, crds, { fieldManager: FIELD_MANAGER });
  const api = kc.makeApiClient(ApiextensionsV1Api);
  const names = crds.map((c) => c.metadata?.name ?? '');
  await Promise.all(
    names.map((name) =>
      waitFor(`CRD ${name} Established`, timeoutMs, async () => {
        const crd = await api.readCustomResourceDefinition({ name });
        return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')
          ? true
          : undefined;
      }),
    ),
  );
  return names;
}

export async function bootstrapCluster(
  kubeconfigPath: string,
  crdDir: string | undefined,
  log: (m: string) => void,
): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  const rbac = readManifests(join(projectRoot(), 'manifests', 'rbac.yaml')).filter(
    (o) => o.kind === 'ClusterRole',
  );
  await applyObjects(kc, [...rbac, ...userBindings()], { fieldManager: FIELD_MANAGER });
  if (crdDir) {
    const names = await applyCrds(kc, crdDir);
    log(`${names.length} CRDs established`);
  }
}
