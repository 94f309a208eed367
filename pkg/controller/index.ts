export { resolveAddress } from './address.ts';
export {
  type EvaluateRequest,
  type EvaluateResult,
  evaluateResultSchema,
  evaluateUrl,
  type QueryContext,
} from './evaluation/call.ts';
export type { EvaluationReconcilerOptions } from './evaluation/reconciler.ts';
export { CacheLookup } from './lookup.ts';
export {
  type LeaderElectionConfig,
  type RunningController,
  type StartControllerOptions,
  startController,
} from './manager.ts';
export {
  applySeed,
  parseSeed,
  SEEDER_FIELD_MANAGER,
  type SeedEntry,
  type SeedResult,
} from './marketplace/seed.ts';
export type { SeedSource } from './marketplace/seeder.ts';
export { resolveMemory } from './memory.ts';
export { ORPHANED_MESSAGE, type QueryReconcilerOptions } from './query/reconciler.ts';
