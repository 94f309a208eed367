export { type BrokerAuthConfig, DEFAULT_WRITER, loadBrokerAuthConfig } from './config.ts';
export { type BrokerAuthOptions, brokerAuth, type Right, rightsOf } from './middleware.ts';
export {
  BROKER_AUDIENCE,
  lazyTokenReviewer,
  ReviewerUnavailable,
  type ReviewResult,
  type TokenReviewer,
} from './reviewer.ts';
