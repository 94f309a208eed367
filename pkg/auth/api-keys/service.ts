import type { V1Secret } from '@kubernetes/client-node';
import bcrypt from 'bcryptjs';
import { API_KEY_SECRET_TYPE } from '../../api/group.ts';
import type { Client, Identity } from '../../kube/client/types.ts';
import { CoreKinds } from '../../kube/kinds.ts';
import type { Logger } from '../../log/index.ts';
import { ApiKeyError } from '../errors.ts';
import { BcryptGate, GATE_DEFAULTS, type GateOutcome } from './bcrypt-gate.ts';
import { BcryptPool } from './bcrypt-pool.ts';
import {
  type ApiKeyRecord,
  b64,
  DATA,
  fastHash,
  generateKeyPair,
  isPublicKey,
  isSecretKey,
  newApiKeySecret,
  recordOf,
} from './format.ts';
import { LastUsedRecorder } from './last-used.ts';
import { ancestorInactive, chainExpiry } from './lineage.ts';
import type { SecretSource } from './secret-cache.ts';
import type {
  ApiKeyFailure,
  ApiKeyServiceOptions,
  ApiKeyStats,
  ApiKeyVerification,
  ApiKeyVerifier,
  ApiKeyView,
  CreatedApiKey,
} from './types.ts';
import { VerificationCache } from './verified-cache.ts';
import { waitForSource } from './wait-for-source.ts';

export class ApiKeyService implements ApiKeyVerifier {
  readonly namespace: string;
  readonly stats: ApiKeyStats = { bcryptCompares: 0, rateLimited: 0, cacheHits: 0, kubeRequests: 0 };
  readonly lastUsed: LastUsedRecorder;
  private readonly client: Client;
  private readonly source: SecretSource;
  private readonly logger: Logger | undefined;
  private readonly cost: number;
  private readonly verified: VerificationCache;
  private readonly failed: VerificationCache;
  private readonly inflight = new Map<string, Promise<GateOutcome>>();
  private readonly pool: BcryptPool;
  private readonly gate: BcryptGate;
  private readonly readYourWritesMs: number;
  private readonly now: () => number;

  constructor(opts: ApiKeyServiceOptions) {
    this.namespace = opts.namespace;
    this.client = opts.client;
    this.source = opts.source;
    this.logger = opts.logger;
    this.cost = opts.bcryptCost ?? 10;
    this.verified = new VerificationCache(opts.maxCachedVerifications ?? 10_000);
    this.failed = new VerificationCache(opts.maxCachedVerifications ?? 10_000);
    this.readYourWritesMs = opts.readYourWritesMs ?? 5000;
    this.now = opts.now ?? Date.now;
    this.pool = new BcryptPool(opts.bcryptLimits?.maxConcurrent ?? GATE_DEFAULTS.maxConcurrent);
    this.gate = new BcryptGate({
      ...opts.bcryptLimits,
      now: this.now,
      compare: (secret, hash) => {
        this.stats.bcryptCompares++;
        return this.pool.compare(secret, hash);
      },
    });
    this.lastUsed = new LastUsedRecorder({
      intervalMs: opts.lastUsedFlushMs ?? 10_000,
      logger: opts.logger,
      write: (publicKey, at) => this.patchData(publicKey, { [DATA.lastUsedAt]: at }),
    });
  }

  /**
   * The hot path: Secret from the informer cache, then the verified-key cache; bcrypt only on the
   * first sight of a key pair, never an API server call. Active and expiry — the key's and every
   * ancestor's (lineage.ts) — are read from the cached Secrets on every call, before the verified-key
   * cache, so a revocation applies as soon as the informer delivers it. New wrong secrets meet the
   * gate's bounds (bcrypt-gate.ts) and are refused without bcrypt past them.
   */
  async verify(publicKey: string, secretKey: string): Promise<ApiKeyVerification> {
    if (!isPublicKey(publicKey) || !isSecretKey(secretKey)) return { ok: false, reason: 'malformed' };
    const record = this.lookup(publicKey);
    const refusal = this.refusal(record);
    if (refusal || !record) return { ok: false, reason: refusal ?? 'unknown' };
    const fast = fastHash(publicKey, secretKey);
    if (this.verified.matches(fast, record.secretHash)) {
      this.stats.cacheHits++;
      this.lastUsed.touch(publicKey, this.now());
      return { ok: true, record };
    }
    // A repeated wrong secret costs no bcrypt either (no CPU amplification by replaying it).
    if (this.failed.matches(fast, record.secretHash)) return { ok: false, reason: 'bad_secret' };
    const outcome = await this.compareOnce(publicKey, fast, secretKey, record.secretHash);
    if (outcome.kind === 'limited') {
      this.stats.rateLimited++;
      return {
        ok: false,
        reason: 'rate_limited',
        scope: outcome.scope,
        retryAfterSec: outcome.retryAfterSec,
      };
    }
    const ok = outcome.ok;
    if (!ok) {
      this.failed.remember(fast, record.secretHash);
      return { ok: false, reason: 'bad_secret' };
    }
    this.verified.remember(fast, record.secretHash);
    // The Secret may have changed while bcrypt ran: decide on its current state.
    const current = this.lookup(publicKey);
    const late = this.refusal(current);
    if (late || current?.secretHash !== record.secretHash) return { ok: false, reason: late ?? 'unknown' };
    this.lastUsed.touch(publicKey, this.now());
    return { ok: true, record: current };
  }

  list(): { items: ApiKeyView[]; count: number } {
    const items = this.records()
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.publicKey.localeCompare(b.publicKey))
      .map((r) => this.view(r));
    return { items, count: items.length };
  }

  async create(input: {
    name: string;
    expiresAt?: string | null;
    /** The creator's Kubernetes identity, recorded on the key: what the key acts as. */
    createdBy?: Identity;
    /** The API key that creates this one: the new key expires with it at the latest, and dies with it. */
    parentKey?: string;
  }): Promise<CreatedApiKey> {
    const { publicKey, secretKey } = generateKeyPair();
    const createdAt = new Date(this.now()).toISOString();
    const expiresAt = this.expiryFor(input.expiresAt ?? null, input.parentKey);
    const secretHash = await bcrypt.hash(secretKey, this.cost);
    const body = newApiKeySecret({
      namespace: this.namespace,
      name: input.name,
      publicKey,
      secretHash,
      createdAt,
      expiresAt,
      createdBy: input.createdBy,
      parentKey: input.parentKey,
    });
    const created = await this.kube(() => this.client.create<V1Secret>(CoreKinds.Secret, body));
    this.logger?.info(
      { publicKey, name: input.name, namespace: this.namespace, expiresAt, parentKey: input.parentKey },
      'API key created',
    );
    await this.awaitCache(publicKey, (r) => r?.isActive === true, 'create');
    return {
      id: created.metadata?.uid ?? publicKey,
      name: input.name,
      public_key: publicKey,
      secret_key: secretKey,
      created_at: createdAt,
      expires_at: expiresAt,
    };
  }

  /** Marks a key inactive and keeps its Secret for audit; idempotent. */
  async revoke(publicKey: string): Promise<void> {
    const notFound = () =>
      new ApiKeyError('not_found', `no API key ${publicKey} in namespace ${this.namespace}`);
    if (!isPublicKey(publicKey)) throw notFound();
    // Possibly created a moment ago on another replica: ask the API server before saying 404.
    if (!this.lookup(publicKey) && !(await this.readLive(publicKey))) throw notFound();
    const at = new Date(this.now()).toISOString();
    await this.patchData(publicKey, { [DATA.isActive]: 'false', [DATA.revokedAt]: at });
    this.logger?.info({ publicKey, namespace: this.namespace }, 'API key revoked');
    await this.awaitCache(publicKey, (r) => r !== null && !r.isActive, 'revoke');
  }

  async stop(): Promise<void> {
    await this.lastUsed.stop();
    await this.pool.stop();
  }

  /**
   * The requested expiry, capped at the earliest expiry along the parent's chain: a key never
   * outlives the key that made it (the answer's `expires_at` says what was granted).
   */
  private expiryFor(requested: string | null, parentKey: string | undefined): string | null {
    const parent = parentKey ? this.lookup(parentKey) : null;
    if (parentKey && (!parent || this.refusal(parent)))
      throw new ApiKeyError('parent_key_inactive', 'the API key making this request is no longer active');
    const wanted = requested ? Date.parse(requested) : null;
    const cap = parent ? chainExpiry(parent, (pk) => this.lookup(pk)) : null;
    const at = cap !== null && (wanted === null || wanted > cap) ? cap : wanted;
    return at === null ? null : new Date(at).toISOString();
  }

  private lookup(publicKey: string): ApiKeyRecord | null {
    const secret = this.source.get
      ? this.source.get(publicKey)
      : this.source.list().find((s) => s.metadata?.name === publicKey);
    const record = secret ? recordOf(secret) : null;
    // Defence in depth against a shared cache that spans namespaces: a key from another
    // namespace never authenticates here.
    return record && record.namespace === this.namespace && record.publicKey === publicKey ? record : null;
  }

  private refusal(record: ApiKeyRecord | null): ApiKeyFailure | undefined {
    if (!record) return 'unknown';
    if (!record.isActive) return 'revoked';
    const now = this.now();
    if (record.expiresAtMs !== null && record.expiresAtMs <= now) return 'expired';
    if (ancestorInactive(record, (pk) => this.lookup(pk), now)) return 'parent_inactive';
    return undefined;
  }

  private records(): ApiKeyRecord[] {
    const out: ApiKeyRecord[] = [];
    for (const s of this.source.list()) {
      if (s.type !== API_KEY_SECRET_TYPE) continue;
      const r = recordOf(s);
      if (r && r.namespace === this.namespace) out.push(r);
    }
    return out;
  }

  private view(r: ApiKeyRecord): ApiKeyView {
    return {
      id: r.id,
      name: r.name,
      public_key: r.publicKey,
      created_at: r.createdAt,
      last_used_at: this.lastUsed.pendingFor(r.publicKey) ?? r.lastUsedAt,
      expires_at: r.expiresAt,
      is_active: this.refusal(r) === undefined,
    };
  }

  /**
   * One bcrypt per key pair at a time: concurrent first requests share the comparison, which goes
   * through the gate (its per-key and overall bounds) to a worker thread.
   */
  private compareOnce(publicKey: string, fast: string, secretKey: string, secretHash: string) {
    const key = `${fast}/${secretHash}`;
    let p = this.inflight.get(key);
    if (!p) {
      p = this.gate.compare(publicKey, secretKey, secretHash).finally(() => this.inflight.delete(key));
      this.inflight.set(key, p);
    }
    return p;
  }

  private async patchData(publicKey: string, values: Record<string, string>): Promise<void> {
    const data = Object.fromEntries(Object.entries(values).map(([k, v]) => [k, b64(v)]));
    const key = { namespace: this.namespace, name: publicKey };
    await this.kube(() => this.client.patch(CoreKinds.Secret, key, { type: 'merge', patch: { data } }));
  }

  /**
   * The key's record as the API server has it. A field selector makes the read live even where the
   * client serves Secrets from the informer cache, which has just been found not to hold the key.
   */
  private async readLive(publicKey: string): Promise<ApiKeyRecord | null> {
    const list = await this.kube(() =>
      this.client.list<V1Secret>(CoreKinds.Secret, {
        namespace: this.namespace,
        fieldSelector: `metadata.name=${publicKey}`,
      }),
    );
    const secret = list.items.find((s) => s.metadata?.name === publicKey);
    return secret ? recordOf(secret) : null;
  }

  /** Every API server request of this service goes through here: `stats.kubeRequests` counts them. */
  private kube<T>(call: () => Promise<T>): Promise<T> {
    this.stats.kubeRequests++;
    return call();
  }

  /**
   * Read-your-writes: a client that creates (or revokes) a key and uses it at once must see the
   * effect, so the write returns only once the informer shows it (bounded; logged if it lags).
   */
  private async awaitCache(publicKey: string, done: (r: ApiKeyRecord | null) => boolean, what: string) {
    const met = await waitForSource(this.source, () => done(this.lookup(publicKey)), this.readYourWritesMs);
    if (!met)
      this.logger?.warn(
        { publicKey, what, waitedMs: this.readYourWritesMs },
        'API key cache lags behind a write',
      );
  }
}
