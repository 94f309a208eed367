import { describe, expect, it } from 'vitest';
import {
  acceptableIdentity,
  claimMappingFrom,
  DEFAULT_CLAIM_MAPPING,
  identityFromClaims,
} from './identity.ts';

describe('identityFromClaims (the user a JWT acts as)', () => {
  it('uses sub and groups by default, the user under the oidc: prefix', () => {
    expect(identityFromClaims({ sub: 'u1', groups: ['a', 'b'] }, DEFAULT_CLAIM_MAPPING)).toEqual({
      user: 'oidc:u1',
      groups: ['a', 'b'],
    });
    expect(identityFromClaims({ sub: 'u1' }, DEFAULT_CLAIM_MAPPING)).toEqual({ user: 'oidc:u1', groups: [] });
  });

  it('never lets a token name a Kubernetes user by default: kubernetes-admin, a node, system:…', () => {
    const m = claimMappingFrom({});
    for (const sub of ['kubernetes-admin', 'admin', 'system:node:n1', 'system:admin'])
      expect(identityFromClaims({ sub }, m)?.user).toBe(`oidc:${sub}`);
  });

  it('reads OIDC_USERNAME_PREFIX: unset or blank → oidc:, "-" → none (deliberately), else as written', () => {
    expect(claimMappingFrom({}).usernamePrefix).toBe('oidc:');
    expect(claimMappingFrom({ OIDC_USERNAME_PREFIX: '' }).usernamePrefix).toBe('oidc:');
    expect(claimMappingFrom({ OIDC_USERNAME_PREFIX: '  ' }).usernamePrefix).toBe('oidc:');
    expect(claimMappingFrom({ OIDC_USERNAME_PREFIX: '-' }).usernamePrefix).toBe('');
    expect(claimMappingFrom({ OIDC_USERNAME_PREFIX: 'corp#' }).usernamePrefix).toBe('corp#');
    const none = claimMappingFrom({ OIDC_USERNAME_PREFIX: '-' });
    expect(identityFromClaims({ sub: 'u1' }, none)).toEqual({ user: 'u1', groups: [] });
    // Without a prefix, the reserved system: names are still never impersonated.
    expect(identityFromClaims({ sub: 'system:admin' }, none)).toBeUndefined();
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
    expect(
      identityFromClaims({ sub: 'u', groups: ['system:masters', 'ok', 7] }, DEFAULT_CLAIM_MAPPING),
    ).toEqual({
      user: 'oidc:u',
      groups: ['ok'],
    });
    expect(acceptableIdentity({ user: 'system:serviceaccount:x:y' })).toBeUndefined();
  });
});
