import type { InformerCache } from '../kube/cache.ts';
import type { Client } from '../kube/client/types.ts';
import type { Logger } from '../log/index.ts';
import type { ApiMetrics } from './metrics.ts';

/** Everything the API service's routes need; built once by the runner (`berth api` / `berth up`). */
export interface GatewayDeps {
  /**
   * The API service's own identity: reads of the namespaces `cache` watches come from it, other
   * reads and every write go to the API server.
   */
  client: Client;
  /** The informer cache behind `client`: read-your-writes and watch-driven waits. */
  cache: InformerCache;
  /** The namespace this instance serves (API keys, /compat/v1 targets, generic default). */
  namespace: string;
  /**
   * Set when the instance was installed for one namespace (NAMESPACE / --namespace): requests for
   * any other are refused before reaching the API server. Unset: it serves what its identity may.
   */
  confinedTo?: string;
  /** The API server's URL, as /v1/context reports it. */
  cluster?: string;
  brokerUrl?: string;
  logger: Logger;
  version: string;
  /** Chat completion metrics (absent in apps built without a server). */
  metrics?: ApiMetrics;
  /**
   * Aborted when the shutdown grace period is over: chat streams still open end with a final
   * `shutting_down` error frame, waits answer 503.
   */
  shutdown?: AbortSignal;
}
