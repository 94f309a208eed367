import { type Command, Option } from 'commander';

/**
 * `berth controller`'s flags, apart from the command itself so `berth` can declare them without
 * loading the controller (commands are imported only when they run: see cmd/berth.ts).
 */
export interface ControllerCliOptions {
  port: number;
  namespace?: string;
  metricsPort: number;
  metricsCertFile?: string;
  metricsKeyFile?: string;
  brokerUrl?: string;
  brokerNamespace?: string;
  tenantBrokers: boolean;
  tenantBrokerService: string;
  brokerTokenAccount?: string;
  engine: boolean;
  leaderElect: boolean;
  leaseNamespace?: string;
  leaseName: string;
  leaseDuration: string;
  renewDeadline: string;
  retryPeriod: string;
  purgeGrace: string;
  purgeRetryMax: string;
  informerWatchdog: string;
  informerResync: string;
  marketplaceSeedFile?: string;
  marketplaceSeedConfigmap?: string;
}

function parsePortOption(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new Error(`port must be 0-65535, got ${JSON.stringify(v)}`);
  return n;
}

/** `berth controller` options beyond --port and --namespace (which berth.ts declares). */
export function addControllerOptions(cmd: Command): Command {
  const dur = (flag: string, desc: string, def: string, env: string) =>
    new Option(`${flag} <duration>`, desc).default(def).env(env);
  return cmd
    .addOption(
      new Option('--metrics-port <port>', 'HTTPS port of /metrics')
        .default(8443)
        .env('METRICS_PORT')
        .argParser(parsePortOption),
    )
    .addOption(
      new Option('--metrics-cert-file <file>', 'TLS certificate for metrics (self-signed when absent)').env(
        'METRICS_CERT_FILE',
      ),
    )
    .addOption(new Option('--metrics-key-file <file>', 'TLS key for metrics').env('METRICS_KEY_FILE'))
    .addOption(
      new Option('--broker-url <url>', 'broker base URL (events purge, engine output)').env('BROKER_URL'),
    )
    .addOption(
      new Option(
        '--broker-namespace <ns>',
        "the namespace --broker-url's broker belongs to: other namespaces' query keys are <namespace>:<name> there (default: POD_NAMESPACE; none: every key is the bare query name)",
      ).env('BROKER_NAMESPACE'),
    )
    .addOption(
      new Option(
        '--tenant-broker-service <name>',
        "a namespace with a Service of this name gets its queries' data there instead of --broker-url",
      )
        .default('berth-broker')
        .env('TENANT_BROKER_SERVICE'),
    )
    .option('--no-tenant-brokers', "every namespace's query data to --broker-url")
    .addOption(
      new Option(
        '--broker-token-account <namespace/name>',
        "this controller's service account, to mint each tenant broker its own token (default: POD_NAMESPACE/POD_SERVICE_ACCOUNT when both are set; none: tenant brokers get no token)",
      ).env('BROKER_TOKEN_ACCOUNT'),
    )
    .option('--no-engine', 'do not run queries (cleanup, memories and seeding only)')
    .option('--no-leader-elect', 'reconcile without a Lease (only when a single replica runs)')
    .addOption(
      new Option(
        '--lease-namespace <ns>',
        'namespace of the leader Lease (default: POD_NAMESPACE, --namespace, default)',
      ).env('POD_NAMESPACE'),
    )
    .addOption(new Option('--lease-name <name>', 'name of the leader Lease').default('berth-controller'))
    .addOption(
      dur('--lease-duration', 'standby waits this long after the last renewal', '15s', 'LEASE_DURATION'),
    )
    .addOption(
      dur(
        '--renew-deadline',
        'leader steps down when it cannot renew for this long',
        '10s',
        'RENEW_DEADLINE',
      ),
    )
    .addOption(dur('--retry-period', 'pause between lease attempts', '2s', 'RETRY_PERIOD'))
    .addOption(
      dur(
        '--purge-grace',
        'release the Query finalizer after this long even if the purge failed',
        '5m',
        'PURGE_GRACE',
      ),
    )
    .addOption(dur('--purge-retry-max', 'longest pause between purge retries', '30s', 'PURGE_RETRY_MAX'))
    .addOption(
      dur(
        '--informer-watchdog',
        'relist an informer that saw no event for this long',
        '5m',
        'INFORMER_WATCHDOG',
      ),
    )
    .addOption(
      dur('--informer-resync', 'relist every informer this often (0 disables)', '30m', 'INFORMER_RESYNC'),
    )
    .addOption(
      new Option('--marketplace-seed-file <file>', 'YAML/JSON list of marketplace sources to seed').env(
        'MARKETPLACE_SEED_FILE',
      ),
    )
    .addOption(
      new Option(
        '--marketplace-seed-configmap <ns/name[:key]>',
        'ConfigMap with the seed list (key default marketplaceSources)',
      ).env('MARKETPLACE_SEED_CONFIGMAP'),
    );
}
