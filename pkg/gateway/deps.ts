import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '../log/index.ts';
import type { ObjectCache } from './cache.ts';
import type { KubeWriter } from './kube-writer.ts';

/** Everything the API service's routes need; built once by the runner (`berth api` / `berth up`). */
export interface GatewayDeps {
  /** The API service's own identity (reads for the generic resource API, writes). */
  kc: KubeConfig;
  /** The namespace this instance serves (API keys, /compat/v1 targets, generic default). */
  namespace: string;
  cache: ObjectCache;
  writer: KubeWriter;
  brokerUrl?: string;
  logger: Logger;
  version: string;
}
