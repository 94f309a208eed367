import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError } from '../config.ts';

/** Where a pod's own namespace is mounted (the fallback of NAMESPACE). */
const POD_NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';
export const DEFAULT_WRITER = 'system:serviceaccount:berth-system:berth-controller';

export interface BrokerAuthConfig {
  mode: 'none' | 'serviceaccount';
  /** The namespace the broker serves: its service accounts may read. */
  namespace?: string;
  /** Usernames that may write and purge (exact match). */
  writers: string[];
  /**
   * Accounts of `namespace` that may call the memory contract (create, delete conversations, append
   * messages) besides reading: exact usernames, or `system:serviceaccount:<namespace>:*`.
   */
  memoryCallers?: string[];
  /** How long a review's verdict is reused, and how many verdicts are kept. */
  cacheTtlMs: number;
  cacheSize: number;
}

const schema = z.object({
  BROKER_AUTH: z
    .enum(['none', 'serviceaccount'], { message: 'must be none or serviceaccount' })
    .optional()
    .default('none'),
  NAMESPACE: z
    .string()
    .trim()
    .regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'must be a namespace name')
    .optional(),
  BROKER_WRITER_SUBJECTS: z.string().trim().optional(),
  BROKER_MEMORY_SUBJECTS: z.string().trim().optional(),
  BROKER_AUTH_CACHE_SECONDS: z
    .string()
    .regex(/^\d+$/, 'must be a non-negative integer')
    .transform(Number)
    .pipe(z.number().int().min(0).max(300))
    .optional()
    .default(30),
});

const readPodNamespace = (file: string) => {
  try {
    return readFileSync(file, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
};

/**
 * BROKER_AUTH (none | serviceaccount, default none: `berth broker` by hand and `berth up`), NAMESPACE
 * (else the pod's own), BROKER_WRITER_SUBJECTS (comma-separated usernames; default the controller's
 * service account), BROKER_MEMORY_SUBJECTS (accounts of NAMESPACE that may call the memory
 * contract; default none), BROKER_AUTH_CACHE_SECONDS (default 30). Throws a ConfigError naming what is wrong.
 */
export function loadBrokerAuthConfig(
  env: NodeJS.ProcessEnv = process.env,
  podNamespaceFile = POD_NAMESPACE_FILE,
): BrokerAuthConfig {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const r = schema.safeParse(present);
  if (!r.success) {
    const lines = r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid broker authentication settings:\n  ${lines.join('\n  ')}`);
  }
  const e = r.data;
  const writers = (e.BROKER_WRITER_SUBJECTS ?? DEFAULT_WRITER)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const namespace =
    e.NAMESPACE ?? (e.BROKER_AUTH === 'serviceaccount' ? readPodNamespace(podNamespaceFile) : undefined);
  if (e.BROKER_AUTH === 'serviceaccount' && !namespace)
    throw new ConfigError(
      'invalid broker authentication settings:\n  NAMESPACE: is required when BROKER_AUTH=serviceaccount (outside a pod)',
    );
  const memoryCallers = (e.BROKER_MEMORY_SUBJECTS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  // The namespace allows its own callers only: an account of another namespace is never one.
  const foreign = memoryCallers.filter(
    (u) => !namespace || !u.startsWith(`system:serviceaccount:${namespace}:`),
  );
  if (foreign.length)
    throw new ConfigError(
      `invalid broker authentication settings:\n  BROKER_MEMORY_SUBJECTS: only service accounts of namespace ${namespace ?? '(unset)'} may be memory callers, not ${foreign.join(', ')}`,
    );
  if (e.BROKER_AUTH === 'serviceaccount' && writers.length === 0)
    throw new ConfigError(
      'invalid broker authentication settings:\n  BROKER_WRITER_SUBJECTS: names no subject',
    );
  return {
    mode: e.BROKER_AUTH,
    namespace,
    writers,
    memoryCallers,
    cacheTtlMs: e.BROKER_AUTH_CACHE_SECONDS * 1000,
    cacheSize: 10_000,
  };
}
