import { describe, expect, it } from 'vitest';
import { generateKeyPair } from './api-keys/format.ts';
import { readCredential } from './credentials.ts';

const { publicKey, secretKey } = generateKeyPair();
const pair = `${publicKey}:${secretKey}`;

describe('readCredential', () => {
  it('reads HTTP Basic, bearer-form keys, X-API-Key and JWTs', () => {
    expect(readCredential(`Basic ${Buffer.from(pair).toString('base64')}`, undefined)).toEqual({
      kind: 'api-key',
      form: 'basic',
      publicKey,
      secretKey,
    });
    expect(readCredential(`Bearer ${pair}`, undefined)).toMatchObject({ kind: 'api-key', form: 'bearer' });
    expect(readCredential(`bearer ${pair}`, undefined)).toMatchObject({ kind: 'api-key', form: 'bearer' });
    expect(readCredential(undefined, pair)).toMatchObject({ kind: 'api-key', form: 'x-api-key', secretKey });
    expect(readCredential('Bearer eyJhbGciOiJSUzI1NiJ9.e30.c2ln', undefined)).toEqual({
      kind: 'jwt',
      token: 'eyJhbGciOiJSUzI1NiJ9.e30.c2ln',
    });
    expect(readCredential(undefined, undefined)).toEqual({ kind: 'none' });
  });

  it('reports malformed credentials instead of guessing', () => {
    expect(readCredential(`Basic ${Buffer.from('user:pass').toString('base64')}`, undefined).kind).toBe(
      'malformed',
    );
    expect(readCredential(`Bearer ${publicKey}`, undefined).kind).toBe('malformed');
    expect(readCredential('Bearer ', undefined).kind).toBe('malformed');
    expect(readCredential('Digest abc', undefined).kind).toBe('malformed');
    expect(readCredential(undefined, secretKey).kind).toBe('malformed');
  });

  it('prefers Authorization over X-API-Key and never falls back from a bad Authorization', () => {
    expect(readCredential('Basic !!!', pair).kind).toBe('malformed');
  });
});
