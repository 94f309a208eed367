import { createHash, randomBytes } from 'node:crypto';
import type { V1Secret } from '@kubernetes/client-node';
import { API_KEY_SECRET_TYPE } from '../../api/group.ts';
import type { Identity } from '../../kube/client/types.ts';
import { acceptableIdentity } from '../identity.ts';

export const PUBLIC_KEY_PREFIX = 'pk-svc-';
export const SECRET_KEY_PREFIX = 'sk-svc-';

// The public key doubles as the Secret's name, so its random part is lowercase hex (a valid
// DNS-1123 name); the secret key is 256 bits of base64url, well under bcrypt's 72-byte input limit.
const PUBLIC_KEY_RE = /^pk-svc-[a-z0-9]{8,64}$/;
const SECRET_KEY_RE = /^sk-svc-[A-Za-z0-9_-]{16,64}$/;

export function isPublicKey(value: string): boolean {
  return PUBLIC_KEY_RE.test(value);
}

export function isSecretKey(value: string): boolean {
  return SECRET_KEY_RE.test(value);
}

export function generateKeyPair(): { publicKey: string; secretKey: string } {
  return {
    publicKey: PUBLIC_KEY_PREFIX + randomBytes(16).toString('hex'),
    secretKey: SECRET_KEY_PREFIX + randomBytes(32).toString('base64url'),
  };
}

/** `pk-svc-…:sk-svc-…` → the pair, or undefined when the text is not in that exact form. */
export function parseKeyPair(text: string): { publicKey: string; secretKey: string } | undefined {
  const colon = text.indexOf(':');
  if (colon < 0) return undefined;
  const publicKey = text.slice(0, colon);
  const secretKey = text.slice(colon + 1);
  return isPublicKey(publicKey) && isSecretKey(secretKey) ? { publicKey, secretKey } : undefined;
}

/**
 * Key of the verified-key cache: a fast hash of both halves, so a hit needs neither bcrypt nor the
 * secret key kept in memory in plain text.
 */
export function fastHash(publicKey: string, secretKey: string): string {
  return createHash('sha256').update(publicKey).update('\0').update(secretKey).digest('base64url');
}

/** One API key as stored in its Secret (everything but the secret key itself). */
export interface ApiKeyRecord {
  id: string;
  name: string;
  publicKey: string;
  secretHash: string;
  createdAt: string;
  expiresAt: string | null;
  /** Epoch ms of `expiresAt`, parsed once per Secret version for the hot path. */
  expiresAtMs: number | null;
  isActive: boolean;
  lastUsedAt: string | null;
  namespace: string;
  /** The Kubernetes user (and groups) of whoever created the key: what the key acts as. */
  actsAs?: Identity;
  /** The key that created this one (its public key): this key works only while that one does. */
  parentKey?: string;
}

/** Annotations recording the creator's Kubernetes identity (metadata: not secret, shown to kubectl). */
export const CREATED_BY = 'berth.dev/created-by';
export const CREATED_BY_GROUPS = 'berth.dev/created-by-groups';
/**
 * Label naming the API key that created this one. A label, so `kubectl get secrets -l
 * berth.dev/parent-key=<pk>` lists a key's children; public keys are valid label values.
 */
export const PARENT_KEY = 'berth.dev/parent-key';

function creatorAnnotations(by: Identity | undefined): Record<string, string> | undefined {
  if (!by) return undefined;
  return {
    [CREATED_BY]: by.user,
    ...(by.groups?.length ? { [CREATED_BY_GROUPS]: JSON.stringify(by.groups) } : {}),
  };
}

function creatorOf(annotations: Record<string, string> | undefined): Identity | undefined {
  const user = annotations?.[CREATED_BY];
  if (!user) return undefined;
  let groups: string[] = [];
  try {
    const parsed: unknown = JSON.parse(annotations?.[CREATED_BY_GROUPS] ?? '[]');
    if (Array.isArray(parsed)) groups = parsed.filter((g): g is string => typeof g === 'string');
  } catch {
    // A hand-edited, unparseable list grants no group: fail closed.
  }
  return acceptableIdentity({ user, groups });
}

/** Data keys of an API key Secret. */
export const DATA = {
  name: 'name',
  publicKey: 'public_key',
  secretHash: 'secret_hash',
  createdAt: 'created_at',
  expiresAt: 'expires_at',
  isActive: 'is_active',
  lastUsedAt: 'last_used_at',
  revokedAt: 'revoked_at',
} as const;

export const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

export function newApiKeySecret(opts: {
  namespace: string;
  name: string;
  publicKey: string;
  secretHash: string;
  createdAt: string;
  expiresAt: string | null;
  createdBy?: Identity;
  parentKey?: string;
}): V1Secret {
  const annotations = creatorAnnotations(opts.createdBy);
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: API_KEY_SECRET_TYPE,
    metadata: {
      name: opts.publicKey,
      namespace: opts.namespace,
      labels: {
        'app.kubernetes.io/managed-by': 'berth',
        ...(opts.parentKey ? { [PARENT_KEY]: opts.parentKey } : {}),
      },
      ...(annotations ? { annotations } : {}),
    },
    // The bcrypt hash only: the secret key itself never reaches the API server.
    stringData: {
      [DATA.name]: opts.name,
      [DATA.publicKey]: opts.publicKey,
      [DATA.secretHash]: opts.secretHash,
      [DATA.createdAt]: opts.createdAt,
      [DATA.expiresAt]: opts.expiresAt ?? '',
      [DATA.isActive]: 'true',
      [DATA.lastUsedAt]: '',
    },
  };
}

const parsed = new WeakMap<V1Secret, ApiKeyRecord | null>();

/**
 * The record held by an API key Secret, or null when the Secret is not a well-formed API key.
 * Informers replace the object on every change, so memoizing by identity decodes each version once.
 */
export function recordOf(secret: V1Secret): ApiKeyRecord | null {
  const memo = parsed.get(secret);
  if (memo !== undefined) return memo;
  const record = decode(secret);
  parsed.set(secret, record);
  return record;
}

function decode(secret: V1Secret): ApiKeyRecord | null {
  if (secret.type !== API_KEY_SECRET_TYPE) return null;
  const raw = secret.data ?? {};
  const get = (k: string): string => {
    const v = raw[k];
    return v ? Buffer.from(v, 'base64').toString('utf8') : '';
  };
  const publicKey = get(DATA.publicKey) || secret.metadata?.name || '';
  const secretHash = get(DATA.secretHash);
  if (!isPublicKey(publicKey) || !secretHash.startsWith('$2')) return null;
  const expiresAt = get(DATA.expiresAt) || null;
  const expiresAtMs = expiresAt ? Date.parse(expiresAt) : null;
  // A parent label that is not a public key (hand-edited) names no key that could vouch: fail closed.
  const parentLabel = secret.metadata?.labels?.[PARENT_KEY];
  const parentKey = parentLabel === undefined ? undefined : isPublicKey(parentLabel) ? parentLabel : '';
  return {
    id: secret.metadata?.uid ?? publicKey,
    name: get(DATA.name),
    publicKey,
    secretHash,
    createdAt: get(DATA.createdAt) || timestamp(secret.metadata?.creationTimestamp),
    expiresAt,
    // An unparseable expiry is treated as already expired: fail closed.
    expiresAtMs: expiresAtMs === null ? null : Number.isNaN(expiresAtMs) ? 0 : expiresAtMs,
    // Fail closed: only an explicit "true" is active.
    isActive: get(DATA.isActive) === 'true',
    lastUsedAt: get(DATA.lastUsedAt) || null,
    namespace: secret.metadata?.namespace ?? '',
    actsAs: creatorOf(secret.metadata?.annotations),
    ...(parentKey === undefined ? {} : { parentKey }),
  };
}

// Typed client responses carry Dates, raw watch events carry strings.
function timestamp(value: Date | string | undefined): string {
  if (!value) return '';
  return value instanceof Date ? value.toISOString() : String(value);
}
