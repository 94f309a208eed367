/** The per-source error codes of the spec's items aggregator. */
export const SOURCE_ERROR_CODES = [
  'fetch_timeout',
  'aggregator_timeout',
  'http_error',
  'parse_error',
  'network_error',
  'auth_error',
] as const;
export type SourceErrorCode = (typeof SOURCE_ERROR_CODES)[number];

/**
 * Why a manifest could not be had. Messages are written here, never copied from what the source
 * sent (a hostile source could echo the Authorization header back in its body), so they cannot
 * carry the credential.
 */
export class FetchFailure extends Error {
  readonly code: SourceErrorCode;

  constructor(code: SourceErrorCode, message: string) {
    super(message);
    this.name = 'FetchFailure';
    this.code = code;
  }
}

// The guard's refusal is shared with every outbound client (pkg/http/outbound).
export { AddressRefused, refusalIn } from '../../http/outbound/index.ts';
