import { join } from 'node:path';
import { KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { applyObjects, readManifests } from '../apply.ts';
import { HttpClient } from '../client/http-client.ts';
import type { Client } from '../client/types.ts';
import { CoreKinds, type KindRef, Scheme } from '../kinds.ts';
import { projectRoot } from './binaries.ts';
import { waitFor } from './https-probe.ts';

const FIELD_MANAGER = 'berth-local-bootstrap';

/** Binds the local token users to the ClusterRoles of hack/local-rbac.yaml. */
function userBindings(): KubernetesObject[] {
  return (['controller', 'gateway'] as const).map((user) => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: `berth-local-${user}` },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `berth-${user}` },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
  })) as KubernetesObject[];
}

interface Crd {
  status?: { conditions?: Array<{ type: string; status: string }> };
}

/** Applies the CRDs of a directory and waits until the API server serves each of them. */
export async function applyCrds(client: Client, crdDir: string, timeoutMs = 60_000): Promise<string[]> {
  const crds = readManifests(crdDir);
  await applyObjects(client, crds, { fieldManager: FIELD_MANAGER });
  const names = crds.map((c) => c.metadata?.name ?? '');
  const ref = CoreKinds.CustomResourceDefinition as KindRef<Crd>;
  await Promise.all(
    names.map((name) =>
      waitFor(`CRD ${name} Established`, timeoutMs, async () => {
        const crd = await client.get(ref, { name });
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
  const client = new HttpClient({ kc, scheme: new Scheme() });
  const rbac = readManifests(join(projectRoot(), 'hack', 'local-rbac.yaml')).filter(
    (o) => o.kind === 'ClusterRole',
  );
  await applyObjects(client, [...rbac, ...userBindings()], { fieldManager: FIELD_MANAGER });
  if (crdDir) {
    const names = await applyCrds(client, crdDir);
    log(`${names.length} CRDs established`);
  }
}
