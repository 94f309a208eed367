import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { stringify } from 'yaml';

/** The node's state dir layout: everything the node writes lives below `root`. */
export function nodeDirs(root: string) {
  const p = (...s: string[]) => [root, ...s].join('/');
  return {
    root,
    containerdRoot: p('containerd', 'root'),
    containerdState: p('containerd', 'state'),
    containerdSock: p('containerd', 'containerd.sock'),
    containerdConfig: p('containerd', 'config.toml'),
    cniConf: p('cni', 'net.d'),
    cniIpam: p('cni', 'ipam'),
    kubelet: p('kubelet'),
    podLogs: p('pod-logs'),
    config: p('config'),
    logs: p('logs'),
  };
}
export type NodeDirs = ReturnType<typeof nodeDirs>;

/**
 * containerd 1.6 (config version 2) with its own root, state and socket. The CRI plugin: the locally
 * imported sandbox image, `restrict_oom_score_adj` (the kernel here withholds CAP_SYS_RESOURCE, so
 * raising a score fails every sandbox), CNI from Debian's plugins with our conf dir, network
 * namespaces under the state dir, runc without systemd cgroups. Plugins that write outside the
 * state dir (`opt` makes /opt/containerd) or are useless here are disabled.
 */
export function containerdConfig(d: NodeDirs, sandboxImage: string, cniBinDir: string): string {
  return `version = 2
root = ${JSON.stringify(d.containerdRoot)}
state = ${JSON.stringify(d.containerdState)}
oom_score = 0
disabled_plugins = [
  "io.containerd.internal.v1.opt",
  "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.internal.v1.tracing",
]

[grpc]
  address = ${JSON.stringify(d.containerdSock)}

[ttrpc]
  address = ""

[debug]
  level = "warn"

[metrics]
  address = ""

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = ${JSON.stringify(sandboxImage)}
  restrict_oom_score_adj = true
  disable_apparmor = true
  enable_selinux = false
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  max_container_log_line_size = 16384
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    discard_unpacked_layers = false
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = ${JSON.stringify(`${d.containerdState}/runc`)}
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = ${JSON.stringify(cniBinDir)}
    conf_dir = ${JSON.stringify(d.cniConf)}
    max_conf_num = 1
`;
}

/** A bridge (`cni0`, the pods' gateway, masquerading outbound traffic) with host-local addresses. */
export function cniConflist(podCidr: string, ipamDir: string): string {
  return JSON.stringify(
    {
      cniVersion: '1.0.0',
      name: 'berth',
      plugins: [
        {
          type: 'bridge',
          bridge: 'cni0',
          isGateway: true,
          ipMasq: true,
          hairpinMode: true,
          ipam: {
            type: 'host-local',
            ranges: [[{ subnet: podCidr }]],
            routes: [{ dst: '0.0.0.0/0' }],
            dataDir: ipamDir,
          },
        },
      ],
    },
    null,
    2,
  );
}

/** The host's resolv.conf without loopback nameservers (a pod cannot reach the host's 127.0.0.x). */
export function podResolvConf(hostFile = '/etc/resolv.conf'): string {
  let text = '';
  try {
    text = readFileSync(hostFile, 'utf8');
  } catch {}
  return (
    text
      .split('\n')
      .filter((l) => !/^\s*nameserver\s+(127\.|::1\b)/.test(l))
      .join('\n')
      .trim() + '\n'
  );
}

export interface KubeletSettings {
  d: NodeDirs;
  cgroupRoot: string;
  caFile: string;
  tlsCert: string;
  tlsKey: string;
  nodeIp: string;
  port: number;
  healthzPort: number;
  dnsIp: string;
  resolvConf: string;
}

/**
 * The kubelet: cgroup v1 allowed, cgroupfs driver below our own cgroup root, our containerd,
 * cluster DNS, x509 + webhook authentication and webhook authorization (the API server's
 * SubjectAccessReview), all state and pod logs under the state dir, evictions and image GC relaxed
 * (a developer's disk or memory is not the node's to police), no swap check.
 */
export function kubeletConfig(s: KubeletSettings): string {
  return stringify({
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    failCgroupV1: false,
    cgroupDriver: 'cgroupfs',
    cgroupRoot: s.cgroupRoot,
    cgroupsPerQOS: true,
    enforceNodeAllocatable: ['pods'],
    containerRuntimeEndpoint: `unix://${s.d.containerdSock}`,
    imageServiceEndpoint: `unix://${s.d.containerdSock}`,
    address: s.nodeIp,
    port: s.port,
    readOnlyPort: 0,
    healthzBindAddress: '127.0.0.1',
    healthzPort: s.healthzPort,
    tlsCertFile: s.tlsCert,
    tlsPrivateKeyFile: s.tlsKey,
    rotateCertificates: false,
    serverTLSBootstrap: false,
    authentication: {
      anonymous: { enabled: false },
      webhook: { enabled: true, cacheTTL: '30s' },
      x509: { clientCAFile: s.caFile },
    },
    authorization: { mode: 'Webhook', webhook: { cacheAuthorizedTTL: '30s', cacheUnauthorizedTTL: '10s' } },
    clusterDNS: [s.dnsIp],
    clusterDomain: 'cluster.local',
    resolvConf: s.resolvConf,
    podLogsDir: s.d.podLogs,
    failSwapOn: false,
    memorySwap: {},
    protectKernelDefaults: false,
    makeIPTablesUtilChains: true,
    evictionHard: {
      'memory.available': '50Mi',
      'nodefs.available': '1%',
      'nodefs.inodesFree': '1%',
      'imagefs.available': '1%',
      'imagefs.inodesFree': '1%',
    },
    evictionPressureTransitionPeriod: '5s',
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    imageMinimumGCAge: '24h',
    serializeImagePulls: false,
    maxPods: 110,
    shutdownGracePeriod: '0s',
    shutdownGracePeriodCriticalPods: '0s',
    syncFrequency: '10s',
    fileCheckFrequency: '20s',
    nodeStatusUpdateFrequency: '5s',
    nodeStatusReportFrequency: '1m',
    containerLogMaxSize: '10Mi',
    containerLogMaxFiles: 2,
    kubeAPIQPS: 50,
    kubeAPIBurst: 100,
    logging: { format: 'text', verbosity: 1 },
  });
}

export interface ProxySettings {
  kubeconfig: string;
  nodeName: string;
  clusterCidr: string;
  nodeIp: string;
  healthzPort: number;
  metricsPort: number;
}

/** kube-proxy in nftables mode; conntrack limits and timeouts left as the host has them. */
export function kubeProxyConfig(s: ProxySettings): string {
  return stringify({
    apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
    kind: 'KubeProxyConfiguration',
    mode: 'nftables',
    clientConnection: { kubeconfig: s.kubeconfig, qps: 50, burst: 100 },
    hostnameOverride: s.nodeName,
    clusterCIDR: s.clusterCidr,
    detectLocalMode: 'ClusterCIDR',
    bindAddress: s.nodeIp,
    healthzBindAddress: `127.0.0.1:${s.healthzPort}`,
    metricsBindAddress: `127.0.0.1:${s.metricsPort}`,
    nodePortAddresses: [`${s.nodeIp}/32`],
    nftables: { minSyncPeriod: '0s', syncPeriod: '30s' },
    conntrack: {
      maxPerCore: 0,
      min: 0,
      tcpEstablishedTimeout: '0s',
      tcpCloseWaitTimeout: '0s',
      udpTimeout: '0s',
      udpStreamTimeout: '0s',
    },
    logging: { format: 'text', verbosity: 0 },
  });
}

/** A kubeconfig that authenticates with a client certificate. */
export async function writeCertKubeconfig(
  path: string,
  server: string,
  caFile: string,
  cert: { cert: string; key: string },
  user: string,
): Promise<void> {
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'berth-local', cluster: { server, 'certificate-authority': caFile } }],
    users: [{ name: user, user: { 'client-certificate': cert.cert, 'client-key': cert.key } }],
    contexts: [{ name: 'berth-local', context: { cluster: 'berth-local', user } }],
    'current-context': 'berth-local',
  };
  await writeFile(path, stringify(doc), { mode: 0o600 });
}
