export { bodyLimit, bodyTooLarge } from './body-limit/index.ts';
export {
  type ErrorBody,
  type ErrorHandlerOptions,
  type ErrorMapper,
  type ErrorRenderer,
  errorBody,
  errorHandler,
  HttpError,
  notFoundHandler,
  renderEnvelope,
  sendError,
  validationHook,
} from './errors/index.ts';
export { mediaTypeOf, requireMediaType } from './media-type/index.ts';
export {
  type AnyOpenAPIHono,
  errorEnvelopeSchema,
  issuesSchema,
  jsonBodyRoute,
  mountDocsPage,
  route,
} from './openapi/index.ts';
export { REQUEST_ID_HEADER, requestId, requestIdOf } from './request-id/index.ts';
export {
  CONNECTED_FRAME,
  DONE_FRAME,
  eventFrame,
  HEARTBEAT_FRAME,
  lastEventId,
  SSE_HEADERS,
} from './sse/frame.ts';
export { type HubItem, SseHub, Subscription } from './sse/hub.ts';
export { openSse, SseSink } from './sse/sink.ts';
export { type ReplayPage, watch } from './sse/watch.ts';
