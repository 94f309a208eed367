import type { KubernetesObject, V1Secret } from '@kubernetes/client-node';
import { z } from 'zod';
import type { KindRef } from '../../kube/kinds.ts';

// kubectl's last-applied annotation holds the values of an applied Secret.
export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

export const secretView = z.object({
  apiVersion: z.literal('v1'),
  kind: z.literal('Secret'),
  metadata: z.record(z.string(), z.unknown()),
  type: z.string().optional(),
  immutable: z.boolean().optional(),
  keys: z.array(z.string()).describe('Names of the keys; values are never returned'),
});
export type SecretView = z.infer<typeof secretView>;

/**
 * Whether a resolved resource is core Secrets: the decision is on what the API server would serve,
 * never on how the caller spelled the kind.
 */
export const isSecretResource = (ref: KindRef<unknown>) => ref.group === '' && ref.plural === 'secrets';

/**
 * A Secret as every API shows it: the fields listed here and nothing else (an allow-list, so a
 * field the API server adds later stays hidden too) — metadata without managedFields and without
 * kubectl's last-applied annotation, the type, and the key names. Never `data` or `stringData`.
 */
export function secretMetadataOnly(s: V1Secret | KubernetesObject): SecretView {
  const secret = s as V1Secret;
  const { managedFields: _m, annotations, ...metadata } = (secret.metadata ?? {}) as Record<string, unknown>;
  const { [LAST_APPLIED]: _l, ...kept } = (annotations as Record<string, string> | undefined) ?? {};
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { ...metadata, ...(annotations ? { annotations: kept } : {}) },
    ...(secret.type !== undefined ? { type: secret.type } : {}),
    ...(secret.immutable !== undefined ? { immutable: secret.immutable } : {}),
    keys: Object.keys(secret.data ?? {}).sort(),
  };
}
