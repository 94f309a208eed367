/** Headers of Models, Tools and Memories: literal values or values read from Secrets. */
import type { z } from 'zod';
import type { headerSchema } from '../api/index.ts';
import type { ResourceLookup } from './contract.ts';

type Header = z.infer<typeof headerSchema>;

/** Throws with the owner and Secret named when a referenced Secret key is missing (never its value). */
export function resolveHeaders(
  headers: Header[] | undefined,
  namespace: string,
  lookup: ResourceLookup,
  owner: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const h of headers ?? []) {
    if (h.value !== undefined) {
      out[h.name] = h.value;
      continue;
    }
    const ref = h.valueFrom?.secretKeyRef;
    if (!ref) continue;
    const v = lookup.secretValue(namespace, ref.name, ref.key);
    if (v === undefined) {
      throw new Error(
        `${owner}: header ${h.name} refers to Secret ${ref.name} key ${ref.key}, which does not exist`,
      );
    }
    out[h.name] = v;
  }
  return out;
}
