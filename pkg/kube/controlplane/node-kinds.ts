import { kindRef } from '../kinds.ts';

interface Condition {
  type: string;
  status: string;
}

export interface NodeObject {
  metadata?: { name?: string };
  spec?: { podCIDR?: string };
  status?: { conditions?: Condition[] };
}

export interface DeploymentObject {
  metadata?: { name?: string; generation?: number };
  spec?: { replicas?: number };
  status?: {
    observedGeneration?: number;
    availableReplicas?: number;
    updatedReplicas?: number;
    conditions?: Condition[];
  };
}

export const Kinds = {
  Node: kindRef<NodeObject>({ group: '', version: 'v1', kind: 'Node', plural: 'nodes', namespaced: false }),
  Deployment: kindRef<DeploymentObject>({
    group: 'apps',
    version: 'v1',
    kind: 'Deployment',
    plural: 'deployments',
    namespaced: true,
  }),
} as const;

export const nodeCondition = (n: NodeObject, type: string) =>
  n.status?.conditions?.find((c) => c.type === type)?.status;

/** Rolled out: the controller saw the current spec and every wanted replica is updated and available. */
export function deploymentAvailable(d: DeploymentObject): boolean {
  const want = d.spec?.replicas ?? 1;
  const s = d.status ?? {};
  return (
    (s.observedGeneration ?? 0) >= (d.metadata?.generation ?? 1) &&
    (s.updatedReplicas ?? 0) >= want &&
    (s.availableReplicas ?? 0) >= want
  );
}
