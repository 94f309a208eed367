import { hkdfSync } from 'node:crypto';
import { EncryptJWT, type JWTPayload, errors as joseErrors, jwtDecrypt } from 'jose';

/**
 * Encrypted JWTs (JWE, `dir` + `A256GCM`) under a key derived from AUTH_SECRET with HKDF-SHA256.
 * Each purpose (the session, the pending sign-in) gets its own key through the HKDF salt, so a
 * cookie of one kind can never be decrypted as another. No server-side store: the cookie is the state.
 */
export class Sealer {
  readonly #key: Uint8Array;
  readonly #purpose: string;

  constructor(secret: string, purpose: string) {
    this.#purpose = purpose;
    this.#key = new Uint8Array(hkdfSync('sha256', secret, purpose, `Berth dashboard ${purpose} key`, 32));
  }

  /** Seals `claims`, valid from `nowSec` for `ttlSec`. */
  seal(claims: JWTPayload, nowSec: number, ttlSec: number): Promise<string> {
    return new EncryptJWT(claims)
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', cty: this.#purpose })
      .setIssuedAt(nowSec)
      .setExpirationTime(nowSec + ttlSec)
      .encrypt(this.#key);
  }

  /**
   * The claims, or undefined when the value is not ours, was tampered with, or has expired at
   * `nowSec` (no clock tolerance: the sliding TTL is the inactivity limit, exactly).
   */
  async open<T extends JWTPayload>(token: string, nowSec: number): Promise<T | undefined> {
    try {
      const { payload, protectedHeader } = await jwtDecrypt(token, this.#key, {
        currentDate: new Date(nowSec * 1000),
        keyManagementAlgorithms: ['dir'],
        contentEncryptionAlgorithms: ['A256GCM'],
        requiredClaims: ['exp', 'iat'],
      });
      if (protectedHeader.cty !== this.#purpose) return undefined;
      return payload as T;
    } catch (err) {
      if (err instanceof joseErrors.JOSEError || err instanceof TypeError) return undefined;
      throw err;
    }
  }
}
