export { type LinkedSignal, linkSignals } from './abort/index.ts';
export { type AccessLogOptions, accessLog } from './access-log/index.ts';
export { type BodyLimitVariables, bodyLimit, bodyTooLarge, requestBodyChunks } from './body-limit/index.ts';
export { TickCoalescer } from './coalesce/index.ts';
export {
  type CodeWithStatus,
  ERROR_CODES,
  type ErrorBody,
  type ErrorCode,
  type ErrorHandlerOptions,
  type ErrorMapper,
  type ErrorRenderer,
  errorBody,
  errorHandler,
  HttpError,
  type HttpErrorOptions,
  httpError,
  notFoundHandler,
  relayedError,
  renderEnvelope,
  type StatusOf,
  statusOf,
  validationError,
  validationHook,
} from './errors/index.ts';
export { type HealthOptions, mountHealthRoutes, type Readiness } from './health/index.ts';
export { answerProbes, type ProbeResponder } from './health/socket.ts';
export { releaseStartupGarbage } from './heap/index.ts';
export {
  exceedsJsonDepth,
  type JsonDepthVariables,
  jsonDepthLimit,
  jsonStringEnd,
  jsonTooDeep,
  MAX_JSON_DEPTH,
  parseJson,
  parseJsonBody,
} from './json-body/index.ts';
export { Limiter } from './limiter/index.ts';
export { alreadySent } from './listen/adapter.ts';
export {
  isLoopbackHost,
  type Listening,
  type ListenOptions,
  LOOPBACK_HOST,
  listenHttp,
  urlHost,
} from './listen/index.ts';
export { mediaTypeOf, requireMediaType } from './media-type/index.ts';
export {
  defaultMetricsRegistry,
  exposition,
  type HttpMetricsOptions,
  httpMetrics,
  metricsHandler,
  mountMetricsRoute,
  PROBE_PATHS,
  type RequestInfo,
  routeLabel,
} from './metrics/index.ts';
export {
  type AnyOpenAPIHono,
  errorEnvelopeSchema,
  issuesSchema,
  jsonBodyRoute,
  mountDocsPage,
  route,
} from './openapi/index.ts';
export { REQUEST_ID_HEADER, type RequestIdVariables, requestId, requestIdOf } from './request-id/index.ts';
export { DEFAULT_SHUTDOWN_GRACE_SECONDS, Drain, shutdownGraceSeconds } from './shutdown/index.ts';
export {
  CONNECTED_FRAME,
  DONE_FRAME,
  eventFrame,
  HEARTBEAT_FRAME,
  lastEventId,
  SSE_HEADERS,
  shutdownFrame,
} from './sse/frame.ts';
export { type HubItem, SseHub, Subscription } from './sse/hub.ts';
export { openSse, SseSink } from './sse/sink.ts';
export { type ReplayPage, watch } from './sse/watch.ts';
export { optimiseHotPathsSooner } from './tiering/index.ts';
