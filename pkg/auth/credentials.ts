import { parseKeyPair } from './api-keys/format.ts';

/** What a request presented, before verification. */
export type Credential =
  | { kind: 'none' }
  | { kind: 'api-key'; form: 'basic' | 'x-api-key' | 'bearer'; publicKey: string; secretKey: string }
  | { kind: 'jwt'; token: string }
  | { kind: 'malformed'; scheme: 'basic' | 'bearer' | 'x-api-key' | 'other'; message: string };

/**
 * Reads the credential of a request. `Authorization` wins over `X-API-Key`; a malformed
 * `Authorization` is an error, never a reason to fall back to another header.
 *
 * - `Authorization: Basic base64(pk-svc-…:sk-svc-…)`
 * - `Authorization: Bearer pk-svc-…:sk-svc-…` — the API key in bearer form, for OpenAI SDKs that can
 *   only send `Bearer <apiKey>` (set `apiKey` to `"pk-svc-…:sk-svc-…"`)
 * - `Authorization: Bearer <JWT>`
 * - `X-API-Key: pk-svc-…:sk-svc-…`
 */
export function readCredential(authorization: string | undefined, xApiKey: string | undefined): Credential {
  if (authorization !== undefined) {
    const space = authorization.indexOf(' ');
    const scheme = (space < 0 ? authorization : authorization.slice(0, space)).toLowerCase();
    const value = space < 0 ? '' : authorization.slice(space + 1).trim();
    if (scheme === 'basic') {
      const pair = parseKeyPair(Buffer.from(value, 'base64').toString('utf8'));
      return pair
        ? { kind: 'api-key', form: 'basic', ...pair }
        : { kind: 'malformed', scheme: 'basic', message: 'HTTP Basic credentials must be pk-svc-…:sk-svc-…' };
    }
    if (scheme === 'bearer') {
      if (!value) return { kind: 'malformed', scheme: 'bearer', message: 'empty bearer token' };
      if (value.startsWith('pk-svc-')) {
        const pair = parseKeyPair(value);
        return pair
          ? { kind: 'api-key', form: 'bearer', ...pair }
          : {
              kind: 'malformed',
              scheme: 'bearer',
              message: 'an API key in bearer form must be pk-svc-…:sk-svc-…',
            };
      }
      return { kind: 'jwt', token: value };
    }
    return { kind: 'malformed', scheme: 'other', message: 'unsupported Authorization scheme' };
  }
  if (xApiKey !== undefined) {
    const pair = parseKeyPair(xApiKey.trim());
    return pair
      ? { kind: 'api-key', form: 'x-api-key', ...pair }
      : { kind: 'malformed', scheme: 'x-api-key', message: 'X-API-Key must be pk-svc-…:sk-svc-…' };
  }
  return { kind: 'none' };
}
