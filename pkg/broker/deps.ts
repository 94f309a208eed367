import type { Env, MiddlewareHandler } from 'hono';
import type { SseHub } from '../http/index.ts';
import type { Logger } from '../log/index.ts';
import type { ChunkStore } from './chunks/types.ts';
import type { BrokerConfig } from './config.ts';
import type { WatchDeps } from './core/watch-route.ts';
import type { EventStore } from './events/types.ts';
import type { IdempotencyStore } from './idempotency/types.ts';
import type { MessageStore } from './messages/types.ts';
import type { BrokerMetrics } from './metrics.ts';
import type { SessionStore } from './sessions/types.ts';
import type { BackendHealth } from './stores.ts';
import type { OtlpDecoder } from './traces/decoder.ts';
import type { TraceStore } from './traces/types.ts';

export interface BrokerStores {
  messages: MessageStore;
  events: EventStore;
  chunks: ChunkStore;
  traces: TraceStore;
  sessions: SessionStore;
}

/** What route modules get: config, logger, the process's SSE hub and the stores. */
export interface BrokerDeps {
  config: BrokerConfig;
  logger: Logger;
  hub: SseHub;
  stores: BrokerStores;
  /** False while starting or shutting down (readiness). */
  ready?: () => boolean;
  /** True once a shutdown began: readiness is false and new SSE watches are refused. */
  draining?: () => boolean;
  /** `/metrics` and request metrics; absent in apps built without a server (tests). */
  metrics?: BrokerMetrics;
  /** Own server spans (OTEL_* set). */
  tracing?: MiddlewareHandler<Env>;
  /** Idempotency keys of the purges (memory when absent). */
  idempotency?: IdempotencyStore;
  /** The durable storage backends and whether they answer (readiness). */
  health?: () => Promise<BackendHealth[]>;
  /** Authenticates and authorises callers (BROKER_AUTH=serviceaccount); none: every caller is served. */
  auth?: MiddlewareHandler<Env>;
  /** Decodes OTLP exports (on a thread of its own); inline when absent. */
  otlpDecoder?: OtlpDecoder;
}

export function watchDeps(d: BrokerDeps): WatchDeps {
  return { hub: d.hub, logger: d.logger, maxBufferedBytes: d.config.sse.maxBufferedBytes };
}
