/**
 * The controller's credential for one tenant's broker: a token of its own service account with the
 * audience `berth-broker:<namespace>`, minted by a TokenRequest. Only that namespace's broker accepts
 * it, so a tenant who points its `berth-broker` Service at a pod of its own captures nothing that
 * works anywhere else (the controller's `berth-broker` token, which every broker accepts, goes to
 * the configured broker only). Tokens are kept until 80 % of their life has passed, then renewed.
 */
import type { Client } from '../../kube/client/index.ts';
import { kindRef } from '../../kube/kinds.ts';

/** The audience a broker of `namespace` accepts besides `berth-broker`. */
export const namespaceAudience = (namespace: string) => `berth-broker:${namespace}`;

interface TokenRequest {
  apiVersion: string;
  kind: string;
  metadata?: { namespace?: string };
  spec: { audiences: string[]; expirationSeconds?: number };
  status?: { token?: string; expirationTimestamp?: string };
}

/**
 * `serviceaccounts/<name>/token`, the subresource a TokenRequest is created at, as a resource of the
 * typed client: a create posts to `/api/v1/namespaces/<ns>/serviceaccounts/<name>/token`.
 */
const tokenSubresource = (serviceAccount: string) =>
  kindRef<TokenRequest>({
    group: '',
    version: 'v1',
    kind: 'TokenRequest',
    plural: `serviceaccounts/${encodeURIComponent(serviceAccount)}/token`,
    namespaced: true,
  });

export interface ServiceAccountRef {
  namespace: string;
  name: string;
}

interface Minted {
  token: string;
  renewAt: number;
  expiresAt: number;
}

export interface NamespaceTokensOptions {
  client: Pick<Client, 'create'>;
  /** The controller's own service account (the one the token is for). */
  account: ServiceAccountRef;
  /** Requested lifetime; the API server's minimum is 600. Default 3600. */
  expirationSeconds?: number;
  now?: () => number;
}

export class NamespaceTokens {
  readonly #o: NamespaceTokensOptions;
  readonly #tokens = new Map<string, Minted>();
  readonly #minting = new Map<string, Promise<string>>();
  // The tokenRequest path is a relative API path: it is built once per account.
  readonly #ref: ReturnType<typeof tokenSubresource>;

  constructor(o: NamespaceTokensOptions) {
    this.#o = o;
    this.#ref = tokenSubresource(o.account.name);
  }

  #now = () => (this.#o.now ?? Date.now)();

  /** A valid token for `namespace`'s broker, minted when there is none or it is about to expire. */
  async token(namespace: string): Promise<string> {
    const t = this.#tokens.get(namespace);
    const now = this.#now();
    if (t && now < t.expiresAt - 30_000) {
      if (now >= t.renewAt) void this.#mint(namespace).catch(() => undefined);
      return t.token;
    }
    return this.#mint(namespace);
  }

  /** The token held for `namespace` (undefined: none, or expired), renewed in the background when due. */
  current(namespace: string): string | undefined {
    const t = this.#tokens.get(namespace);
    const now = this.#now();
    if (!t || now >= t.expiresAt) return undefined;
    if (now >= t.renewAt) void this.#mint(namespace).catch(() => undefined);
    return t.token;
  }

  #mint(namespace: string): Promise<string> {
    let p = this.#minting.get(namespace);
    if (p) return p;
    p = this.#request(namespace).finally(() => this.#minting.delete(namespace));
    this.#minting.set(namespace, p);
    return p;
  }

  async #request(namespace: string): Promise<string> {
    const seconds = this.#o.expirationSeconds ?? 3600;
    const started = this.#now();
    const answer = await this.#o.client.create(this.#ref, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      metadata: { namespace: this.#o.account.namespace },
      spec: { audiences: [namespaceAudience(namespace)], expirationSeconds: seconds },
    });
    const token = answer.status?.token;
    if (!token) throw new Error(`TokenRequest for ${namespaceAudience(namespace)} returned no token`);
    const expiry = Date.parse(answer.status?.expirationTimestamp ?? '');
    const expiresAt = Number.isFinite(expiry) ? expiry : started + seconds * 1000;
    const renewAt = started + (expiresAt - started) * 0.8;
    this.#tokens.set(namespace, { token, renewAt, expiresAt });
    return token;
  }
}
