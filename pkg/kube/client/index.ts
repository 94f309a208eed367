import type { KubeConfig } from '@kubernetes/client-node';
import type { InformerCache } from '../cache.ts';
import type { Scheme } from '../kinds.ts';
import { CachedClient } from './cached-client.ts';
import { HttpClient } from './http-client.ts';
import type { Client } from './types.ts';

export { CachedClient } from './cached-client.ts';
export { type FakeAction, FakeClient, type FakeClientOptions } from './fake.ts';
export * from './helpers.ts';
export { HttpClient, impersonationHeaders } from './http-client.ts';
export type * from './types.ts';

/**
 * The one way into the API server. With a cache, reads of the kinds it holds are served from it
 * (a CachedClient); without, every call is live.
 */
export function createClient(o: {
  kc: KubeConfig;
  scheme: Scheme;
  cache?: InformerCache;
  /** Who this client is, to the API server: `berth-controller`, `berth-api`… (see HttpClientOptions). */
  userAgent?: string;
}): Client {
  const live = new HttpClient({ kc: o.kc, scheme: o.scheme, userAgent: o.userAgent });
  return o.cache ? new CachedClient(live, o.cache) : live;
}
