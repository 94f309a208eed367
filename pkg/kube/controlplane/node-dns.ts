import { Resolver } from 'node:dns/promises';
import type { KubernetesObject } from '@kubernetes/client-node';

/** CoreDNS listens here inside its pod (non-root: no port below 1024); the Service maps 53 to it. */
const DNS_PORT = 1053;
const labels = { 'k8s-app': 'kube-dns' };

/**
 * CoreDNS as the cluster DNS, the usual way: a Deployment (one replica, non-root, read-only root,
 * no capabilities) behind the `kube-dns` Service at a fixed cluster IP, with the RBAC it needs to
 * watch Services and EndpointSlices. Names resolve as `<svc>.<ns>.svc.cluster.local`; other names
 * go to the nameservers of the kubelet's resolv.conf.
 */
export function corednsObjects(image: string, dnsIp: string): KubernetesObject[] {
  const ns = 'kube-system';
  const corefile = `.:${DNS_PORT} {
    errors
    health :8080
    ready :8181
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 30
    }
    forward . /etc/resolv.conf
    cache 30
    loadbalance
}
`;
  const objects: Array<Record<string, unknown>> = [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'coredns', namespace: ns } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'system:coredns' },
      rules: [
        {
          apiGroups: [''],
          resources: ['endpoints', 'services', 'pods', 'namespaces'],
          verbs: ['list', 'watch'],
        },
        { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'system:coredns' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:coredns' },
      subjects: [{ kind: 'ServiceAccount', name: 'coredns', namespace: ns }],
    },
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'coredns', namespace: ns },
      data: { Corefile: corefile },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'coredns', namespace: ns, labels },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: 'coredns',
            priorityClassName: 'system-cluster-critical',
            dnsPolicy: 'Default',
            enableServiceLinks: false,
            securityContext: {
              runAsNonRoot: true,
              runAsUser: 65532,
              runAsGroup: 65532,
              seccompProfile: { type: 'RuntimeDefault' },
            },
            containers: [
              {
                name: 'coredns',
                image,
                imagePullPolicy: 'Never',
                args: ['-conf', '/etc/coredns/Corefile'],
                ports: [
                  { name: 'dns', containerPort: DNS_PORT, protocol: 'UDP' },
                  { name: 'dns-tcp', containerPort: DNS_PORT, protocol: 'TCP' },
                ],
                resources: { requests: { cpu: '50m', memory: '32Mi' }, limits: { memory: '128Mi' } },
                securityContext: {
                  allowPrivilegeEscalation: false,
                  readOnlyRootFilesystem: true,
                  capabilities: { drop: ['ALL'] },
                },
                readinessProbe: { httpGet: { path: '/ready', port: 8181 }, periodSeconds: 2 },
                livenessProbe: {
                  httpGet: { path: '/health', port: 8080 },
                  periodSeconds: 10,
                  failureThreshold: 5,
                },
                volumeMounts: [{ name: 'config', mountPath: '/etc/coredns', readOnly: true }],
              },
            ],
            volumes: [{ name: 'config', configMap: { name: 'coredns' } }],
          },
        },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'kube-dns', namespace: ns, labels },
      spec: {
        selector: labels,
        clusterIP: dnsIp,
        ports: [
          { name: 'dns', port: 53, targetPort: DNS_PORT, protocol: 'UDP' },
          { name: 'dns-tcp', port: 53, targetPort: DNS_PORT, protocol: 'TCP' },
        ],
      },
    },
  ];
  return objects as KubernetesObject[];
}

/** Asks the cluster DNS at `dnsIp` for `name` (A records) once. */
export async function resolveIn(dnsIp: string, name: string, timeoutMs = 1000): Promise<string[]> {
  const r = new Resolver({ timeout: timeoutMs, tries: 1 });
  r.setServers([dnsIp]);
  return r.resolve4(name);
}

/** The tenth address of a service CIDR (`10.0.0.0/24` → `10.0.0.10`), where kube-dns is by convention. */
export function dnsIpOf(serviceCidr: string): string {
  const [base = ''] = serviceCidr.split('/');
  const n = base.split('.').reduce((acc, o) => acc * 256 + Number(o), 0) + 10;
  return [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
}
