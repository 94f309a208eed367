import type { KubernetesObject } from '@kubernetes/client-node';

/** The identity of kube-router's client certificate (see node-pki.ts). */
export const KUBE_ROUTER_USER = 'system:kube-router';

/** What kube-router's network policy controller watches (its upstream ClusterRole, firewall part). */
export function kubeRouterRbac(): KubernetesObject[] {
  const name = 'berth:kube-router';
  const objects: Array<Record<string, unknown>> = [
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name },
      rules: [
        {
          apiGroups: [''],
          resources: ['namespaces', 'pods', 'services', 'nodes', 'endpoints'],
          verbs: ['list', 'get', 'watch'],
        },
        { apiGroups: ['networking.k8s.io'], resources: ['networkpolicies'], verbs: ['list', 'get', 'watch'] },
        { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'get', 'watch'] },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: KUBE_ROUTER_USER }],
    },
  ];
  return objects as KubernetesObject[];
}

/**
 * kube-router as a NetworkPolicy enforcer only (iptables + ipset): no routing, no service proxy
 * (kube-proxy has that), no CNI config of its own.
 */
export function kubeRouterArgs(o: {
  kubeconfig: string;
  nodeName: string;
  serviceCidr: string;
  healthPort: number;
}): string[] {
  return [
    `--kubeconfig=${o.kubeconfig}`,
    `--hostname-override=${o.nodeName}`,
    '--run-firewall=true',
    '--run-router=false',
    '--run-service-proxy=false',
    '--run-loadbalancer=false',
    '--enable-cni=false',
    '--enable-ipv4=true',
    '--enable-ipv6=false',
    `--service-cluster-ip-range=${o.serviceCidr}`,
    `--health-port=${o.healthPort}`,
    '--metrics-port=0',
    '--iptables-sync-period=1m',
    '--v=1',
  ];
}
