/**
 * What a cluster test prints before it tears its node down: every container that restarted, why
 * (the last termination's reason and exit code, the pod's probe warnings) and the tail of the
 * log it had before the restart. A pod restarting by itself under a test's load shows only as a
 * later symptom (a Query failed as orphaned, a Deployment briefly unavailable); this says why.
 */
import type { Cluster } from '../security/tenants.ts';
import { eventually } from '../support/wait.ts';

interface PodList {
  items: Array<{
    metadata: { name: string; namespace: string };
    status?: {
      containerStatuses?: Array<{
        name: string;
        restartCount: number;
        lastState?: { terminated?: { reason?: string; exitCode?: number; finishedAt?: string } };
      }>;
    };
  }>;
}

/** Lines describing each restarted container (empty when none restarted). */
export async function restartReport(cluster: Cluster, opts: { skipNamespaces?: string[] } = {}) {
  const pods = JSON.parse(await cluster.kubectl(['get', 'pods', '-A', '-o', 'json'])) as PodList;
  const lines: string[] = [];
  for (const pod of pods.items) {
    const { name, namespace } = pod.metadata;
    if (opts.skipNamespaces?.includes(namespace)) continue;
    for (const c of pod.status?.containerStatuses ?? []) {
      if (c.restartCount === 0) continue;
      const t = c.lastState?.terminated;
      lines.push(
        `restarted ${namespace}/${name}/${c.name} ×${c.restartCount}: ${t?.reason ?? '?'} exit ${t?.exitCode ?? '?'} at ${t?.finishedAt ?? '?'}`,
      );
      const events = await cluster
        .kubectl([
          'get',
          'events',
          '-n',
          namespace,
          '--field-selector',
          `involvedObject.name=${name},type=Warning`,
          '-o',
          'custom-columns=AT:.lastTimestamp,REASON:.reason,MESSAGE:.message',
          '--no-headers',
        ])
        .catch((err: Error) => err.message);
      for (const l of events.trim().split('\n').filter(Boolean).slice(-6)) lines.push(`  event ${l}`);
      const logs = await cluster
        .kubectl(['logs', name, '-n', namespace, '-c', c.name, '--previous', '--tail=25'])
        .catch((err: Error) => err.message);
      for (const l of logs.trim().split('\n').slice(-25)) lines.push(`  | ${l.slice(0, 400)}`);
    }
  }
  return lines;
}

/**
 * Waits (up to 60 s) until every Deployment of `namespace` has all its replicas available. Available
 * at the install's `kubectl wait`, a pod may still be taken out of its Service for a period by a
 * probe the loaded node answered late; if one never comes back, the failure names the Deployments
 * and says which pods restarted and why.
 */
export async function waitDeploymentsAvailable(
  cluster: Cluster,
  namespace: string,
  opts: { skipNamespaces?: string[] } = {},
): Promise<void> {
  let unavailable: string[] = [];
  await eventually(
    async () => {
      const list = await cluster.getJson<{
        items: Array<{
          metadata: { name: string };
          spec: { replicas?: number };
          status?: { availableReplicas?: number };
        }>;
      }>(namespace, 'deployments');
      unavailable = list.items
        .filter((d) => (d.status?.availableReplicas ?? 0) !== (d.spec.replicas ?? 1))
        .map(
          (d) =>
            `${namespace}/${d.metadata.name} ${d.status?.availableReplicas ?? 0}/${d.spec.replicas ?? 1}`,
        );
      return unavailable.length === 0;
    },
    60_000,
    500,
  ).catch(async () => {
    const why = await restartReport(cluster, opts);
    throw new Error(`not available: ${unavailable.join(', ')}\n${why.join('\n')}`);
  });
}
