export {
  type HttpMetricsOptions,
  httpMetrics,
  PROBE_PATHS,
  type RequestInfo,
  routeLabel,
} from './middleware.ts';
export { defaultMetricsRegistry, exposition, metricsHandler, mountMetricsRoute } from './registry.ts';
