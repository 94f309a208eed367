import type { PgBackend } from '../pg/index.ts';
import { MemoryIdempotencyStore } from './memory-store.ts';
import type { IdempotencyStore } from './types.ts';

/**
 * Idempotency keys of the purges and memory writes: in PostgreSQL when a domain is (the shared
 * backend), so every replica shares them; else in this process's memory.
 */
export async function openIdempotency(pg: PgBackend | undefined): Promise<IdempotencyStore> {
  // Imported only when configured (docs/broker.md "Footprint").
  return pg ? new (await import('./pg-store.ts')).PgIdempotencyStore(pg) : new MemoryIdempotencyStore();
}
