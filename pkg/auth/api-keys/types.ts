import type { Client } from '../../kube/client/types.ts';
import type { Logger } from '../../log/index.ts';
import type { BcryptGateOptions } from './bcrypt-gate.ts';
import type { ApiKeyRecord } from './format.ts';
import type { SecretSource } from './secret-cache.ts';

/** The API key service's options and answers (service.ts). */
export interface ApiKeyServiceOptions {
  /** The API service's client (its own identity); writes (create, revoke, last-used) go through it. */
  client: Client;
  /** The instance namespace: keys are created, listed and accepted only here. */
  namespace: string;
  source: SecretSource;
  logger?: Logger;
  /** bcrypt cost; ≥ 10 in production (default 10), 4 in tests. */
  bcryptCost?: number;
  /** How often last-used times are written (default 10 s; 0 = only on flush()/stop()). */
  lastUsedFlushMs?: number;
  /** Bound of the verified-key cache (default 10,000 entries). */
  maxCachedVerifications?: number;
  /** How long create/revoke wait for the informer to show their write (default 5 s). */
  readYourWritesMs?: number;
  /** Bounds of the bcrypt work wrong secrets may cause (bcrypt-gate.ts; defaults there). */
  bcryptLimits?: Omit<BcryptGateOptions, 'compare' | 'now'>;
  now?: () => number;
}

export type ApiKeyFailure =
  | 'malformed'
  | 'unknown'
  | 'revoked'
  | 'expired'
  | 'parent_inactive'
  | 'bad_secret';
export type ApiKeyVerification =
  | { ok: true; record: ApiKeyRecord }
  | { ok: false; reason: ApiKeyFailure }
  /** Too many attempts not known to succeed (for this key, or overall): answered without bcrypt. */
  | { ok: false; reason: 'rate_limited'; scope: 'key' | 'overall'; retryAfterSec: number };

/** What the auth middleware needs; the service implements it, tests may stub it. */
export interface ApiKeyVerifier {
  verify(publicKey: string, secretKey: string): Promise<ApiKeyVerification>;
}

export interface ApiKeyStats {
  /** bcrypt comparisons run (cache misses that reached a stored key). */
  bcryptCompares: number;
  /** Attempts refused without bcrypt because a bound was reached. */
  rateLimited: number;
  /** Verifications answered from the verified-key cache. */
  cacheHits: number;
  /** Requests this service sent to the Kubernetes API server (never from verify). */
  kubeRequests: number;
}

export interface CreatedApiKey {
  id: string;
  name: string;
  public_key: string;
  secret_key: string;
  created_at: string;
  expires_at: string | null;
}

export interface ApiKeyView {
  id: string;
  name: string;
  public_key: string;
  created_at: string;
  last_used_at: string | null;
  expires_at: string | null;
  is_active: boolean;
}
