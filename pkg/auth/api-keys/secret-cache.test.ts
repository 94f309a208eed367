import type { KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { API_KEY_SECRET_TYPE } from '../../api/group.ts';
import { secretSourceFrom } from './secret-cache.ts';

/** The shape of the gateway's / controller's shared cache (keyed by plural and namespace). */
interface SharedCache {
  list(plural: string, namespace: string): KubernetesObject[] | undefined;
  get(plural: string, namespace: string, name: string): KubernetesObject | undefined;
}

describe('secretSourceFrom', () => {
  it('plugs a shared cache in: only API key Secrets of the instance namespace', () => {
    const objects: Array<KubernetesObject & { type?: string }> = [
      { kind: 'Secret', type: API_KEY_SECRET_TYPE, metadata: { name: 'pk-svc-aaaaaaaa', namespace: 'a' } },
      { kind: 'Secret', type: 'Opaque', metadata: { name: 'db', namespace: 'a' } },
      { kind: 'Secret', type: API_KEY_SECRET_TYPE, metadata: { name: 'pk-svc-bbbbbbbb', namespace: 'b' } },
    ];
    const cache: SharedCache = {
      list: (plural, ns) =>
        plural === 'secrets' ? objects.filter((o) => o.metadata?.namespace === ns) : undefined,
      get: (plural, ns, name) =>
        plural === 'secrets'
          ? objects.find((o) => o.metadata?.namespace === ns && o.metadata?.name === name)
          : undefined,
    };
    const source = secretSourceFrom(cache, 'a');
    expect(source.list().map((s) => s.metadata?.name)).toEqual(['pk-svc-aaaaaaaa']);
    expect(source.get?.('pk-svc-aaaaaaaa')?.metadata?.namespace).toBe('a');
    expect(source.get?.('pk-svc-bbbbbbbb')).toBeUndefined();
  });
});
