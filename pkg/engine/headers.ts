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
    const v = lookupSecret(lookup, namespace, ref, `${owner}: header ${h.name}`);
    if (v === undefined) {
      throw new Error(
        `${owner}: header ${h.name} refers to Secret ${ref.name} key ${ref.key}, which does not exist`,
      );
    }
    out[h.name] = v;
  }
  return out;
}

/**
 * A Secret key's value through the lookup; a Secret the engine may not use (no opt-in label) is an
 * error naming who asked and the Secret, never the value.
 */
export function lookupSecret(
  lookup: ResourceLookup,
  namespace: string,
  ref: { name: string; key: string },
  what: string,
): string | undefined {
  try {
    return lookup.secretValue(namespace, ref.name, ref.key);
  } catch (err) {
    throw new Error(`${what}: ${(err as Error).message}`);
  }
}
