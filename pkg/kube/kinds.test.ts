import { describe, expect, it } from 'vitest';
import { CoreKinds, type KindRef, kindRef, matchResource, Scheme, splitApiVersion } from './kinds.ts';

const names = (...refs: KindRef<unknown>[]) =>
  refs.map((ref) => ({ ref: ref as KindRef, singular: ref.kind.toLowerCase() }));

describe('resource names', () => {
  const endpoints = kindRef({
    group: '',
    version: 'v1',
    kind: 'Endpoints',
    plural: 'endpoints',
    namespaced: true,
  });
  const list = names(CoreKinds.Secret, CoreKinds.ConfigMap, endpoints);

  it('matches Kind, plural and singular, exactly or in any case', () => {
    for (const n of ['Secret', 'secrets', 'secret', 'Secrets', 'SECRETS', 'SECRET', 'sEcReTs'])
      expect(matchResource(list, n), n).toBe(CoreKinds.Secret);
    expect(matchResource(list, 'ENDPOINTS')).toBe(endpoints);
  });

  it('never guesses: near misses match nothing', () => {
    for (const n of ['secretss', 'secre', 'Secret ', 's', '', 'configmapss'])
      expect(matchResource(list, n), n).toBeUndefined();
  });

  it('the scheme finds registered kinds the same way, in their own group and version only', () => {
    const scheme = new Scheme();
    expect(scheme.find('v1', 'SECRETS')).toBe(CoreKinds.Secret);
    expect(scheme.find('v2', 'secrets')).toBeUndefined();
    expect(scheme.find('coordination.k8s.io/v1', 'LEASE')).toBe(CoreKinds.Lease);
    expect(scheme.find('v1', 'leases')).toBeUndefined();
    expect(splitApiVersion('apps/v1')).toEqual({ group: 'apps', version: 'v1' });
    expect(splitApiVersion('v1')).toEqual({ group: '', version: 'v1' });
  });
});
