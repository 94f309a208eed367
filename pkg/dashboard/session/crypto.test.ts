import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Sealer } from './crypto.ts';

// A fresh random AUTH_SECRET per run: no key material is checked in.
const secret = randomBytes(32).toString('base64url');
const now = 1_800_000_000;

describe('Sealer', () => {
  it('round-trips claims until they expire, and not a second later', async () => {
    const s = new Sealer(secret, 'session');
    const token = await s.seal({ hello: 'world' }, now, 60);
    expect(token.split('.')).toHaveLength(5); // compact JWE
    expect(await s.open(token, now + 59)).toMatchObject({ hello: 'world', iat: now, exp: now + 60 });
    expect(await s.open(token, now + 60)).toBeUndefined();
  });

  it('does not open what another secret or purpose sealed, or anything tampered with', async () => {
    const token = await new Sealer(secret, 'signin').seal({ state: 'x' }, now, 60);
    expect(await new Sealer(secret, 'session').open(token, now)).toBeUndefined();
    expect(await new Sealer(`${secret}!`, 'signin').open(token, now)).toBeUndefined();
    const parts = token.split('.');
    parts[3] = `${parts[3]?.slice(0, -2)}AA`;
    expect(await new Sealer(secret, 'signin').open(parts.join('.'), now)).toBeUndefined();
    expect(await new Sealer(secret, 'signin').open('garbage', now)).toBeUndefined();
  });

  it('hides the claims: nothing of them is readable in the token', async () => {
    const token = await new Sealer(secret, 'session').seal({ accessToken: 'at-visible-value' }, now, 60);
    const decoded = token
      .split('.')
      .map((p) => Buffer.from(p, 'base64url').toString('latin1'))
      .join('');
    expect(decoded).not.toContain('at-visible-value');
  });
});
