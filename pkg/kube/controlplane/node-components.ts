import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ControlPlane } from './index.ts';
import { kubeletConfig, kubeProxyConfig, type NodeDirs, podResolvConf } from './node-config.ts';
import type { NodeCredentials } from './node-pki.ts';
import { freePort } from './ports.ts';

export interface ComponentInputs {
  d: NodeDirs;
  cp: ControlPlane;
  creds: NodeCredentials;
  cgroupRoot: string;
  nodeName: string;
  clusterCidr: string;
  dnsIp: string;
}

export type ComponentName = 'kube-controller-manager' | 'kube-scheduler' | 'kube-proxy' | 'kubelet';

/** Client kubeconfig, also for authenticating and authorizing calls to the component's own endpoints. */
const authn = (kc: string) => [
  `--kubeconfig=${kc}`,
  `--authentication-kubeconfig=${kc}`,
  `--authorization-kubeconfig=${kc}`,
];

/**
 * Writes the kubelet's and kube-proxy's config files (and the pods' resolv.conf) into the node's
 * config dir and returns each component's command line. The controller manager allocates node pod
 * CIDRs from `clusterCidr`, signs service-account tokens with the control plane's key and publishes
 * its CA (every default controller runs: Deployments, ReplicaSets, Endpoints, EndpointSlices,
 * ServiceAccounts, tokens, namespace deletion, garbage collection). No leader election (one node),
 * no serving ports for the controller manager and scheduler.
 */
export async function componentArgs(i: ComponentInputs): Promise<Record<ComponentName, string[]>> {
  const { d, cp, creds } = i;
  const [kubeletPort, kubeletHealthz, proxyHealthz, proxyMetrics] = await Promise.all([
    freePort(),
    freePort(),
    freePort(),
    freePort(),
  ]);
  const resolvConf = join(d.config, 'resolv.conf');
  const kubeletCfg = join(d.config, 'kubelet.yaml');
  const proxyCfg = join(d.config, 'kube-proxy.yaml');
  await Promise.all([
    writeFile(resolvConf, podResolvConf()),
    writeFile(
      kubeletCfg,
      kubeletConfig({
        d,
        cgroupRoot: i.cgroupRoot,
        caFile: cp.pki.caCert,
        tlsCert: creds.kubeletServing.cert,
        tlsKey: creds.kubeletServing.key,
        nodeIp: cp.address,
        port: kubeletPort,
        healthzPort: kubeletHealthz,
        dnsIp: i.dnsIp,
        resolvConf,
      }),
    ),
    writeFile(
      proxyCfg,
      kubeProxyConfig({
        kubeconfig: creds.kubeconfigs.proxy,
        nodeName: i.nodeName,
        clusterCidr: i.clusterCidr,
        nodeIp: cp.address,
        healthzPort: proxyHealthz,
        metricsPort: proxyMetrics,
      }),
    ),
  ]);
  return {
    'kube-controller-manager': [
      ...authn(creds.kubeconfigs.controllerManager),
      '--bind-address=127.0.0.1',
      '--secure-port=0',
      '--leader-elect=false',
      '--use-service-account-credentials',
      '--allocate-node-cidrs',
      `--cluster-cidr=${i.clusterCidr}`,
      '--node-cidr-mask-size=24',
      `--service-cluster-ip-range=${cp.serviceCidr}`,
      `--service-account-private-key-file=${cp.pki.saKey}`,
      `--root-ca-file=${cp.pki.caCert}`,
      `--cluster-signing-cert-file=${cp.pki.caCert}`,
      `--cluster-signing-key-file=${cp.pki.caKey}`,
      '--kube-api-qps=50',
      '--kube-api-burst=100',
      '--v=1',
    ],
    'kube-scheduler': [
      ...authn(creds.kubeconfigs.scheduler),
      '--bind-address=127.0.0.1',
      '--secure-port=0',
      '--leader-elect=false',
      '--v=1',
    ],
    'kube-proxy': [`--config=${proxyCfg}`],
    kubelet: [
      `--config=${kubeletCfg}`,
      `--kubeconfig=${creds.kubeconfigs.kubelet}`,
      `--root-dir=${d.kubelet}`,
      `--cert-dir=${join(d.kubelet, 'pki')}`,
      `--hostname-override=${i.nodeName}`,
      `--node-ip=${cp.address}`,
      '--v=1',
    ],
  };
}
