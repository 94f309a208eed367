import { z } from 'zod';
import { DEFAULT_SHUTDOWN_GRACE_SECONDS } from '../http/index.ts';
import { parseAllowedHosts } from './marketplace/address.ts';
import { MCP_ENV } from './mcp/settings.ts';

const port = z.coerce.number().int().min(0).max(65535);

/** A Kubernetes namespace name (RFC 1123 label), for NAMESPACE and every `--namespace` flag. */
export const namespaceName = z
  .string()
  .max(63, 'must be at most 63 characters')
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a namespace name (lower-case letters, digits, "-")');

/** `berth api` configuration from the environment; invalid values stop the process with the variable's name. */
export const gatewayEnvSchema = z.object({
  PORT: port.default(8000),
  NAMESPACE: namespaceName.optional(),
  BROKER_URL: z.url({ protocol: /^https?$/ }).optional(),
  AUTH_MODE: z.string().optional(),
  OIDC_ISSUER_URL: z.url().optional(),
  OIDC_APPLICATION_ID: z.string().optional(),
  BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(10 * 1024 * 1024),
  COMPAT_WAIT_TIMEOUT_SECONDS: z.coerce.number().positive().default(330),
  // How long a SIGTERM waits for requests and chat streams in flight (docs/observability.md).
  SHUTDOWN_GRACE_SECONDS: z.coerce.number().min(0).default(DEFAULT_SHUTDOWN_GRACE_SECONDS),
  // Checked here so a bad entry stops `berth api` with the variable's name, not at the first fetch.
  MARKETPLACE_ALLOWED_HOSTS: z
    .string()
    .optional()
    .superRefine((v, ctx) => {
      try {
        parseAllowedHosts(v);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
      }
    }),
  // /mcp sessions (revision 2025-11-25): docs/mcp.md.
  ...MCP_ENV,
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});
export type GatewayEnv = z.infer<typeof gatewayEnvSchema>;

export class ConfigError extends Error {}

export function parseEnv<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv = process.env): z.infer<S> {
  const r = schema.safeParse(env);
  if (r.success) return r.data;
  const lines = r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  throw new ConfigError(`invalid configuration: ${lines.join('; ')}`);
}

/** The namespace an API instance serves: flag/env, else the pod's, else the kubeconfig context's, else default. */
export function resolveNamespace(
  explicit: string | undefined,
  contextNamespace: string | undefined,
  podNamespaceFile = '/var/run/secrets/kubernetes.io/serviceaccount/namespace',
): string {
  if (explicit) return explicit;
  try {
    const fs = process.getBuiltinModule('node:fs');
    const pod = fs.readFileSync(podNamespaceFile, 'utf8').trim();
    if (pod) return pod;
  } catch {
    // not in a pod
  }
  return contextNamespace || 'default';
}
