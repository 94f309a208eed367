import { FetchFailure } from './fetch-failure.ts';
import type { GuardedFetcher } from './guarded-fetch.ts';
import { type ManifestItem, parseManifest } from './manifest.ts';

export type AuthScheme = 'bearer' | 'basic';

/** A credential in memory for one fetch; it lives no longer than the request that read it. */
export interface Credential {
  scheme: AuthScheme;
  value: string;
}

/**
 * The header of rule 4: bearer → `Bearer <value>`; basic → `Basic base64(":" + value)`, an empty
 * user name and the value as the password.
 */
export function authorizationHeader(c: Credential): string {
  return c.scheme === 'bearer'
    ? `Bearer ${c.value}`
    : `Basic ${Buffer.from(`:${c.value}`, 'utf8').toString('base64')}`;
}

const MAX_REDIRECTS = 5;

/**
 * Fetches and parses one manifest (the body is read up to the fetcher's `maxBytes`, a larger one
 * is a parse_error; `bytes` is its size, what a cache keeping the items counts). A public source may redirect (each hop through the guard
 * again, https only); a source with a credential may not: a redirect is refused rather than
 * followed, so the credential is sent to the configured URL only, never to another host.
 */
export async function fetchManifest(
  fetcher: GuardedFetcher,
  url: string,
  credential: Credential | undefined,
  signal: AbortSignal,
): Promise<{ items: ManifestItem[]; bytes: number }> {
  let target = new URL(url);
  const headers: Record<string, string> = { accept: 'application/json' };
  if (credential) headers.authorization = authorizationHeader(credential);
  for (let hop = 0; ; hop++) {
    const answer = await fetcher.get(target, headers, signal);
    if (answer.status >= 300 && answer.status < 400 && answer.location !== undefined) {
      if (credential)
        throw new FetchFailure(
          'http_error',
          `the source answered a redirect (HTTP ${answer.status}); redirects are not followed for a source with a credential`,
        );
      if (hop >= MAX_REDIRECTS) throw new FetchFailure('http_error', `more than ${MAX_REDIRECTS} redirects`);
      let next: URL;
      try {
        next = new URL(answer.location, target);
      } catch {
        throw new FetchFailure(
          'http_error',
          `the source redirected to an invalid URL (HTTP ${answer.status})`,
        );
      }
      if (next.protocol !== 'https:')
        throw new FetchFailure(
          'network_error',
          `the source redirected to a non-https URL (${next.protocol})`,
        );
      target = next;
      continue;
    }
    if (answer.status === 401 || answer.status === 403)
      throw new FetchFailure(
        'auth_error',
        credential
          ? `the source rejected the credential (HTTP ${answer.status})`
          : `the source requires a credential (HTTP ${answer.status})`,
      );
    if (answer.status < 200 || answer.status >= 300)
      throw new FetchFailure('http_error', `the source answered HTTP ${answer.status}`);
    return { items: parseManifest(answer.body), bytes: answer.body.length };
  }
}
