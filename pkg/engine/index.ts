export type { QueryEngine, QueryOutcome, ResourceLookup, RunContext } from './contract.ts';
export { parseDuration } from './duration.ts';
export {
  type BerthQueryEngine,
  createQueryEngine,
  type EngineStats,
  type QueryEngineOptions,
} from './engine.ts';
export type { EventQueueStats } from './event-queue.ts';
export { modelUrlProblem } from './http.ts';
export { DEFAULT_LIMITS, LIMIT_ENV, type UpstreamLimits } from './upstream.ts';
