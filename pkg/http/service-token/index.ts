/**
 * The token a Berth process sends to brokers (BROKER_AUTH=serviceaccount): a projected
 * service-account token of audience `berth-broker` that the kubelet rotates, re-read from its file
 * at most a minute after it changed. No file (a local run, `berth up`): no header. The token is
 * never logged and only sent to broker origins (see BrokerCredentials).
 */
import { readFileSync, statSync } from 'node:fs';

export const BROKER_TOKEN_FILE = '/var/run/secrets/berth.dev/broker/token';

/** The token file's current content, re-read when it changed (checked at most every `refreshMs`). */
export class ServiceToken {
  readonly file: string;
  readonly #refreshMs: number;
  readonly #now: () => number;
  #checkedAt = Number.NEGATIVE_INFINITY;
  #mtimeMs = -1;
  #token: string | undefined;

  constructor(file: string, opts: { refreshMs?: number; now?: () => number } = {}) {
    this.file = file;
    this.#refreshMs = opts.refreshMs ?? 60_000;
    this.#now = opts.now ?? Date.now;
  }

  /** The token, or undefined when there is no (readable, non-empty) file. */
  current(): string | undefined {
    const now = this.#now();
    if (now - this.#checkedAt < this.#refreshMs) return this.#token;
    this.#checkedAt = now;
    try {
      const { mtimeMs } = statSync(this.file);
      if (mtimeMs !== this.#mtimeMs || this.#token === undefined) {
        this.#token = readFileSync(this.file, 'utf8').trim() || undefined;
        this.#mtimeMs = mtimeMs;
      }
    } catch {
      this.#token = undefined;
      this.#mtimeMs = -1;
    }
    return this.#token;
  }
}

/** The Service a cluster host name names: `svc` (in `namespace`), `svc.ns.svc`, `svc.ns.svc.cluster.local`. */
function serviceOf(host: string, namespace: string | undefined): { svc: string; ns: string } | undefined {
  const parts = host.split('.');
  const [svc, ns] = parts;
  if (!svc || /^\d+$/.test(svc)) return undefined;
  if (parts.length === 1) return namespace ? { svc, ns: namespace } : undefined;
  const inCluster =
    (parts.length === 3 && parts[2] === 'svc') || (parts.length === 5 && host.endsWith('.svc.cluster.local'));
  return inCluster && ns ? { svc, ns } : undefined;
}

/**
 * `u`'s origin, and when it names a Service, that Service's other in-cluster names (a Memory's
 * serviceRef resolves to `http://<svc>.<ns>.svc.cluster.local:<port>`). A two-label or public name
 * gets no alias: `a.b` could be a Service or a public host.
 */
function aliasesOf(u: URL, namespace: string | undefined): string[] {
  const origins = [`${u.protocol}//${u.host}`];
  const s = serviceOf(u.hostname, namespace);
  if (!s) return origins;
  const port = u.port || (u.protocol === 'https:' ? '443' : '80');
  for (const h of [s.svc + '.' + s.ns, `${s.svc}.${s.ns}.svc`, `${s.svc}.${s.ns}.svc.cluster.local`]) {
    origins.push(`${u.protocol}//${h}:${port}`);
    if (!u.port) origins.push(`${u.protocol}//${h}`);
  }
  return origins;
}

/** The origins that reach the same broker as `url` (its own, and its Service's other cluster names). */
export function brokerOrigins(url: string, namespace?: string): string[] {
  try {
    return aliasesOf(new URL(url), namespace);
  } catch {
    return [];
  }
}

const originOf = (url: string | URL): string | undefined => {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return undefined;
  }
};

/**
 * Which requests get the broker token: those to a broker origin only — the configured BROKER_URL
 * (and the same Service's other DNS names), plus origins a caller declares to be brokers
 * (`trust`). A Memory's address that is not one of them (a third-party backend, a tenant's own
 * Service) never sees it.
 */
export class BrokerCredentials {
  readonly #token: ServiceToken;
  readonly #origins = new Set<string>();
  readonly #namespace: string | undefined;

  constructor(token: ServiceToken, brokerUrls: Array<string | undefined>, namespace?: string) {
    this.#token = token;
    this.#namespace = namespace;
    for (const u of brokerUrls) if (u) this.trust(u);
  }

  /** Declares `url`'s origin (and its Service aliases) a broker. */
  trust(url: string): void {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return;
    }
    for (const o of aliasesOf(u, this.#namespace)) this.#origins.add(o);
  }

  isBroker(url: string | URL): boolean {
    const o = originOf(url);
    return o !== undefined && this.#origins.has(o);
  }

  /** `{authorization}` for a broker URL when a token is there; `{}` otherwise. */
  headersFor(url: string | URL): Record<string, string> {
    if (!this.isBroker(url)) return {};
    const token = this.#token.current();
    return token ? { authorization: `Bearer ${token}` } : {};
  }
}

/**
 * The process's broker credentials from the environment: BROKER_TOKEN_FILE (default the manifests'
 * projected path), the broker URL(s) it was given, and its namespace for short Service names
 * (POD_NAMESPACE, else NAMESPACE).
 */
export function brokerCredentials(
  brokerUrls: Array<string | undefined>,
  env: NodeJS.ProcessEnv = process.env,
): BrokerCredentials {
  const token = new ServiceToken(env.BROKER_TOKEN_FILE || BROKER_TOKEN_FILE);
  return new BrokerCredentials(token, brokerUrls, env.POD_NAMESPACE || env.NAMESPACE || undefined);
}

const byBroker = new Map<string, BrokerCredentials>();

/**
 * `{authorization}` for a request to `url` when it is the process's configured broker `brokerUrl`
 * (credentials from the environment, made once per broker URL); `{}` otherwise or without a token.
 */
export function brokerAuthHeaders(brokerUrl: string | undefined, url: string | URL): Record<string, string> {
  if (!brokerUrl) return {};
  let creds = byBroker.get(brokerUrl);
  if (!creds) {
    creds = brokerCredentials([brokerUrl]);
    byBroker.set(brokerUrl, creds);
  }
  return creds.headersFor(url);
}
