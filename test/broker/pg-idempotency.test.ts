import { afterAll, describe, expect, it } from 'vitest';
import { PgIdempotencyStore } from '../../pkg/broker/idempotency/pg-store.ts';
import { idempotencyStoreContract } from '../../pkg/broker/idempotency/store.contract.ts';
import { openPgBackend, type PgBackend } from '../../pkg/broker/pg/index.ts';
import { createLogger } from '../../pkg/log/index.ts';
import { TestDatabases } from './pg-harness.ts';

const dbs = new TestDatabases();
const backends: PgBackend[] = [];
afterAll(async () => {
  await Promise.all(backends.map((b) => b.close()));
  await dbs.dropAll();
});
const quiet = createLogger({ level: 'silent' });

async function backend(url: string): Promise<PgBackend> {
  const b = await openPgBackend({ url, logger: quiet, reapIntervalMs: 3_600_000 });
  backends.push(b);
  return b;
}

idempotencyStoreContract(
  'postgres',
  async (claimMs) => new PgIdempotencyStore(await backend(await dbs.fresh()), { claimMs }),
);

describe('PostgreSQL idempotency keys', () => {
  it('are shared by replicas: a key finished on A is replayed on B, a claim on A makes B wait', async () => {
    const url = await dbs.fresh();
    const a = new PgIdempotencyStore(await backend(url));
    const b = new PgIdempotencyStore(await backend(url));
    const r = { status: 200, body: '{"query_id":"q","deleted":4}', contentType: 'application/json' };
    expect(await a.begin('DELETE /events/q purge-1')).toEqual({ state: 'new' });
    expect(await b.begin('DELETE /events/q purge-1')).toEqual({ state: 'busy' });
    await a.finish('DELETE /events/q purge-1', r);
    expect(await b.begin('DELETE /events/q purge-1')).toEqual({ state: 'done', response: r });
  });
});
