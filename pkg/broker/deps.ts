import type { Env, MiddlewareHandler } from 'hono';
import type { Registry } from 'prom-client';
import type { ChunkStore } from './chunks/types.ts';
import type { BackendHealth, RouteDeps } from './core/domain.ts';
import type { EventStore } from './events/types.ts';
import type { IdempotencyStore } from './idempotency/types.ts';
import type { MessageStore } from './messages/types.ts';
import type { SessionStore } from './sessions/types.ts';
import type { OtlpDecoder } from './traces/decoder.ts';
import type { TraceStore } from './traces/types.ts';

/** The store of each domain (stores.ts opens them). */
export interface BrokerStores {
  messages: MessageStore;
  events: EventStore;
  chunks: ChunkStore;
  traces: TraceStore;
  sessions: SessionStore;
}

/**
 * What the broker's app gets: what every domain's routes get (config, logger, the process's SSE
 * hub), over all the stores, and the server's parts.
 */
export interface BrokerDeps extends RouteDeps<BrokerStores> {
  /** False while starting or shutting down (readiness). */
  ready?: () => boolean;
  /** True once a shutdown began: readiness is false and new SSE watches are refused. */
  draining?: () => boolean;
  /** `/metrics` and request metrics (metrics.ts); absent in apps built without a server (tests). */
  metrics?: { middleware: MiddlewareHandler<Env>; registry: Registry };
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
