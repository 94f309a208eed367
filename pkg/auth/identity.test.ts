import { describe, expect, it } from 'vitest';
import {
  acceptableIdentity,
  claimMappingFrom,
  DEFAULT_CLAIM_MAPPING,
  identityFromClaims,
} from './identity.ts';

describe('identityFromClaims (the user a JWT acts as)', () => {
  it('uses sub and groups by default, as kube-apiserver does', () => {
    expect(identityFromClaims({ sub: 'u1', groups: ['a', 'b'] }, DEFAULT_CLAIM_MAPPING)).toEqual({
      user: 'u1',
      groups: ['a', 'b'],
    });
    expect(identityFromClaims({ sub: 'u1' }, DEFAULT_CLAIM_MAPPING)).toEqual({ user: 'u1', groups: [] });
  });

  it('follows OIDC_USERNAME_CLAIM, OIDC_USERNAME_PREFIX and OIDC_GROUPS_CLAIM', () => {
    const m = claimMappingFrom({
      OIDC_USERNAME_CLAIM: 'email',
      OIDC_USERNAME_PREFIX: 'oidc:',
      OIDC_GROUPS_CLAIM: 'roles',
    });
    expect(identityFromClaims({ sub: 's', email: 'a@x.io', roles: 'admins', groups: ['g'] }, m)).toEqual({
      user: 'oidc:a@x.io',
      groups: ['admins'],
    });
    // An email the provider says is unverified names no one (kube-apiserver refuses it too).
    expect(identityFromClaims({ email: 'a@x.io', email_verified: false }, m)).toBeUndefined();
    expect(claimMappingFrom({})).toEqual(DEFAULT_CLAIM_MAPPING);
  });

  it('names no one without the claim, and never a reserved system: user or group', () => {
    expect(identityFromClaims({ name: 'x' }, DEFAULT_CLAIM_MAPPING)).toBeUndefined();
    expect(identityFromClaims({ sub: 42 }, DEFAULT_CLAIM_MAPPING)).toBeUndefined();
    expect(identityFromClaims({ sub: 'system:admin' }, DEFAULT_CLAIM_MAPPING)).toBeUndefined();
    expect(
      identityFromClaims({ sub: 'u', groups: ['system:masters', 'ok', 7] }, DEFAULT_CLAIM_MAPPING),
    ).toEqual({
      user: 'u',
      groups: ['ok'],
    });
    expect(acceptableIdentity({ user: 'system:serviceaccount:x:y' })).toBeUndefined();
  });
});
