import { join } from 'node:path';
import type { ControlPlane } from './index.ts';
import { writeCertKubeconfig } from './node-config.ts';
import { KUBE_ROUTER_USER } from './node-netpol.ts';
import { type IssuedCert, issueCert } from './pki.ts';

export interface NodeCredentials {
  kubeletServing: IssuedCert;
  kubeconfigs: {
    kubelet: string;
    controllerManager: string;
    scheduler: string;
    proxy: string;
    kubeRouter: string;
  };
}

/**
 * Client certificates signed by the control plane's CA for the node's components, under the
 * identities the API server's default RBAC (and the Node authorizer) knows — `system:node:<name>`
 * in `system:nodes`, `system:kube-controller-manager`, `system:kube-scheduler`, `system:kube-proxy`
 * — and kube-router's (bound by node-netpol.ts), a serving certificate for the kubelet, and a kubeconfig per component in `configDir`.
 */
export async function nodeCredentials(
  cp: ControlPlane,
  nodeName: string,
  configDir: string,
): Promise<NodeCredentials> {
  const dir = join(cp.stateDir, 'pki');
  const clients = {
    kubelet: { name: `kubelet-${nodeName}`, cn: `system:node:${nodeName}`, orgs: ['system:nodes'] },
    controllerManager: { name: 'kube-controller-manager', cn: 'system:kube-controller-manager' },
    scheduler: { name: 'kube-scheduler', cn: 'system:kube-scheduler' },
    proxy: { name: 'kube-proxy', cn: 'system:kube-proxy' },
    kubeRouter: { name: 'kube-router', cn: KUBE_ROUTER_USER },
  } as const;
  const [kubeletServing, ...certs] = await Promise.all([
    issueCert(dir, `kubelet-serving-${nodeName}`, {
      cn: `system:node:${nodeName}`,
      orgs: ['system:nodes'],
      serverIps: [cp.address, '127.0.0.1'],
      serverNames: [nodeName, 'localhost'],
    }),
    ...Object.values(clients).map((c) =>
      issueCert(dir, c.name, { cn: c.cn, orgs: 'orgs' in c ? [...c.orgs] : [] }),
    ),
  ]);
  const keys = Object.keys(clients) as Array<keyof typeof clients>;
  const kubeconfigs = Object.fromEntries(
    keys.map((k) => [k, join(configDir, `${clients[k].name}.kubeconfig`)]),
  ) as NodeCredentials['kubeconfigs'];
  await Promise.all(
    keys.map((k, i) =>
      writeCertKubeconfig(kubeconfigs[k], cp.server, cp.pki.caCert, certs[i] as IssuedCert, clients[k].cn),
    ),
  );
  return { kubeletServing: kubeletServing as IssuedCert, kubeconfigs };
}
