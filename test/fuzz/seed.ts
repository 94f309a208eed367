/**
 * Objects for the generated requests to find: one valid object per name of the run's vocabulary
 * in every namespaced collection, so that reads, replaces, patches and deletes reach the API
 * server with objects that exist (and resourceVersions it has to judge).
 */
import fc from 'fast-check';
import { type Operation, type Vocabulary, valueFor } from './openapi.ts';

/** Creates what it can; returns the collections it could not seed (their bodies need more than the schema says). */
export async function seedCollections(
  url: string,
  ops: Operation[],
  vocab: Vocabulary,
  namespace: string,
): Promise<string[]> {
  const missed: string[] = [];
  const collections = ops.filter(
    (o) => o.method === 'POST' && o.body && /\/\{namespace\}\/[a-z-]+$/.test(o.path),
  );
  for (const op of collections) {
    const path = op.path.replace('{namespace}', namespace);
    for (const name of vocab.names) {
      const bodies = fc.sample(valueFor(op.body ?? {}, vocab, '', 0, 0), { numRuns: 40, seed: 18 });
      let seeded = false;
      for (const body of bodies) {
        const doc = { ...(body as Record<string, unknown>), name, metadata: undefined };
        const res = await fetch(`${url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(doc),
        });
        await res.body?.cancel();
        if (res.status === 201 || res.status === 409) {
          seeded = true;
          break;
        }
      }
      if (!seeded) missed.push(`${op.path} ${name}`);
    }
  }
  return missed;
}
